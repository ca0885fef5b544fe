package comlrl.cli;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.checkpoint.Checkpoints;
import comlrl.trainers.ResumeCheck;
import comlrl.trainers.TinyAgents;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code train --resume} of the preference-learning algorithms through the command line: a run
 * with an evaluation set, resumed from one of its mid-run checkpoints, ends as the uninterrupted run
 * did (final checkpoint byte for byte, the metrics rows after the checkpoint). The resumed run does
 * not evaluate before training: that would draw sampling seeds the uninterrupted run did not, and
 * log rows it did not.
 */
class PreferenceResumeCliTest {
    @TempDir
    static Path models;
    /** A Qwen2 agent and a Llama agent of another vocabulary size. */
    static List<Path> team;

    @BeforeAll
    static void writeAgents() {
        team = TinyAgents.qwenAndLlama(models, 21);
    }

    /**
     * @param sameOutput whether the resumed run is given the uninterrupted run's output directory
     *        (its outputs then go to {@code resume-checkpoint-N/} there, and the history comparator
     *        reads the policies saved there), else a fresh one
     */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "madpo      | num_train_epochs: 4, train_batch_size: 2                                | 2 | false",
        "marlhf     | rl_algorithm: iac, num_generations: 1, num_train_epochs: 4, reward_model_device: cpu | 2 | false",
        "madpo_iter | num_iterations: 4, num_train_epochs: 1, train_batch_size: 2, comparator_policy: history | 2 | true"})
    void aResumedRunEndsAsTheUninterruptedOne(String algorithm, String args, int checkpoint, boolean sameOutput,
            @TempDir Path tmp) throws Exception {
        Path cfg = tmp.resolve("run.yaml");
        Files.writeString(cfg, String.join("\n",
                "algorithm: " + algorithm,
                "agents: ['" + team.get(0) + "', '" + team.get(1) + "']",
                "dataset: {train: 'builtin:length-ratio', test_size: 0.5, split_seed: 42}",
                "formatters: ['Short: {prompt}', 'Long: {prompt}']",
                "reward: {type: length_ratio}",
                "args: {" + args + ", preference_num_candidates: 4, preference_pairs_per_sample: 2, max_new_tokens: 6,",
                "       eval_interval: 2, eval_num_samples: 2, logging_steps: 1}",
                "save_model: false",
                "report: false",
                "output_dir: straight",
                "checkpoint: {dir: straight-checkpoints, interval: 1}", ""));
        CliTest.Result straight = CliTest.run("train", cfg.toString());
        assertThat(straight.code()).as(straight.err()).isZero();
        Path from = tmp.resolve("straight-checkpoints/checkpoint-" + checkpoint);
        Path output = sameOutput ? tmp.resolve("straight") : tmp.resolve("resumed");
        CliTest.Result resumed = CliTest.run("train", cfg.toString(), "--resume", from.toString(), "--output-dir",
                output.toString(), "--set", "checkpoint.dir=" + tmp.resolve("resumed-checkpoints"));
        assertThat(resumed.code()).as(resumed.err()).isZero();

        Path straightLast = Checkpoints.latest(tmp.resolve("straight-checkpoints")).orElseThrow();
        Path resumedLast = Checkpoints.latest(tmp.resolve("resumed-checkpoints")).orElseThrow();
        assertThat(resumedLast.getFileName()).isEqualTo(straightLast.getFileName());
        ResumeCheck.assertSameCheckpoint(resumedLast, straightLast);
        Path resumedMetrics = (sameOutput ? output.resolve("resume-checkpoint-" + checkpoint) : output)
                .resolve("metrics.jsonl");
        long lines = ((Number) Checkpoints.readMetadata(from).get("metrics_lines")).longValue();
        ResumeCheck.assertRowsAfter(tmp.resolve("straight/metrics.jsonl"), lines, resumedMetrics);
        assertThat(resumed.out()).doesNotContain("eval reward before training").contains("eval reward after training");
    }
}
