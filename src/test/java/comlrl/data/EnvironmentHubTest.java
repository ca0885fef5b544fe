package comlrl.data;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The environments' hub ids, each checked the same way. {@code environment: {type: writing, task: tldr}}
 * names the hub's {@code trl-lib/tldr}: its splits fetched from a
 * local hub in the hub's layout into a Hugging Face cache, then trained on offline from that cache, and refused
 * offline with an empty cache, naming the dataset and {@code HF_HUB_OFFLINE}. Runs the command line
 * in JVMs of their own (the hub's settings are environment variables).
 */
class EnvironmentHubTest {
    @TempDir
    Path tmp;

    private record Run(int code, String output) {}

    private Run train(Path config, Map<String, String> env, String... extra) throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> command = new ArrayList<>(List.of(java.toString(), "-cp",
                System.getProperty("java.class.path"), "comlrl.cli.Main", "train", config.toString()));
        command.addAll(List.of(extra));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
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

    /** HumanEval's columns, three small tasks of our own. */
    private static Map<String, String> task(String id, String entry, String prompt, String test) {
        Map<String, String> row = new java.util.LinkedHashMap<>();
        row.put("task_id", id);
        row.put("prompt", prompt);
        row.put("entry_point", entry);
        row.put("test", test);
        return row;
    }

    @Test
    void theCodeEnvironmentLoadsOpenaiHumanevalThroughTheCache() throws Exception {
        java.util.List<Map<String, String>> rows = java.util.List.of(
                task("T/0", "double", "def double(x):\n    \"\"\"Twice x.\"\"\"\n",
                        "def check(candidate):\n    assert candidate(2) == 4\n"),
                task("T/1", "last", "def last(xs):\n    \"\"\"The last item of a list.\"\"\"\n",
                        "def check(candidate):\n    assert candidate([1, 2]) == 2\n"),
                task("T/2", "shout", "def shout(s):\n    \"\"\"s in capitals.\"\"\"\n",
                        "def check(candidate):\n    assert candidate('a') == 'A'\n"));
        Path config = Files.writeString(tmp.resolve("code.yaml"), "agent_model: builtin:tiny\n"
                + "environment: {type: code, dataset: humaneval, sandbox: {timeout_s: 5}}\n"
                + "args: {num_train_epochs: 1, num_generations: 2, max_new_tokens: 8, eval_interval: 0, seed: 1}\n"
                + "output_dir: out\nreport: false\nsave_model: false\n");
        Path cache = tmp.resolve("cache");
        try (FakeDatasetHub hub = new FakeDatasetHub()) {
            hub.put("openai/openai_humaneval", "main", "6666666666666666666666666666666666666666", Map.of(
                    "data/test-00000-of-00001.parquet",
                    Files.readAllBytes(TestParquet.writeStrings(tmp.resolve("he.parquet"), rows))));
            HubDatasets online = HubDatasets.of(comlrl.model.io.HubCache.of(hub.env(cache)));
            assertThat(online.load(HubSplit.of("openai/openai_humaneval").withSplit("test")).size()).isEqualTo(3);
        }
        // three tasks cannot hold out the environment's sixteen: one is held out here
        Run offline = train(config, Map.of("HF_HUB_CACHE", cache.toString(), "HF_HUB_OFFLINE", "1"),
                "--set", "dataset.test_size=1");
        assertThat(offline.code()).as(offline.output()).isZero();
        assertThat(offline.output()).contains("eval reward after training");

        Run empty = train(config, Map.of("HF_HUB_CACHE", Files.createDirectories(tmp.resolve("none")).toString(),
                "HF_HUB_OFFLINE", "1"));
        assertThat(empty.code()).as(empty.output()).isEqualTo(1);
        assertThat(empty.output()).contains("dataset 'openai/openai_humaneval'").contains("HF_HUB_OFFLINE");
    }
}
