package comlrl.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code algorithm: iac | maac} run configs, end to end through {@code bin/comlrl train}, and their checks. */
class ActorCriticCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static Path config(Path tmp, String algorithm, String critic, String args) throws Exception {
        Path cfg = tmp.resolve(algorithm + ".yaml");
        Files.writeString(cfg, String.join("\n",
                "algorithm: " + algorithm,
                "agent_model: builtin:tiny",
                critic,
                "num_agents: 2",
                "dataset: {train: 'builtin:length-ratio', test_size: 0.2, split_seed: 42}",
                "formatters: ['Short: {prompt}', 'Long: {prompt}']",
                "reward: {type: length_ratio}",
                "args: {num_turns: 1, num_train_epochs: 1, num_generations: 2, max_new_tokens: 6, eval_interval: 8,",
                "       eval_num_samples: 2, rollout_buffer_size: 4" + args + "}",
                "checkpoint: {interval: 1}",
                "output_dir: out-" + algorithm, ""));
        return cfg;
    }

    @Test
    void iacAndMaacTrainSaveTheirCriticsAndResume(@TempDir Path tmp) throws Exception {
        CliTest.Result iac = CliTest.run("train", config(tmp, "iac", "critic_model: builtin:tiny", "").toString());
        assertThat(iac.code()).as(iac.err()).isZero();
        assertThat(iac.out()).contains("eval reward after training");
        Path out = tmp.resolve("out-iac");
        JsonNode cfg = JSON.readTree(out.resolve("config.json").toFile());
        assertThat(cfg.get("algorithm").asText()).isEqualTo("iac");
        assertThat(cfg.get("args").get("use_separate_critic").asBoolean()).isTrue();
        assertThat(out.resolve("agent_1/critic/value_head.pt")).exists();
        List<String> lines = Files.readAllLines(out.resolve("metrics.jsonl"));
        assertThat(lines).anyMatch(l -> l.contains("\"turn_1/value_loss\""));
        assertThat(out.resolve("checkpoints/checkpoint-1/value_head_0/value_head.safetensors")).exists();

        CliTest.Result maac = CliTest.run("train", config(tmp, "maac", "critic_model: builtin:tiny",
                ", critic_type: q").toString());
        assertThat(maac.code()).as(maac.err()).isZero();
        assertThat(tmp.resolve("out-maac/critic/value_head.pt")).exists();
        // resuming an IAC checkpoint with the MAAC config is refused before anything loads
        CliTest.Result wrong = CliTest.run("train", config(tmp, "maac", "critic_model: builtin:tiny", "").toString(),
                "--resume", out.resolve("checkpoints").toString());
        assertThat(wrong.code()).isNotZero();
        assertThat(wrong.err()).contains("is a checkpoint of IAC").contains("algorithm: iac");
    }

    /**
     * IAC with one agent saves its model at a directory's root (the reference's layout); in the run
     * directory that root holds the run's own config.json, so the command line saves it to agent_0/.
     */
    @Test
    void aOneAgentIacRunKeepsItsConfigAndSavesTheModelUnderAgentZero(@TempDir Path tmp) throws Exception {
        Path cfg = tmp.resolve("iac1.yaml");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Files.writeString(cfg, String.join("\n", "algorithm: iac", "agent_model: builtin:tiny", "critic_model: builtin:tiny",
                "num_agents: 1", "dataset: {train: 'builtin:length-ratio', test_size: 0.2, split_seed: 42}",
                "formatters: ['Answer: {prompt}']",
                "reward: {type: command, run: ['" + java + "', -cp, '" + System.getProperty("java.class.path") + "', "
                        + RecordingReward.class.getName() + ", '" + tmp.resolve("seen.txt") + "']}",
                "args: {num_turns: 1, num_train_epochs: 1, num_generations: 2, max_new_tokens: 4, eval_interval: 0,",
                "       eval_num_samples: 1, rollout_buffer_size: 4}", "output_dir: out-iac1", ""));
        CliTest.Result r = CliTest.run("train", cfg.toString());
        assertThat(r.code()).as(r.err()).isZero();
        Path out = tmp.resolve("out-iac1");
        assertThat(JSON.readTree(out.resolve("config.json").toFile()).get("algorithm").asText()).isEqualTo("iac");
        assertThat(JSON.readTree(out.resolve("agent_0/config.json").toFile()).get("model_type").asText())
                .isEqualTo("qwen2");
        assertThat(out.resolve("agent_0/critic/value_head.pt")).exists();
    }

    @Test
    void madpoTrainsFromAConfigAndCheckpointsItsPreferenceSet(@TempDir Path tmp) throws Exception {
        Path cfg = tmp.resolve("madpo.yaml");
        Files.writeString(cfg, String.join("\n",
                "algorithm: madpo",
                "agent_model: builtin:tiny",
                "num_agents: 2",
                "dataset: {train: 'builtin:length-ratio', test_size: 0.2, split_seed: 42}",
                "formatters: ['Short: {prompt}', 'Long: {prompt}']",
                "reward: {type: length_ratio}",
                "args: {num_train_epochs: 1, preference_num_candidates: 4, preference_pairs_per_sample: 2,",
                "       max_new_tokens: 6, eval_interval: 0, eval_num_samples: 2}",
                "checkpoint: {interval: 1}",
                "output_dir: out-madpo", ""));
        CliTest.Result r = CliTest.run("train", cfg.toString());
        assertThat(r.code()).as(r.err()).isZero();
        Path out = tmp.resolve("out-madpo");
        assertThat(JSON.readTree(out.resolve("config.json").toFile()).get("algorithm").asText()).isEqualTo("madpo");
        assertThat(out.resolve("checkpoints/checkpoint-1/preference_pairs.json")).exists();
        assertThat(Files.readAllLines(out.resolve("metrics.jsonl"))).anyMatch(l -> l.contains("\"dpo_loss\""));
        assertThat(out.resolve("agent_1/config.json")).exists();
    }

    @Test
    void criticSettingsAreCheckedBeforeAnyModelLoads(@TempDir Path tmp) throws Exception {
        CliTest.Result noCritic = CliTest.run("train", config(tmp, "iac", "", "").toString());
        assertThat(noCritic.code()).isNotZero();
        assertThat(noCritic.err()).contains("Either critic_model or critics must be provided when use_separate_critic=True");
        CliTest.Result shared = CliTest.run("train", config(tmp, "iac", "critic_model: builtin:tiny",
                ", use_separate_critic: false").toString());
        assertThat(shared.err()).contains("critics can only be provided when use_separate_critic=True");
        CliTest.Result length = CliTest.run("train", config(tmp, "iac", "critics: [builtin:tiny]", "").toString());
        assertThat(length.err()).contains("critics length (1) must match");
        CliTest.Result magrpo = CliTest.run("train", config(tmp, "magrpo", "critic_model: builtin:tiny", "").toString());
        assertThat(magrpo.err()).contains("critic_model is for the actor-critic algorithms");
    }

    @Test
    void marlhfTrainsFromAConfigAndAResumeWritesIntoItsOwnSubdirectory(@TempDir Path tmp) throws Exception {
        Path cfg = tmp.resolve("marlhf.yaml");
        Files.writeString(cfg, String.join("\n",
                "algorithm: marlhf",
                "agent_model: builtin:tiny",
                "num_agents: 2",
                "dataset: {train: 'builtin:length-ratio', test_size: 0.2, split_seed: 42}",
                "formatters: ['Short: {prompt}', 'Long: {prompt}']",
                "reward: {type: length_ratio}",
                "args: {rl_algorithm: iac, num_generations: 1, num_train_epochs: 1, preference_num_candidates: 4,",
                "       preference_pairs_per_sample: 2, max_new_tokens: 6, eval_interval: 0, eval_num_samples: 2,",
                "       reward_model_device: cpu}",
                "checkpoint: {interval: 1}",
                "output_dir: out-marlhf", ""));
        CliTest.Result r = CliTest.run("train", cfg.toString());
        assertThat(r.code()).as(r.err()).isZero();
        Path out = tmp.resolve("out-marlhf");
        assertThat(JSON.readTree(out.resolve("config.json").toFile()).get("algorithm").asText()).isEqualTo("marlhf");
        assertThat(out.resolve("reward_model/config.json")).exists();
        assertThat(out.resolve("agent_1/config.json")).exists();
        assertThat(out.resolve("checkpoints/checkpoint-1/reward_model/model.safetensors")).exists();
        assertThat(Files.readAllLines(out.resolve("metrics.jsonl"))).anyMatch(l -> l.contains("\"reward_model/loss\""));
        String firstConfig = Files.readString(out.resolve("config.json"));
        CliTest.Result resumed = CliTest.run("train", cfg.toString(), "--set", "num_train_epochs=2", "--resume",
                out.resolve("checkpoints/checkpoint-1").toString());
        assertThat(resumed.code()).as(resumed.err()).isZero();
        Path sub = out.resolve("resume-checkpoint-1");
        assertThat(sub.resolve("config.json")).exists();
        assertThat(sub.resolve("metrics.jsonl")).exists();
        assertThat(sub.resolve("agent_0/config.json")).exists();
        assertThat(Files.readString(out.resolve("config.json"))).isEqualTo(firstConfig); // the earlier run's, untouched
        assertThat(out.resolve("checkpoints/checkpoint-2")).exists();
    }

    @Test
    void marlhfTakesCriticKeysOnlyWithAnActorCriticBackend(@TempDir Path tmp) throws Exception {
        Path cfg = tmp.resolve("marlhf.yaml");
        Files.writeString(cfg, String.join("\n",
                "algorithm: marlhf",
                "agent_model: builtin:tiny",
                "critic_model: builtin:tiny",
                "num_agents: 2",
                "dataset: {train: 'builtin:length-ratio'}",
                "reward: {type: length_ratio}",
                "args: {rl_algorithm: magrpo}", ""));
        CliTest.Result r = CliTest.run("train", cfg.toString());
        assertThat(r.code()).isNotZero();
        assertThat(r.err()).contains("critic_model is for the actor-critic algorithms")
                .contains("marlhf with args.rl_algorithm iac or maac");
    }

    @Test
    void iterativeTrainersRunFromConfigsAndAnApiKeyIsWrittenToNoFile(@TempDir Path tmp) throws Exception {
        String key = "sk-cli-secret-4242";
        try (comlrl.trainers.preference.LocalComparatorServer server = new comlrl.trainers.preference.LocalComparatorServer(
                List.of("x", "yy yy", "zzz zzz zzz", "w"))) {
            String common = String.join("\n",
                    "agent_model: builtin:tiny",
                    "num_agents: 2",
                    "dataset: {train: 'builtin:length-ratio', test_size: 0.2, split_seed: 42}",
                    "formatters: ['Short: {prompt}', 'Long: {prompt}']",
                    "reward: {type: length_ratio}",
                    "checkpoint: {interval: 1}", "");
            Path madpo = tmp.resolve("madpo-iter.yaml");
            Files.writeString(madpo, common + String.join("\n", "algorithm: madpo_iter",
                    "args: {num_iterations: 2, preference_num_candidates: 4, max_new_tokens: 6, eval_interval: 0,",
                    "       eval_num_samples: 2, comparator_policy: api,",
                    "       comparator_api_url: '" + server.url() + "',",
                    "       comparator_api_key: " + key + "}",
                    "output_dir: out-madpo-iter", ""));
            CliTest.Result r = CliTest.run("train", madpo.toString());
            assertThat(r.code()).as(r.err()).isZero();
            Path out = tmp.resolve("out-madpo-iter");
            assertThat(JSON.readTree(out.resolve("config.json").toFile()).get("algorithm").asText()).isEqualTo("madpo_iter");
            assertThat(JSON.readTree(out.resolve("config.json").toFile()).get("args").get("comparator_api_key").asText())
                    .isEqualTo("***");
            assertThat(out.resolve("preference_replay/iteration_0002.json")).exists();
            assertThat(out.resolve("checkpoints/checkpoint-2/preference_replay/iteration_0002.json")).exists();
            assertThat(r.out() + r.err()).doesNotContain(key);
            try (java.util.stream.Stream<Path> files = Files.walk(out)) {
                for (Path f : files.filter(Files::isRegularFile).toList()) {
                    assertThat(new String(Files.readAllBytes(f), java.nio.charset.StandardCharsets.ISO_8859_1))
                            .as("%s", f).doesNotContain(key);
                }
            }
            assertThat(server.requests()).isNotEmpty();
            Path marlhf = tmp.resolve("marlhf-iter.yaml");
            Files.writeString(marlhf, common + String.join("\n", "algorithm: marlhf_iter",
                    "args: {num_iterations: 2, num_train_epochs: 1, preference_num_candidates: 4, num_generations: 2,",
                    "       max_new_tokens: 6, eval_interval: 0, eval_num_samples: 2, reward_model_device: cpu}",
                    "output_dir: out-marlhf-iter", ""));
            CliTest.Result m = CliTest.run("train", marlhf.toString());
            assertThat(m.code()).as(m.err()).isZero();
            Path mout = tmp.resolve("out-marlhf-iter");
            assertThat(mout.resolve("reward_model/config.json")).exists();
            assertThat(Files.readAllLines(mout.resolve("metrics.jsonl"))).anyMatch(l -> l.contains("iter/current_iteration"));
        }
    }
}
