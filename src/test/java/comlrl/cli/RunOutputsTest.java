package comlrl.cli;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.checkpoint.Checkpoints;
import comlrl.logging.TestSinks;
import comlrl.model.io.TestDisks;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a {@code train} run writes either succeeds or fails the run (non-zero exit, the path in the
 * message) with its last checkpoint kept; what a killed run left is cleaned up by the next one; an
 * evaluation that scored nothing is an error, never a NaN result.
 */
class RunOutputsTest {
    private static List<String> names(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    /** The tiny run of {@link CliTest#tinyRunConfig} into {@code out}, checkpointed into {@code ck}. */
    private static Path checkpointedRun(Path tmp, String... extraLines) throws Exception {
        String[] lines = new String[extraLines.length + 1];
        lines[0] = "checkpoint: {dir: ck}";
        System.arraycopy(extraLines, 0, lines, 1, extraLines.length);
        return CliTest.tinyRunConfig(tmp, "out", lines);
    }

    @Test
    void aFullDiskDuringTheFinalSaveFailsTheRunNamingThePathAndKeepsTheCheckpoint(@TempDir Path tmp) throws Exception {
        Path cfg = checkpointedRun(tmp);
        Path out = tmp.resolve("out");
        CliTest.Result r;
        try (TestDisks.Restore full = TestDisks.fullUnder(out)) { // the checkpoint directory beside it has room
            r = CliTest.run("train", cfg.toString());
        }
        assertThat(r.code()).as(r.err()).isEqualTo(1);
        assertThat(r.err()).contains("Cannot save the model to " + out.resolve("agent_0"))
                .contains("No space left on device");
        assertThat(r.out()).as("no results printed as if it had succeeded").doesNotContain("run directory:");
        Path ck = tmp.resolve("ck");
        assertThat(Checkpoints.latest(ck)).contains(ck.resolve("checkpoint-1"));
        assertThat(Checkpoints.readMetadata(ck.resolve("checkpoint-1")).get("epochs_completed")).isEqualTo(1);
        assertThat(names(out)).as("nothing half-written left").containsExactly("config.json", "eval_samples.jsonl", "metrics.jsonl", "splits.json");
        // the kept checkpoint resumes
        CliTest.Result again = CliTest.run("train", cfg.toString(), "--resume", ck.toString());
        assertThat(again.code()).as(again.err()).isZero();
        assertThat(out.resolve("agent_0/model.safetensors")).isRegularFile();
    }

    @Test
    void aTensorBoardFileThatCannotBeWrittenFailsTheRunAtTheEndNamingTheFile(@TempDir Path tmp) throws Exception {
        Path cfg = checkpointedRun(tmp, "tensorboard: true");
        Path out = tmp.resolve("out");
        CliTest.Result r;
        try (TestDisks.Restore full = TestSinks.tensorBoardFullAfter(TestSinks.tensorBoardHeaderBytes())) {
            r = CliTest.run("train", cfg.toString()); // the disk fills at the first logged event
        }
        assertThat(r.code()).as(r.err()).isEqualTo(1);
        Matcher file = Pattern.compile("Cannot write TensorBoard events to (\\S+events\\.out\\.tfevents\\.\\S+):")
                .matcher(r.err());
        assertThat(file.find()).as(r.err()).isTrue();
        assertThat(Path.of(file.group(1)).getParent()).isEqualTo(out);
        assertThat(r.err()).contains("No space left on device");
        assertThat(r.err().split(Pattern.quote("TensorBoard: cannot write " + file.group(1)), -1))
                .as("reported once while training").hasSize(2);
        // training went on to its end: the checkpoint, the final save and the report are all written
        assertThat(Checkpoints.latest(tmp.resolve("ck"))).contains(tmp.resolve("ck/checkpoint-1"));
        assertThat(out.resolve("agent_1/model.safetensors")).isRegularFile();
        assertThat(out.resolve("report.html")).isRegularFile();
        assertThat(r.out()).contains("eval reward after training");
    }

    @Test
    void whatAKilledRunLeftIsCleanedUpWhenTheNextOneStarts(@TempDir Path tmp) throws Exception {
        Path cfg = checkpointedRun(tmp);
        CliTest.Result first = CliTest.run("train", cfg.toString(), "--set", "num_train_epochs=2");
        assertThat(first.code()).as(first.err()).isZero();
        Path out = tmp.resolve("out");
        Path ck = tmp.resolve("ck");
        // a run resumed from checkpoint-1 and killed (kill -9) while rewriting checkpoint-2, between its two
        // renames (checkpoint-2 renamed away, its replacement not yet in place; latest names checkpoint-2),
        // and during its final save and report
        long dead = TestDisks.deadPid();
        Files.move(ck.resolve("checkpoint-2"), ck.resolve(".checkpoint-2.old-" + dead));
        Files.createDirectories(ck.resolve(".checkpoint-2.tmp-" + dead + "/agent_0"));
        Files.writeString(ck.resolve(".latest.tmp-" + dead), "checkp");
        Files.createDirectories(out.resolve(".agent_0.saving-" + dead + "-x7"));
        Files.writeString(out.resolve(".report.html.tmp-" + dead), "<html");
        Files.writeString(out.resolve("notes.tmp"), "the user's");

        CliTest.Result resumed = CliTest.run("train", cfg.toString(), "--set", "num_train_epochs=2", "--resume",
                ck.toString());
        assertThat(resumed.code()).as(resumed.err()).isZero();
        assertThat(resumed.err()).contains("Cleaned up after an interrupted run").contains("checkpoint-2 (restored)")
                .contains("Nothing to train: 2 of num_train_epochs=2");
        assertThat(names(ck)).containsExactly("checkpoint-1", "checkpoint-2", "latest");
        assertThat(names(out)).doesNotContain(".agent_0.saving-" + dead + "-x7", ".report.html.tmp-" + dead)
                .contains("notes.tmp", "agent_0", "report.html");
    }

    @Test
    void aLatestPointerLeadingOutOfTheCheckpointDirectoryIsRefused(@TempDir Path tmp) throws Exception {
        Path ck = Files.createDirectories(tmp.resolve("ck"));
        Files.createDirectories(tmp.resolve("elsewhere/checkpoint-1"));
        Files.writeString(ck.resolve("latest"), "../elsewhere/checkpoint-1\n");
        CliTest.Result r = CliTest.run("train", checkpointedRun(tmp).toString(), "--resume", ck.toString());
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.err()).contains(ck.resolve("latest").toString()).contains("'../elsewhere/checkpoint-1'");
    }

    @Test
    void anEvaluationThatScoresNoItemsIsAnErrorNotANaNReward(@TempDir Path tmp) throws Exception {
        Path tasks = tmp.resolve("tasks.jsonl");
        Files.writeString(tasks, "{\"prompt\": \"a\", \"target_min\": 2, \"target_max\": 3}\n");
        Files.writeString(tmp.resolve("none.jsonl"), "");
        Path cfg = tmp.resolve("run.yaml");
        Files.writeString(cfg, String.join("\n",
                "agent_model: builtin:tiny",
                "num_agents: 2",
                "dataset: {train: tasks.jsonl, eval: none.jsonl}",
                "formatters: ['Short: {prompt}', 'Long: {prompt}']",
                "reward: {type: length_ratio}",
                "args: {num_turns: 1, num_train_epochs: 1, num_generations: 2, max_new_tokens: 4, eval_num_samples: 1}",
                "output_dir: out", ""));
        CliTest.Result r = CliTest.run("train", cfg.toString());
        assertThat(r.code()).as(r.out() + r.err()).isEqualTo(1);
        assertThat(r.out()).doesNotContain("NaN").doesNotContain("eval reward");
        assertThat(r.err()).doesNotContain("NaN (");
    }
}
