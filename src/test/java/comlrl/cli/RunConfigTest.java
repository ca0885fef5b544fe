package comlrl.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import comlrl.reward.ExternalCommandReward;
import comlrl.env.ExternalCommandTransition;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a run config is checked for while it is read, before any model loads: unknown and
 * repeated keys in every section, program arguments, dataset fields, commands, model sources.
 */
class RunConfigTest {
    private static final String AGENT = "agent_model: builtin:tiny\n";
    private static final String DATASET = "dataset: {train: 'builtin:length-ratio', test_size: 0.2}\n";
    private static final String REST = String.join("\n",
            "num_agents: 2",
            "formatters: ['Short: {prompt}', 'Long: {prompt}']",
            "args: {num_turns: 1, num_generations: 2}", "");
    private static final String LENGTH_RATIO = "reward: {type: length_ratio}\n";

    @TempDir
    Path dir;

    private Path write(String yaml) throws IOException {
        Path file = dir.resolve("run.yaml");
        Files.writeString(file, yaml);
        return file;
    }

    private RunConfig load(String yaml, String... overrides) throws IOException {
        return new RunConfig(write(yaml), List.of(overrides), null);
    }

    private void script(String name) throws IOException {
        Files.writeString(dir.resolve(name), "while read -r line; do echo '[1.0]'; done\n");
    }

    @Test
    void unknownKeysInEverySectionNameTheClosestValidKey() throws Exception {
        script("r.sh");
        // `tset_size` used to be ignored silently: the run had no eval set
        assertThatThrownBy(() -> load(AGENT + "dataset: {train: 'builtin:length-ratio', tset_size: 0.2}\n" + REST
                + LENGTH_RATIO))
                .hasMessageStartingWith("Unknown dataset key 'tset_size'; did you mean 'test_size'? Valid keys: config, eval, "
                        + "eval_split, from_disk, hub, revision, shuffle_seed, split, split_seed, streaming, test_size, train");
        assertThatThrownBy(() -> load(AGENT + DATASET + REST + LENGTH_RATIO + "checkpoint: {dir: ck, intervall: 2}\n"))
                .hasMessageStartingWith("Unknown checkpoint key 'intervall'; did you mean 'interval'?");
        assertThatThrownBy(() -> load(AGENT + DATASET + REST + "reward: {type: length_ratio, target_min: lo}\n"))
                .hasMessageStartingWith("Unknown reward length_ratio key 'target_min'; did you mean 'target_min_field'?");
        assertThatThrownBy(() -> load(AGENT + DATASET + REST + "reward: {type: command, run: [sh, r.sh], timout_s: 5}\n"))
                .hasMessageStartingWith("Unknown reward command key 'timout_s'; did you mean 'timeout_s'?");
        assertThatThrownBy(() -> load(AGENT + DATASET + REST + LENGTH_RATIO + "reward_processor: {type: scale, factr: 2}\n"))
                .hasMessageStartingWith("Unknown reward_processor scale key 'factr'; did you mean 'factor'?");
        assertThatThrownBy(() -> load(AGENT + DATASET + REST + LENGTH_RATIO
                + "external_transition: {type: command, run: [sh, r.sh], workingdir: .}\n"))
                .hasMessageStartingWith("Unknown external_transition command key 'workingdir'; did you mean 'working_dir'?");
        assertThatThrownBy(() -> load(AGENT + DATASET + REST + LENGTH_RATIO, "dataset.tset_size=0.5"))
                .hasMessageStartingWith("Unknown dataset key 'tset_size'");
        // a negative seed names its key (NumPy's default_rng refuses it)
        assertThatThrownBy(() -> load(AGENT + "dataset: {train: 'builtin:length-ratio', test_size: 0.2, split_seed: -1}\n"
                + REST + LENGTH_RATIO)).hasMessageStartingWith("dataset.split_seed must be a non-negative integer");
        // what is spelt right is used
        RunConfig valid = load(AGENT + DATASET + REST + LENGTH_RATIO + "checkpoint: {dir: ck, interval: 2}\n");
        assertThat(valid.eval.size()).isEqualTo(2);
        assertThat(valid.checkpointInterval).isEqualTo(2);
        assertThat(valid.checkpointDir).isEqualTo(dir.resolve("ck"));
    }

    @Test
    void duplicateKeysAreRejectedWithTheirLine() throws Exception {
        String blockDuplicate = AGENT + String.join("\n",
                "dataset:",
                "  train: 'builtin:length-ratio'",
                "  test_size: 0.2",
                "  test_size: 0.5", "") + REST + LENGTH_RATIO;
        Path file = dir.resolve("run.yaml");
        assertThatThrownBy(() -> load(blockDuplicate))
                .hasMessageStartingWith("duplicate key 'test_size' in dataset at line 5 of " + file);
        assertThatThrownBy(() -> load(AGENT + DATASET + REST + LENGTH_RATIO + "num_agents: 3\n"))
                .hasMessageStartingWith("duplicate key 'num_agents' at line 7 of " + file);
        assertThatThrownBy(() -> load(AGENT + DATASET + REST + "reward: {type: length_ratio, type: command}\n"))
                .hasMessageStartingWith("duplicate key 'type' in reward at line 6 of " + file);
        assertThatThrownBy(() -> load(AGENT + DATASET + REST + LENGTH_RATIO, "reward={type: command, type: x}"))
                .hasMessageStartingWith("duplicate key 'type' at line 1 of the value of --set reward");
        // --set replaces a key; that is not a duplicate
        RunConfig overridden = load(AGENT + DATASET + REST + LENGTH_RATIO, "dataset.test_size=0.5", "num_generations=4");
        assertThat(overridden.eval.size()).isEqualTo(5);
        assertThat(((comlrl.trainers.reinforce.MAGRPOConfig) overridden.args).numGenerations()).isEqualTo(4);
    }

    @Test
    void numbersAndBooleansInRunAreArgumentsAsWritten() throws Exception {
        script("reward.sh");
        script("next.sh");
        RunConfig run = load(AGENT + DATASET + REST.replace("num_turns: 1", "num_turns: 2")
                + "reward: {type: command, run: [sh, reward.sh, 3, 1.50, true, 0x1F]}\n"
                + "external_transition: {type: command, run: [sh, next.sh, 2]}\n");
        assertThat(run.rewardSpec.get("run")).isEqualTo(List.of("sh", "reward.sh", "3", "1.50", "true", "0x1F"));
        assertThat(((java.util.Map<?, ?>) run.raw.get("reward")).get("run")).as("recorded in the resolved config")
                .isEqualTo(run.rewardSpec.get("run"));
        try (ExternalCommandReward reward = (ExternalCommandReward) run.rewardFunction();
                ExternalCommandTransition transition = run.externalTransition(line -> { })) {
            assertThat(reward.command()).containsExactly("sh", "reward.sh", "3", "1.50", "true", "0x1F");
            assertThat(transition.command()).containsExactly("sh", "next.sh", "2");
        }
        RunConfig overridden = load(AGENT + DATASET + REST + "reward: {type: command, run: [sh, reward.sh]}\n",
                "reward.run=[sh, reward.sh, 2.50]");
        assertThat(overridden.rewardSpec.get("run")).isEqualTo(List.of("sh", "reward.sh", "2.50"));
        assertThatThrownBy(() -> load(AGENT + DATASET + REST + "reward: {type: command, run: [sh, {a: 1}]}\n"))
                .hasMessageContaining("reward command key 'run' must be a program and its arguments")
                .hasMessageContaining("element 1 is {a=1}");
    }

    @Test
    void formatterAndRewardFieldsMustBeDatasetColumns() throws Exception {
        assertThatThrownBy(() -> load(AGENT + DATASET + "num_agents: 2\nformatters: ['Short: {prompt}', 'Long: {promt}']\n"
                + "args: {num_turns: 1, num_generations: 2}\n" + LENGTH_RATIO))
                .hasMessage("formatters[1] (agent 1) template \"Long: {promt}\" reads {promt}, but dataset.train "
                        + "(builtin:length-ratio) has no column 'promt'; did you mean {prompt}? Columns: [prompt, "
                        + "target_min, target_max]");
        Files.writeString(dir.resolve("train.jsonl"), "{\"prompt\": \"a\", \"target_min\": 2, \"target_max\": 3}\n");
        Files.writeString(dir.resolve("eval.jsonl"), "{\"question\": \"a\", \"target_min\": 2, \"target_max\": 3}\n");
        assertThatThrownBy(() -> load(AGENT + "dataset: {train: train.jsonl, eval: eval.jsonl}\n" + REST + LENGTH_RATIO))
                .hasMessageContaining("but dataset.eval (eval.jsonl) has no column 'prompt'")
                .hasMessageContaining("Columns: [question, target_min, target_max]");
        assertThatThrownBy(() -> load(AGENT + "dataset: {train: eval.jsonl, streaming: true}\n" + REST + LENGTH_RATIO))
                .hasMessageContaining("but the first row of dataset.train (eval.jsonl) has no column 'prompt'");
        assertThatThrownBy(() -> load(AGENT + DATASET + REST + "reward: {type: length_ratio, target_max_field: hi}\n"))
                .hasMessageStartingWith("reward length_ratio reads the task field 'hi' (target_max_field), but "
                        + "dataset.train (builtin:length-ratio) has no column 'hi'");
        // a reward model's template placeholder the data lacks fails before the reward model loads
        assertThatThrownBy(() -> load(AGENT + DATASET + REST
                + "reward: {type: reward_model, model: missing-model, template: \"{question} {completion_0}\"}\n"))
                .hasMessageStartingWith("reward reward_model reads the task field 'question' (template), but "
                        + "dataset.train (builtin:length-ratio) has no column 'question'")
                .hasMessageContaining("Write the template's {question} as a column the data has");
        assertThat(load(AGENT + "dataset: {train: train.jsonl, streaming: true}\n" + REST + LENGTH_RATIO).train).isNotNull();
    }

    @Test
    void theDistributedSectionSetsHowProcessesConnectAndShareOptimizerState() throws Exception {
        comlrl.distributed.DistributedContext.Options o = load(AGENT + DATASET + REST + LENGTH_RATIO
                + "distributed: {backend: gloo, timeout_s: 2.5, rendezvous_timeout_s: 30, zero_stage: 1}\n").distributed;
        assertThat(o.backend()).isEqualTo(comlrl.distributed.Backend.GLOO);
        assertThat(o.timeout()).isEqualTo(java.time.Duration.ofMillis(2500));
        assertThat(o.rendezvousTimeout()).isEqualTo(java.time.Duration.ofSeconds(30));
        assertThat(o.zeroStage()).isEqualTo(1);
        assertThat(load(AGENT + DATASET + REST + LENGTH_RATIO).distributed.zeroStage()).isZero();
        assertThatThrownBy(() -> load(AGENT + DATASET + REST + LENGTH_RATIO + "distributed: {zero_stage: 2}\n"))
                .hasMessageStartingWith("distributed.zero_stage must be 0 (every process keeps the whole optimizer "
                        + "state) or 1");
        assertThatThrownBy(() -> load(AGENT + DATASET + REST + LENGTH_RATIO + "distributed: {zero: 1}\n"))
                .hasMessageContaining("zero");
    }

    @Test
    void rewardAndTransitionProgramsMustExist() throws Exception {
        script("reward.sh");
        assertThatThrownBy(() -> load(AGENT + DATASET + REST + "reward: {type: command, run: [no-such-program-4f2a, reward.sh]}\n"))
                .hasMessageStartingWith("reward command program 'no-such-program-4f2a' (run[0]) was not found on PATH");
        assertThatThrownBy(() -> load(AGENT + DATASET + REST + "reward: {type: command, run: [sh, rewards.sh]}\n"))
                .hasMessageStartingWith("reward command script 'rewards.sh' (run[1]) does not exist: looked for "
                        + dir.resolve("rewards.sh"));
        assertThatThrownBy(() -> load(AGENT + DATASET + REST + "reward: {type: command, run: [./reward.sh]}\n"))
                .hasMessageContaining("is not an executable file");
        assertThatThrownBy(() -> load(AGENT + DATASET + REST + LENGTH_RATIO
                + "external_transition: {type: command, run: [bash, next.sh]}\n"))
                .hasMessageStartingWith("external_transition command script 'next.sh' (run[1]) does not exist");
    }

    @Test
    void anExternalTransitionThatWouldNeverRunIsRefused() throws Exception {
        script("next.sh");
        String transition = "external_transition: {type: command, run: [sh, next.sh]}\n";
        assertThatThrownBy(() -> load(AGENT + DATASET + REST + LENGTH_RATIO + transition))
                .hasMessageStartingWith("external_transition is called between turns, and this MAGRPO run has num_turns: 1")
                .hasMessageEndingWith("or set args.num_turns to 2 or more.");
        assertThatThrownBy(() -> load("algorithm: marlhf\n" + AGENT + DATASET + LENGTH_RATIO + transition + String.join("\n",
                "num_agents: 2", "formatters: ['Short: {prompt}', 'Long: {prompt}']", "args: {rl_algorithm: iac}", "")))
                .hasMessageContaining("num_turns: 1 (preference learning trains one turn)")
                .hasMessageEndingWith("Remove external_transition.");
        assertThat(load(AGENT + DATASET + REST.replace("num_turns: 1", "num_turns: 2") + LENGTH_RATIO + transition)
                .numTurns()).isEqualTo(2);
    }

    @Test
    void argsNamingModelsAndDirectoriesResolveAgainstTheConfigFile() throws Exception {
        Files.createDirectories(dir.resolve("rm"));
        String marlhfIter = "algorithm: marlhf_iter\n" + AGENT + DATASET + LENGTH_RATIO + String.join("\n",
                "formatters: ['Short: {prompt}', 'Long: {prompt}']",
                "args: {reward_model_name: ./rm, preference_replay_dir: replay, policy_checkpoint_dir: /abs/ckpt,",
                "       comparator_policy: model,",
                "       comparator_agents: [./rm, builtin:tiny]}", "");
        java.util.Map<String, Object> args = load(marlhfIter).argsMap();
        assertThat(args.get("reward_model_name")).isEqualTo(dir.resolve("rm").toString());           // a model (exists there)
        assertThat(args.get("preference_replay_dir")).isEqualTo(dir.resolve("replay").toString());   // a directory
        assertThat(args.get("policy_checkpoint_dir")).isEqualTo("/abs/ckpt");
        assertThat(args.get("comparator_agents")).isEqualTo(List.of(dir.resolve("rm").toString(), "builtin:tiny"));
        // the top-level agent count goes into args where the algorithm counts its agents there (not MAGRPO's)
        String madpo = "algorithm: madpo\n" + AGENT + "num_agents: 3\n" + DATASET + LENGTH_RATIO + "formatters: 'Q: {prompt}'\n";
        assertThat(load(madpo).args.numAgents()).isEqualTo(3);
        RunConfig magrpo = load(AGENT + DATASET + REST.replace("num_agents: 2", "num_agents: 3")
                .replace("formatters: ['Short: {prompt}', 'Long: {prompt}']", "formatters: 'Q: {prompt}'") + LENGTH_RATIO);
        assertThat(magrpo.numAgents).isEqualTo(3);
        assertThat(magrpo.args.numAgents()).isEqualTo(2);
    }

    @Test
    void modelSourcesAreCheckedBeforeAnyLoads() throws Exception {
        String rest = DATASET + REST + LENGTH_RATIO;
        assertThatThrownBy(() -> load("agent_model: builtin:huge\n" + rest))
                .hasMessageStartingWith("Unknown built-in model 'builtin:huge' in agent_model; did you mean 'builtin:tiny'? "
                        + "Built-in models: builtin:tiny, builtin:tiny-qwen2, builtin:tiny-llama");
        assertThatThrownBy(() -> load("agent_model: builtin:tiny-gpt2\n" + rest))
                .hasMessageStartingWith("Unknown built-in model 'builtin:tiny-gpt2'");
        load("agent_model: builtin:small-llama\n" + rest);
        assertThatThrownBy(() -> load("agent_model: ./missing\n" + rest))
                .hasMessageStartingWith("agent_model: model directory " + dir.resolve("missing") + " (from './missing') "
                        + "does not exist");
        Path empty = Files.createDirectories(dir.resolve("empty"));
        assertThatThrownBy(() -> load("agent_model: empty\n" + rest))
                .hasMessageStartingWith("agent_model: " + empty + " (from 'empty') is not a model directory: it has no "
                        + "config.json, no tokenizer.json, no model.safetensors (or model.safetensors.index.json)");
        assertThatThrownBy(() -> load("agents: [builtin:tiny, ../nowhere]\n" + rest))
                .hasMessageStartingWith("agents[1]: model directory " + dir.getParent().resolve("nowhere"));
        assertThatThrownBy(() -> load("agent_model: 'not/a valid id!'\n" + rest))
                .hasMessageContaining("agent_model 'not/a valid id!'").hasMessageContaining("valid Hugging Face model id");
        // a directory holding a model (relative to the config file), and a hub id, pass
        Path model = Files.createDirectories(dir.resolve("models/m"));
        for (String file : List.of("config.json", "tokenizer.json", "model.safetensors")) {
            Files.writeString(model.resolve(file), "{}");
        }
        assertThat(load("agent_model: models/m\n" + rest).agentSource()).isEqualTo(model.toString());
        assertThat(load("agents: [./models/m, builtin:tiny]\n" + rest).agents).containsExactly(model.toString(), "builtin:tiny");
        assumeThat(System.getenv("HF_HUB_OFFLINE")).as("hub ids are looked up in the cache when offline").isNull();
        assertThat(load("agent_model: Qwen/Qwen2.5-0.5B\n" + rest).agentSource()).isEqualTo("Qwen/Qwen2.5-0.5B");
    }

    @Test
    void offlineHubIdsMustBeCached() throws Exception {
        // HF_HUB_OFFLINE is read from the environment: run the command line in a JVM of its own
        Path cfg = write("agent_model: Qwen/Qwen2.5-0.5B\n" + DATASET + REST + LENGTH_RATIO + "output_dir: out\n");
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        ProcessBuilder builder = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
                Main.class.getName(), "train", cfg.toString()).redirectErrorStream(true);
        builder.environment().put("HF_HUB_OFFLINE", "1");
        builder.environment().put("HF_HUB_CACHE", Files.createDirectories(dir.resolve("empty-cache")).toString());
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(output).isEqualTo(1);
        assertThat(output).contains("agent_model 'Qwen/Qwen2.5-0.5B'").contains("is not in the Hugging Face cache")
                .contains("HF_HUB_OFFLINE");
        assertThat(Files.exists(dir.resolve("out/config.json"))).as("failed while reading the config").isFalse();
    }

    @Test
    void datasetSourcesHubKeysAndStreamingParquetAreCheckedAndRead() throws Exception {
        comlrl.data.TestParquet.write(dir.resolve("tasks.parquet"), 0, 50, 1 << 12);
        // the file's schema is checked against what the reward reads before anything trains
        assertThatThrownBy(() -> load("agent_model: builtin:tiny\n" + REST + LENGTH_RATIO
                + "dataset: {train: tasks.parquet, streaming: true}\n"))
                .hasMessageStartingWith("dataset.train (tasks.parquet): " + dir.resolve("tasks.parquet") + ": has no column "
                        + "'target_min', which reward length_ratio (target_min_field) reads; its columns: [prompt, i]");
        RunConfig streamed = load("agent_model: builtin:tiny\n" + REST
                + "reward: {type: length_ratio, target_min_field: i, target_max_field: i}\n"
                + "dataset: {train: tasks.parquet, streaming: true}\n");
        assertThat(streamed.train).isInstanceOf(comlrl.data.ParquetStream.class);
        assertThat(streamed.train.iterator().next().getString("prompt")).isEqualTo("p0");
        ((AutoCloseable) streamed.train).close();
        assertThatThrownBy(() -> load("agent_model: builtin:tiny\n" + REST + LENGTH_RATIO
                + "dataset: {train: tasks.parquet, config: main}\n")).hasMessageContaining("dataset.config selects from a hub dataset");
        assertThatThrownBy(() -> load("agent_model: builtin:tiny\n" + REST + LENGTH_RATIO
                + "dataset: {train: tasks.parquet, hub: openai/gsm8k}\n")).hasMessageContaining("not both");
        // a save_to_disk DatasetDict: one split trains, another evaluates
        comlrl.data.Dataset.fromRows(List.of(java.util.Map.of("prompt", "a", "target_min", 1, "target_max", 2),
                java.util.Map.of("prompt", "b", "target_min", 1, "target_max", 2))).saveToDisk(dir.resolve("disk"));
        RunConfig disk = load("agent_model: builtin:tiny\n" + REST + LENGTH_RATIO + "dataset: {from_disk: disk}\n");
        assertThat(disk.train.iterator().next().getString("prompt")).isEqualTo("a");
        assertThatThrownBy(() -> load("agent_model: builtin:tiny\n" + REST + LENGTH_RATIO
                + "dataset: {train: tasks.parquet, split: train}\n")).hasMessageContaining("dataset.split picks a split");
        assertThatThrownBy(() -> load("agent_model: builtin:tiny\n" + REST + LENGTH_RATIO
                + "dataset: {hub: openai/gsm8k, eval_split: test, test_size: 0.2}\n")).hasMessageContaining("one evaluation set");
    }
}
