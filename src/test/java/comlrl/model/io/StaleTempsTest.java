package comlrl.model.io;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What killed writers leave is cleaned up by the next run: temporary names of dead processes are
 * removed, a previous directory renamed away is renamed back when its replacement never arrived,
 * and nothing of a live process or of another kind is touched.
 */
class StaleTempsTest {
    private static List<String> names(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void leftoversOfDeadProcessesGoAndAPreviousDirectoryWithoutReplacementComesBack(@TempDir Path dir) throws Exception {
        long dead = TestDisks.deadPid();
        long live = ProcessHandle.current().pid();
        // a killed checkpoint writer: its half-written directory, its latest pointer, and (killed between
        // its two renames) checkpoint-2 renamed away with no checkpoint-2 in its place
        Files.createDirectories(dir.resolve(".checkpoint-3.tmp-" + dead + "/agent_0"));
        Files.writeString(dir.resolve(".checkpoint-3.tmp-" + dead + "/agent_0/.model.safetensors.x1.tmp"), "half");
        Files.writeString(dir.resolve(".latest.tmp-" + dead), "checkpoint-3\n");
        Files.createDirectories(dir.resolve(".checkpoint-2.old-" + dead));
        Files.writeString(dir.resolve(".checkpoint-2.old-" + dead + "/metadata.json"), "{}");
        // a killed model save: its staging directory, and an old copy whose replacement did arrive
        Files.createDirectories(dir.resolve(".agent_0.saving-" + dead + "-k3x9"));
        Files.createDirectories(dir.resolve("agent_1"));
        Files.createDirectories(dir.resolve(".agent_1.old-" + dead + "-a1"));
        Files.writeString(dir.resolve(".report.html.tmp-" + dead), "<html");
        // a live writer's work, and names that only look alike
        Files.createDirectories(dir.resolve(".checkpoint-4.tmp-" + live));
        Files.writeString(dir.resolve("notes.tmp"), "mine");
        Files.writeString(dir.resolve("x.tmp-abc"), "mine");
        Files.writeString(dir.resolve("metrics.jsonl"), "{}\n");

        List<StaleTemps.Cleaned> cleaned = StaleTemps.clean(dir);

        assertThat(names(dir)).containsExactly(".checkpoint-4.tmp-" + live, "agent_1", "checkpoint-2", "metrics.jsonl",
                "notes.tmp", "x.tmp-abc");
        assertThat(Files.readString(dir.resolve("checkpoint-2/metadata.json"))).isEqualTo("{}");
        assertThat(cleaned).hasSize(6).filteredOn(StaleTemps.Cleaned::restored)
                .containsExactly(new StaleTemps.Cleaned(dir.resolve("checkpoint-2"), true));
        assertThat(StaleTemps.clean(dir)).as("nothing left to clean").isEmpty();
    }

    @Test
    void cleaningForOneNameLeavesTheOthers(@TempDir Path dir) throws Exception {
        long dead = TestDisks.deadPid();
        Files.createDirectories(dir.resolve(".agent_0.saving-" + dead + "-q"));
        Files.createDirectories(dir.resolve(".agent_0.old-" + dead + "-q"));
        Files.createDirectories(dir.resolve(".agent_10.saving-" + dead + "-q"));
        Files.createDirectories(dir.resolve("agent_0.tmp-" + dead));
        StaleTemps.clean(dir, "agent_0");
        assertThat(names(dir)).containsExactly(".agent_10.saving-" + dead + "-q", "agent_0");
    }

    @Test
    void aModelSaveRemovesWhatAKilledSaveOfTheSameDirectoryLeft(@TempDir Path dir) throws Exception {
        long dead = TestDisks.deadPid();
        Path target = dir.resolve("agent_0");
        Files.createDirectories(dir.resolve(".agent_0.saving-" + dead + "-z"));
        Files.writeString(Files.createDirectories(dir.resolve(".agent_0.old-" + dead + "-z")).resolve("config.json"), "{}");
        ModelDirs.replace(target, fresh -> Files.writeString(fresh.resolve("config.json"), "{\"new\": 1}"));
        assertThat(names(dir)).containsExactly("agent_0");
        assertThat(Files.readString(target.resolve("config.json"))).isEqualTo("{\"new\": 1}");
    }
}
