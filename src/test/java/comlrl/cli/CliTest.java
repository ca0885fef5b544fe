package comlrl.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    record Result(int code, String out, String err) {
    }

    static Result run(String... args) {
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            int code = Main.run(args);
            return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
        }
    }

    @Test
    void initModelThenGreedyGenerateJsonIsRepeatableAndConsistent(@TempDir Path tmp) throws Exception {
        Path model = tmp.resolve("tiny");
        for (String arch : List.of("qwen2", "llama", "qwen3")) {
            Path dir = tmp.resolve(arch);
            assertThat(run("init-model", "--arch", arch, "--preset", "tiny", "--out", dir.toString()).code()).isZero();
            assertThat(Files.isRegularFile(dir.resolve("model.safetensors"))).isTrue();
            assertThat(JSON.readTree(dir.resolve("config.json").toFile()).get("model_type").asText()).isEqualTo(arch);
        }
        assertThat(run("init-model", "--arch", "qwen2", "--out", model.toString()).code()).isZero();
        Result a = run("generate", "--model", model.toString(), "--prompt-ids", "1,2,3", "--greedy",
                "--max-new-tokens", "20", "--json");
        Result b = run("generate", "--model", model.toString(), "--prompt-ids", "1,2,3", "--greedy",
                "--max-new-tokens", "20", "--json");
        assertThat(a.code()).as(a.err()).isZero();
        assertThat(a.out()).isEqualTo(b.out());
        JsonNode o = JSON.readTree(a.out());
        assertThat(o.get("ids").size()).isBetween(1, 20);
        assertThat(o.get("logprobs").size()).isEqualTo(o.get("ids").size());
        o.get("logprobs").forEach(lp -> assertThat(lp.asDouble()).isLessThanOrEqualTo(0.0));
        assertThat(o.has("text")).isTrue();
    }

    @Test
    void generateRejectsIdsOutsideTheVocabulary(@TempDir Path tmp) {
        Path model = tmp.resolve("tiny");
        run("init-model", "--out", model.toString());
        Result r = run("generate", "--model", model.toString(), "--prompt-ids", "1,999999", "--greedy",
                "--max-new-tokens", "2");
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.err()).contains("999999").contains("outside the vocabulary");
    }

    /**
     * {@code --stop}: greedy decoding on the tiny model continues 1,2,3 with "@�es@entSheckesu f…", tokens
     * '@' '�' 'es' '@' 'ent' 'S' 'heck' 'esu' ' f' (read from runs with --max-new-tokens 5 to 9). "ckes"
     * begins inside 'heck' and ends inside 'esu', so the completion keeps 8 tokens; of "zzz" and "Sheck",
     * the second ends with 'heck': 7 tokens.
     */
    @Test
    void generateStopsAtAStopStringGivenWithStop(@TempDir Path tmp) throws Exception {
        Path model = tmp.resolve("tiny");
        assertThat(run("init-model", "--out", model.toString()).code()).isZero();
        List<String> greedy = List.of("generate", "--model", model.toString(), "--prompt-ids", "1,2,3", "--greedy",
                "--max-new-tokens", "20", "--json");
        JsonNode free = JSON.readTree(run(greedy.toArray(String[]::new)).out());
        assertThat(free.get("text").asText()).startsWith("@\uFFFDes@entSheckesu f");
        assertThat(free.get("finish_reason").asText()).isEqualTo("length");
        record Case(List<String> flags, String text, int kept) {
        }
        for (Case c : List.of(new Case(List.of("--stop", "ckes"), "@\uFFFDes@entSheckesu", 8),
                new Case(List.of("--stop", "zzz", "--stop", "Sheck"), "@\uFFFDes@entSheck", 7))) {
            List<String> args = new java.util.ArrayList<>(greedy);
            args.addAll(c.flags());
            Result r = run(args.toArray(String[]::new));
            assertThat(r.code()).as(r.err()).isZero();
            JsonNode o = JSON.readTree(r.out());
            assertThat(o.get("text").asText()).as("%s", c.flags()).isEqualTo(c.text());
            assertThat(o.get("ids").size()).isEqualTo(c.kept());
            for (int t = 0; t < c.kept(); t++) {
                assertThat(o.get("ids").get(t)).isEqualTo(free.get("ids").get(t));
            }
            assertThat(o.get("finish_reason").asText()).isEqualTo("stop");
        }
        Result both = run("generate", "--model", model.toString(), "--prompt-ids", "1,2,3", "--greedy",
                "--max-new-tokens", "2", "--stop", "x", "--generation", "stop_strings=[y]");
        assertThat(both.code()).isEqualTo(1);
        assertThat(both.err()).contains("--stop and --generation stop_strings both set the stop strings");
    }

    /**
     * {@code dir/run.yaml}: the tiny length-ratio MAGRPO job (one epoch of 6-token answers, seconds on
     * a CPU) writing into {@code dir/<outputDir>}, with {@code extraLines} added at the top level.
     */
    static Path tinyRunConfig(Path dir, String outputDir, String... extraLines) throws java.io.IOException {
        Path cfg = dir.resolve("run.yaml");
        List<String> lines = new java.util.ArrayList<>(List.of(
                "algorithm: magrpo",
                "agent_model: builtin:tiny",
                "num_agents: 2",
                "dataset: {train: 'builtin:length-ratio', test_size: 0.2, split_seed: 42}",
                "formatters: ['Short: {prompt}', 'Long: {prompt}']",
                "reward: {type: length_ratio}",
                "args: {num_turns: 1, num_train_epochs: 1, num_generations: 2, max_new_tokens: 6, logging_steps: 1,",
                "       eval_interval: 4, eval_num_samples: 2}",
                "output_dir: " + outputDir));
        lines.addAll(List.of(extraLines));
        Files.writeString(cfg, String.join("\n", lines) + "\n");
        return cfg;
    }

    @Test
    void trainRunsEndToEndAndWritesTheRunDirectory(@TempDir Path tmp) throws Exception {
        Path cfg = tinyRunConfig(tmp, "out");
        Result r = run("train", cfg.toString(), "--set", "agent_learning_rate=1e-3");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("eval reward before training").contains("eval reward after training");
        Path out = tmp.resolve("out");
        JsonNode config = JSON.readTree(out.resolve("config.json").toFile());
        assertThat(config.get("args").get("agent_learning_rate").asDouble()).isEqualTo(1e-3);
        assertThat(config.get("args").get("num_generations").asInt()).isEqualTo(2);
        assertThat(config.has("provenance")).isTrue();
        List<String> lines = Files.readAllLines(out.resolve("metrics.jsonl"));
        assertThat(lines).anyMatch(l -> l.contains("\"turn_1/reward_mean\""))
                .anyMatch(l -> l.contains("\"eval/turn_1/reward_mean\""))
                .allMatch(l -> l.contains("\"env_step\""));
        assertThat(Files.isDirectory(out.resolve("agent_0"))).isTrue();
        assertThat(Files.isDirectory(out.resolve("agent_1"))).isTrue();
        assertThat(Files.readString(out.resolve("report.html"))).contains("<svg").contains("eval/turn_1/reward_mean");
        assertThat(r.out()).contains("report: ");
    }

    @Test
    void aBadConfigFailsFastWithTheFieldNamed(@TempDir Path tmp) throws Exception {
        Path cfg = tmp.resolve("bad.yaml");
        Files.writeString(cfg, String.join("\n",
                "agent_model: /nonexistent/model/dir",
                "dataset: {train: 'builtin:length-ratio'}",
                "reward: {type: length_ratio}",
                "args: {num_generations: 1}", ""));
        Result r = run("train", cfg.toString());
        assertThat(r.code()).isEqualTo(1);
        // the config error is reported, not the missing model: validation comes before loading
        assertThat(r.err()).contains("num_generations").doesNotContain("/nonexistent");
        // a typo in a key is named with a suggestion
        Files.writeString(cfg, String.join("\n",
                "agent_model: builtin:tiny",
                "dataset: {train: 'builtin:length-ratio'}",
                "reward: {type: length_ratio}",
                "args: {num_generation: 4}", ""));
        Result typo = run("train", cfg.toString());
        assertThat(typo.code()).isEqualTo(1);
        assertThat(typo.err()).contains("num_generation").contains("num_generations");
    }

    @Test
    void trainRunsCentralizedAndStreamingConfigs(@TempDir Path tmp) throws Exception {
        Path tasks = tmp.resolve("tasks.jsonl");
        Files.writeString(tasks, "{\"prompt\": \"a\", \"target_min\": 2, \"target_max\": 3}\n"
                + "{\"prompt\": \"b\", \"target_min\": 2, \"target_max\": 3}\n");
        Path cfg = tmp.resolve("c.yaml");
        Files.writeString(cfg, String.join("\n",
                "algorithm: centralized_magrpo",
                "agent_model: builtin:tiny",
                "num_agents: 2",
                "dataset: {train: tasks.jsonl, streaming: true, eval: tasks.jsonl}",
                "formatters: ['Short: {prompt}', 'Long: {prompt}']",
                "reward: {type: length_ratio}",
                "args: {num_agents: 2, num_train_epochs: 1, num_generations: 2, max_new_tokens: 6, logging_steps: 1,",
                "       eval_num_samples: 1}",
                "output_dir: out", ""));
        Result r = run("train", cfg.toString());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.err()).contains("CentralizedMAGRPO");
        assertThat(Files.isDirectory(tmp.resolve("out/agent_0"))).isTrue();
        assertThat(Files.exists(tmp.resolve("out/agent_1"))).as("one actor plays both roles").isFalse();
        Files.writeString(cfg, Files.readString(cfg).replace("streaming: true, eval: tasks.jsonl", "streaming: true, test_size: 0.5"));
        Result bad = run("train", cfg.toString());
        assertThat(bad.code()).isEqualTo(1);
        assertThat(bad.err()).contains("dataset.streaming").contains("test_size");
    }

    @Test
    void aMissingRewardScriptFailsBeforeTheRunStarts(@TempDir Path tmp) throws Exception {
        // used to surface at the first reward call, after the models had loaded
        Path cfg = tmp.resolve("run.yaml");
        Files.writeString(cfg, String.join("\n",
                "agent_model: builtin:tiny",
                "dataset: {train: 'builtin:length-ratio'}",
                "formatters: ['Short: {prompt}', 'Long: {prompt}']",
                "reward: {type: command, run: [sh, reward.sh]}",
                "args: {num_turns: 1, num_train_epochs: 1, num_generations: 2, max_new_tokens: 4}",
                "output_dir: out", ""));
        Result r = run("train", cfg.toString());
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.err()).contains("reward command script 'reward.sh' (run[1]) does not exist: looked for "
                + tmp.resolve("reward.sh"));
        assertThat(Files.exists(tmp.resolve("out/config.json"))).as("failed while reading the config").isFalse();
    }

    @Test
    void outputsInsideTheModelDirectoryAndResumingAnotherAlgorithmAreRefusedFirst(@TempDir Path tmp) throws Exception {
        Path model = tmp.resolve("model");
        assertThat(run("init-model", "--out", model.toString()).code()).isZero();
        String modelConfig = Files.readString(model.resolve("config.json"));
        Path cfg = tmp.resolve("run.yaml");
        String body = String.join("\n",
                "agent_model: model",
                "num_agents: 2",
                "dataset: {train: 'builtin:length-ratio', test_size: 0.2}",
                "formatters: ['Short: {prompt}', 'Long: {prompt}']",
                "reward: {type: length_ratio}",
                "args: {num_turns: 1, num_train_epochs: 1, num_generations: 2, max_new_tokens: 4, top_k: 0}", "");
        Files.writeString(cfg, body + "output_dir: model\n");
        Result same = run("train", cfg.toString());
        assertThat(same.code()).isEqualTo(1);
        assertThat(same.err()).contains("output_dir").contains("is the model directory");
        Files.writeString(cfg, body + "output_dir: model/run\n");
        assertThat(run("train", cfg.toString()).err()).contains("is inside the model directory");
        assertThat(Files.readString(model.resolve("config.json"))).as("the model's config.json").isEqualTo(modelConfig);
        assertThat(Files.exists(model.resolve("metrics.jsonl"))).isFalse();

        // a checkpointed run, then a resume under another algorithm: refused before any model loads
        Files.writeString(cfg, body + "output_dir: out\ncheckpoint: {dir: ck}\n");
        Result trained = run("train", cfg.toString());
        assertThat(trained.code()).as(trained.err()).isZero();
        JsonNode generation = JSON.readTree(tmp.resolve("out/config.json").toFile()).get("generation").get("agent_1");
        assertThat(generation.get("top_k").get("source").asText()).isEqualTo("run config");
        assertThat(generation.get("repetition_penalty").get("source").asText()).isEqualTo("transformers default");
        Files.writeString(cfg, "algorithm: marloo\n" + body + "output_dir: out\n");
        Result other = run("train", cfg.toString(), "--resume", tmp.resolve("ck").toString());
        assertThat(other.code()).isEqualTo(1);
        assertThat(other.err()).contains("is a checkpoint of MAGRPO").contains("trains MARLOO")
                .contains("algorithm: magrpo");
        // resuming a finished run says there is nothing to train
        Files.writeString(cfg, body + "output_dir: out\ncheckpoint: {dir: ck}\n");
        Result again = run("train", cfg.toString(), "--resume", tmp.resolve("ck").toString());
        assertThat(again.code()).as(again.err()).isZero();
        assertThat(again.err()).contains("Nothing to train: 1 of num_train_epochs=1");
    }

    @Test
    void badTaskDataFailsBeforeAnyModelLoads(@TempDir Path tmp) throws Exception {
        // a directory that passes the model-source check but cannot be loaded: had a model loaded, its error shows
        Path model = Files.createDirectories(tmp.resolve("model"));
        for (String file : List.of("config.json", "tokenizer.json", "model.safetensors")) {
            Files.writeString(model.resolve(file), "{}");
        }
        Files.writeString(tmp.resolve("good.jsonl"), "{\"prompt\": \"a\", \"target_min\": 1, \"target_max\": 2}\n");
        Files.writeString(tmp.resolve("null.jsonl"), "{\"prompt\": \"a\", \"target_min\": 1, \"target_max\": 2}\n"
                + "{\"prompt\": null, \"target_min\": 1, \"target_max\": 2}\n");
        Files.writeString(tmp.resolve("number.jsonl"), "{\"prompt\": 42, \"target_min\": 1, \"target_max\": 2}\n");
        Files.writeString(tmp.resolve("empty.jsonl"), "");
        comlrl.data.TestParquet.write(tmp.resolve("tasks.parquet"), 0, 20, 1 << 12);
        Path cfg = tmp.resolve("run.yaml");
        String head = "agent_model: model\nnum_agents: 2\nreward: {type: length_ratio}\n"
                + "args: {num_turns: 1, num_train_epochs: 1, num_generations: 2, max_new_tokens: 4}\noutput_dir: out\n";

        Files.writeString(cfg, head + "dataset: {train: good.jsonl}\n");
        Result loads = run("train", cfg.toString(), "--output-dir", tmp.resolve("loads").toString());
        assertThat(loads.code()).isEqualTo(1);
        assertThat(loads.err()).as("good data reaches the model, which fails to load")
                .contains(model.resolve("config.json") + " has no model_type");

        Files.writeString(cfg, head + "dataset: {train: null.jsonl}\n");
        Result nullPrompt = run("train", cfg.toString());
        assertThat(nullPrompt.code()).isEqualTo(1);
        assertThat(nullPrompt.err()).contains("error: dataset.train (null.jsonl): " + tmp.resolve("null.jsonl")
                + " line 2 (row 2): field 'prompt' (read by the default formatter (no formatters given; it reads prompt)) "
                + "is null or missing").doesNotContain("model_type").doesNotContain("train / ");

        Files.writeString(cfg, head + "dataset: {train: number.jsonl}\nformatters: 'Q: {prompt}'\n");
        assertThat(run("train", cfg.toString()).err()).contains(tmp.resolve("number.jsonl") + " line 1 (row 1): field "
                + "'prompt' (read by formatters template \"Q: {prompt}\") is a number (42), not a string");

        // an empty training set used to "train" on nothing and exit 0; an empty eval file gave NaN rewards
        Files.writeString(cfg, head + "dataset: {train: empty.jsonl}\n");
        assertThat(run("train", cfg.toString()).err()).contains("error: dataset.train (empty.jsonl) holds no rows ("
                + tmp.resolve("empty.jsonl") + "): there is nothing to train on");
        Files.writeString(cfg, head + "dataset: {train: good.jsonl, eval: empty.jsonl}\n");
        assertThat(run("train", cfg.toString()).err()).contains("error: dataset.eval (empty.jsonl) holds no rows")
                .contains("evaluation would average no rewards. Add rows to it, or remove it");
        Files.writeString(cfg, head + "dataset: {train: empty.jsonl, streaming: true}\n");
        assertThat(run("train", cfg.toString()).err()).contains("error: dataset.train (empty.jsonl): "
                + tmp.resolve("empty.jsonl") + ": holds no rows");

        // a streamed Parquet file: its schema is checked against the template before any model loads
        Files.writeString(cfg, head.replace("reward: {type: length_ratio}", "reward: {type: length_ratio, "
                + "target_min_field: i, target_max_field: i}") + "dataset: {train: tasks.parquet, streaming: true}\n"
                + "formatters: 'Task {i}: {prompt}'\n");
        assertThat(run("train", cfg.toString()).err()).contains("error: dataset.train (tasks.parquet): "
                + tmp.resolve("tasks.parquet") + ": column 'i' (read by formatters template \"Task {i}: {prompt}\") is of "
                + "Parquet type required int64 i, which cannot hold a string");
        assertThat(Files.exists(tmp.resolve("out/config.json"))).as("every failure came while reading the config").isFalse();
    }
}
