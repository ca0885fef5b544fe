package comlrl.model.io;

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

class ModelDirsTest {

    private static List<String> tree(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(p -> !p.equals(dir)).map(p -> dir.relativize(p).toString()).sorted().toList();
        }
    }

    @Test
    void aNewDirectoryAppearsWholeWithNothingBeside(@TempDir Path tmp) throws Exception {
        Path dir = tmp.resolve("out/agent_0");
        ModelDirs.replace(dir, fresh -> Files.writeString(fresh.resolve("config.json"), "{}"));
        assertThat(tree(tmp.resolve("out"))).containsExactly("agent_0", "agent_0/config.json");
    }

    @Test
    void replacingKeepsForeignFilesAndDropsStaleWeights(@TempDir Path tmp) throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("model"));
        Files.writeString(dir.resolve("config.json"), "old");
        Files.writeString(dir.resolve("README.md"), "notes");
        Files.createDirectories(dir.resolve("sub"));
        Files.writeString(dir.resolve("sub/more.txt"), "more");
        Files.writeString(dir.resolve("model-00001-of-00002.safetensors"), "old shard");
        Files.writeString(dir.resolve("model-00002-of-00002.safetensors"), "old shard");
        Files.writeString(dir.resolve("model.safetensors.index.json"), "{}");
        ModelDirs.replace(dir, fresh -> {
            Files.writeString(fresh.resolve("config.json"), "new");
            Files.writeString(fresh.resolve("model.safetensors"), "new weights");
        });
        assertThat(tree(dir)).containsExactly("README.md", "config.json", "model.safetensors", "sub", "sub/more.txt");
        assertThat(Files.readString(dir.resolve("config.json"))).isEqualTo("new");
        assertThat(Files.readString(dir.resolve("sub/more.txt"))).isEqualTo("more");
        assertThat(tree(tmp)).allMatch(n -> n.startsWith("model"));
        assertThat(tree(tmp).stream().filter(n -> !n.contains("/"))).containsExactly("model");
    }

    @Test
    void aFailedWriteLeavesThePreviousDirectoryWholeAndNoTemporaryOne(@TempDir Path tmp) throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("model"));
        Files.writeString(dir.resolve("config.json"), "old");
        Files.writeString(dir.resolve("model.safetensors"), "old weights");
        assertThatThrownBy(() -> ModelDirs.replace(dir, fresh -> {
            Files.writeString(fresh.resolve("config.json"), "new");
            throw new IOException("No space left on device");
        })).isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("Cannot save the model to " + dir)
                .hasMessageContaining("No space left on device")
                .hasMessageContaining("what was there before is unchanged");
        assertThatThrownBy(() -> ModelDirs.replace(dir, fresh -> {
            Files.writeString(fresh.resolve("config.json"), "new");
            throw new IllegalStateException("tokenizer broke");
        })).isInstanceOf(IllegalStateException.class).hasMessage("tokenizer broke");
        assertThat(tree(tmp)).containsExactly("model", "model/config.json", "model/model.safetensors");
        assertThat(Files.readString(dir.resolve("config.json"))).isEqualTo("old");
        assertThat(Files.readString(dir.resolve("model.safetensors"))).isEqualTo("old weights");
    }

    @Test
    void aSymlinkedTargetIsReplacedWhereItPoints(@TempDir Path tmp) throws Exception {
        Path real = Files.createDirectories(tmp.resolve("real"));
        Files.writeString(real.resolve("config.json"), "old");
        Path link = Files.createSymbolicLink(tmp.resolve("link"), real);
        ModelDirs.replace(link, fresh -> Files.writeString(fresh.resolve("config.json"), "new"));
        assertThat(Files.isSymbolicLink(link)).isTrue();
        assertThat(Files.readString(real.resolve("config.json"))).isEqualTo("new");
        assertThatThrownBy(() -> ModelDirs.replace(Files.writeString(tmp.resolve("file"), "x"), fresh -> { }))
                .hasMessageContaining("not a directory");
    }

    @Test
    void overlapTellsSameInsideContainsAndNone(@TempDir Path tmp) throws Exception {
        Path model = Files.createDirectories(tmp.resolve("models/tiny"));
        Path link = Files.createSymbolicLink(tmp.resolve("alias"), model);
        assertThat(ModelDirs.overlap(model, model)).isEqualTo(ModelDirs.Overlap.SAME);
        assertThat(ModelDirs.overlap(link, model)).isEqualTo(ModelDirs.Overlap.SAME);
        assertThat(ModelDirs.overlap(tmp.resolve("models/x/../tiny"), model)).isEqualTo(ModelDirs.Overlap.SAME);
        assertThat(ModelDirs.overlap(link.resolve("run/agent_0"), model)).isEqualTo(ModelDirs.Overlap.INSIDE);
        assertThat(ModelDirs.overlap(tmp.resolve("models"), model)).isEqualTo(ModelDirs.Overlap.CONTAINS);
        assertThat(ModelDirs.overlap(tmp.resolve("models/tiny2"), model)).isEqualTo(ModelDirs.Overlap.NONE);
        assertThat(ModelDirs.overlap(tmp.resolve("runs/a"), model)).isEqualTo(ModelDirs.Overlap.NONE);

        assertThatThrownBy(() -> ModelDirs.requireNotInside(link, "output_dir", model, "agent_model of agent 0"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("output_dir " + link + " is the model directory " + model)
                .hasMessageContaining("(agent_model of agent 0)")
                .hasMessageContaining("Choose an output_dir outside " + model);
        assertThatThrownBy(() -> ModelDirs.requireNotInside(model.resolve("out"), model))
                .hasMessageContaining("is inside the model directory");
        ModelDirs.requireNotInside(tmp.resolve("runs/a"), model);
        ModelDirs.requireNotInside(tmp.resolve("models"), model); // containing it is harmless
    }

    @Test
    void whereNoSiblingCanBeMadeFilesAreStagedInsideAndMovedIn(@TempDir Path tmp) throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("model"));
        Files.writeString(dir.resolve("config.json"), "old");
        Files.writeString(dir.resolve("README.md"), "notes");
        Files.writeString(dir.resolve("model.safetensors"), "old weights");
        ModelDirs.siblings = false;
        try {
            assertThatThrownBy(() -> ModelDirs.replace(dir, fresh -> {
                assertThat(fresh.getParent()).isEqualTo(dir);
                Files.writeString(fresh.resolve("config.json"), "new");
                throw new IOException("No space left on device");
            })).hasMessageContaining("No space left on device");
            assertThat(tree(dir)).containsExactly("README.md", "config.json", "model.safetensors");
            assertThat(Files.readString(dir.resolve("config.json"))).isEqualTo("old");
            ModelDirs.replace(dir, fresh -> {
                Files.writeString(fresh.resolve("config.json"), "new");
                Files.writeString(fresh.resolve("model-00001-of-00001.safetensors"), "new shard");
                Files.writeString(fresh.resolve("model.safetensors.index.json"), "{}");
            });
        } finally {
            ModelDirs.siblings = true;
        }
        assertThat(tree(dir)).containsExactly("README.md", "config.json", "model-00001-of-00001.safetensors",
                "model.safetensors.index.json");
        assertThat(Files.readString(dir.resolve("config.json"))).isEqualTo("new");
    }

    @Test
    void filesBesideAModelAreReplacedTogetherOrNotAtAll(@TempDir Path tmp) throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("critic"));
        Files.writeString(dir.resolve("config.json"), "backbone");
        Files.writeString(dir.resolve("a.bin"), "old a");
        Files.writeString(dir.resolve("b.bin"), "old b");
        assertThatThrownBy(() -> ModelDirs.replaceFiles(dir, staging -> {
            Files.writeString(staging.resolve("a.bin"), "new a");
            throw new IOException("Cannot write " + staging.resolve("b.bin") + ": No space left on device");
        })).isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("Cannot write " + dir.resolve("b.bin") + ": No space left on device")
                .hasMessageContaining("unchanged")
                .message().doesNotContain(".saving-");
        assertThat(tree(dir)).containsExactly("a.bin", "b.bin", "config.json");
        assertThat(Files.readString(dir.resolve("a.bin"))).isEqualTo("old a");
        ModelDirs.replaceFiles(dir, staging -> {
            Files.writeString(staging.resolve("a.bin"), "new a");
            Files.writeString(staging.resolve("c.bin"), "new c");
        });
        assertThat(tree(dir)).containsExactly("a.bin", "b.bin", "c.bin", "config.json");
        assertThat(Files.readString(dir.resolve("a.bin"))).isEqualTo("new a");
        assertThat(Files.readString(dir.resolve("b.bin"))).isEqualTo("old b");
        assertThat(Files.readString(dir.resolve("config.json"))).isEqualTo("backbone");
        ModelDirs.replaceFiles(tmp.resolve("new/dir"), staging -> Files.writeString(staging.resolve("x"), "x"));
        assertThat(tree(tmp.resolve("new"))).containsExactly("dir", "dir/x");
    }
}
