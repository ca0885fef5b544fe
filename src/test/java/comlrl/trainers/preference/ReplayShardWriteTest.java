package comlrl.trainers.preference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A replay shard that cannot be written fails with the shard's own path and leaves nothing behind. */
class ReplayShardWriteTest {
    @Test
    void aFailedShardWriteNamesTheShardAndLeavesNoTemporaryFile(@TempDir Path dir) throws Exception {
        Path shard = dir.resolve(PreferenceReplay.shardName(3));
        // the disk fills while the shard's temporary file is written (Checkpoints.writeJson's failure)
        assertThatThrownBy(() -> comlrl.checkpoint.Checkpoints.writeAtomically(shard, tmp -> {
            try {
                Files.writeString(tmp, "{\"iteration\": 3, \"pa");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            throw new UncheckedIOException("Cannot write " + tmp + ": No space left on device",
                    new IOException("No space left on device"));
        })).isInstanceOf(UncheckedIOException.class).hasMessageStartingWith("Cannot write " + shard + ": ")
                .hasMessageContaining("No space left on device");
        // an existing shard in the way: a directory of that name
        Files.createDirectories(dir.resolve(PreferenceReplay.shardName(4)).resolve("x"));
        assertThatThrownBy(() -> PreferenceReplay.writeShard(dir, 4, List.of()))
                .hasMessageStartingWith("Cannot write " + dir.resolve(PreferenceReplay.shardName(4)));
        try (Stream<Path> s = Files.list(dir)) {
            assertThat(s.map(p -> p.getFileName().toString()).toList()).containsExactly("iteration_0004.json");
        }
    }
}
