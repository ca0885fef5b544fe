package comlrl.trainers.preference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.trainers.preference.PreferenceReplay.ReplayRecord;
import comlrl.trainers.preference.PreferenceReplay.Shard;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PreferenceReplayTest {
    @TempDir
    Path dir;

    private static ReplayRecord record(String name) {
        return new ReplayRecord(List.of("p0 " + name, "p1 " + name), List.of("w0 " + name, "w1 " + name),
                List.of("l0 " + name, "l1 " + name), 1, 0.25, 0.5);
    }

    // ---- shard files

    @Test
    void writeShardWritesTheDocumentUnderAPaddedName() throws Exception {
        ReplayRecord r = new ReplayRecord(List.of("p"), List.of("w"), List.of("l"), 0.75, -0.5, 0.125);
        Path file = PreferenceReplay.writeShard(dir.resolve("replay"), 3, List.of(r));
        assertThat(file).isEqualTo(dir.resolve("replay/iteration_0003.json"));
        Map<?, ?> doc = new ObjectMapper().readValue(file.toFile(), Map.class);
        assertThat(doc).isEqualTo(Map.of("iteration", 3, "pairs", List.of(Map.of("prompt_texts", List.of("p"),
                "winner_texts", List.of("w"), "loser_texts", List.of("l"), "winner_reward", 0.75, "loser_reward", -0.5,
                "candidate_reward_mean", 0.125))));
        try (Stream<Path> files = Files.list(dir.resolve("replay"))) {
            assertThat(files).containsExactly(file); // no temporary file left behind
        }
    }

    @Test
    void shardsRoundTripAndListOldestFirstIgnoringOtherFiles() throws Exception {
        List<ReplayRecord> ten = List.of(record("a"), record("b"));
        PreferenceReplay.writeShard(dir, 10, ten);
        PreferenceReplay.writeShard(dir, 2, List.of(record("old")));
        PreferenceReplay.writeShard(dir, 10000, List.of()); // "iteration_10000.json" sorts before "iteration_9999.json" by name
        PreferenceReplay.writeShard(dir, 9999, List.of(record("d")));
        PreferenceReplay.writeShard(dir, 2, List.of(record("c"))); // replaces iteration 2
        Files.writeString(dir.resolve("notes.txt"), "x");
        Files.writeString(dir.resolve("iteration_0002_line.svg"), "<svg/>");
        Files.writeString(dir.resolve(".iteration_0005.json.tmp-1"), "{");
        Files.createDirectory(dir.resolve("iteration_0006.json.d"));
        List<Shard> shards = PreferenceReplay.listShards(dir);
        assertThat(shards).extracting(Shard::iteration).containsExactly(2, 10, 9999, 10000);
        assertThat(shards.get(0).records()).containsExactly(record("c"));
        assertThat(shards.get(1).records()).isEqualTo(ten);
        assertThat(shards.get(1).file()).isEqualTo(dir.resolve("iteration_0010.json"));
        assertThat(shards.get(3).records()).isEmpty();
        assertThat(shards.get(3).file()).isEqualTo(dir.resolve("iteration_10000.json"));
        assertThat(PreferenceReplay.readShard(dir.resolve("iteration_0010.json"))).isEqualTo(shards.get(1));
        assertThat(PreferenceReplay.listShards(dir.resolve("missing"))).isEmpty();
    }

    @Test
    void aMalformedShardIsNamed() throws Exception {
        Path garbled = Files.writeString(dir.resolve("iteration_0004.json"), "{not json");
        assertThatThrownBy(() -> PreferenceReplay.listShards(dir)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("Malformed replay shard " + garbled);
        Files.writeString(garbled, "{\"iteration\": 4, \"pairs\": [{\"prompt_texts\": [\"p\"]}]}");
        assertThatThrownBy(() -> PreferenceReplay.readShard(garbled)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("Malformed replay shard " + garbled + ": pair 0: 'winner_texts' must be a list of "
                        + "strings, got null");
        Files.writeString(garbled, "{\"iteration\": 5, \"pairs\": []}");
        assertThatThrownBy(() -> PreferenceReplay.readShard(garbled)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'iteration' is 5 but the file name says 0004");
        Files.writeString(garbled, "{\"iteration\": 4, \"pairs\": [{\"prompt_texts\": [\"p\"], \"winner_texts\": [\"w\"], "
                + "\"loser_texts\": [\"l\"], \"winner_reward\": \"high\", \"loser_reward\": 0, "
                + "\"candidate_reward_mean\": 0}]}");
        assertThatThrownBy(() -> PreferenceReplay.readShard(garbled)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("pair 0: 'winner_reward' must be a number, got high");
    }

    @Test
    void aRecordNeedsOneTextPerAgentOnEachSide() {
        assertThatThrownBy(() -> new ReplayRecord(List.of("p0", "p1"), List.of("w0"), List.of("l0", "l1"), 1, 0, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("a replay record needs one prompt, winner and loser text per agent, got 2 prompts, 1 winners, "
                        + "2 losers");
    }
}
