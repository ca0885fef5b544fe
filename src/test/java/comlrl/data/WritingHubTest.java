package comlrl.data;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code environment: {type: writing, task: tldr}} names the hub's {@code trl-lib/tldr}: its splits fetched from a
 * local hub in the hub's layout into a Hugging Face cache, then trained on offline from that cache, and refused
 * offline with an empty cache, naming the dataset and {@code HF_HUB_OFFLINE}. Runs the command line
 * in JVMs of their own (the hub's settings are environment variables).
 */
class WritingHubTest {
    @TempDir
    Path tmp;

    private record Run(int code, String output) {}

    private Run train(Path config, Map<String, String> env) throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        ProcessBuilder builder = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
                "comlrl.cli.Main", "train", config.toString()).redirectErrorStream(true);
        builder.environment().putAll(env);
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).isTrue();
        return new Run(process.exitValue(), output);
    }

    @Test
    void theTldrEnvironmentLoadsTrlLibTldrThroughTheCache() throws Exception {
        Path config = Files.writeString(tmp.resolve("writing.yaml"), "agent_model: builtin:tiny\n"
                + "environment: {type: writing, task: tldr}\n"
                + "args: {num_train_epochs: 1, num_generations: 2, max_new_tokens: 8, eval_interval: 0, seed: 1}\n"
                + "output_dir: out\nreport: false\nsave_model: false\n");
        Path cache = tmp.resolve("cache");
        try (FakeDatasetHub hub = new FakeDatasetHub()) {
            hub.put("trl-lib/tldr", "main", "5555555555555555555555555555555555555555", Map.of(
                    "data/train-00000-of-00001.parquet",
                    Files.readAllBytes(TestParquet.write(tmp.resolve("train.parquet"), 0, 4, 256)),
                    "data/test-00000-of-00001.parquet",
                    Files.readAllBytes(TestParquet.write(tmp.resolve("test.parquet"), 100, 102, 256))));
            // the cache filled as a first online run fills it (both splits the environment names)
            HubDatasets online = HubDatasets.of(comlrl.model.io.HubCache.of(hub.env(cache)));
            assertThat(online.load(HubSplit.of("trl-lib/tldr")).size()).isEqualTo(4);
            assertThat(online.load(HubSplit.of("trl-lib/tldr").withSplit("test")).size()).isEqualTo(2);
        }
        Run offline = train(config, Map.of("HF_HUB_CACHE", cache.toString(), "HF_HUB_OFFLINE", "1"));
        assertThat(offline.code()).as(offline.output()).isZero();
        assertThat(offline.output()).contains("eval reward after training");
        assertThat(Files.readString(tmp.resolve("out/splits.json"))).contains("trl-lib/tldr");

        Run empty = train(config, Map.of("HF_HUB_CACHE", Files.createDirectories(tmp.resolve("empty")).toString(),
                "HF_HUB_OFFLINE", "1"));
        assertThat(empty.code()).as(empty.output()).isEqualTo(1);
        assertThat(empty.output()).contains("dataset 'trl-lib/tldr'").contains("HF_HUB_OFFLINE");
    }
}
