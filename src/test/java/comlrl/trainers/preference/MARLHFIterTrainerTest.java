package comlrl.trainers.preference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.rl.PairSelection;
import comlrl.trainers.TestRewards;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** MARLHFIter end to end on tiny agents: per iteration pairs, a fresh reward model, RL epochs; resume. */
class MARLHFIterTrainerTest {
    static MARLHFIterConfig.Builder config() {
        return MARLHFIterConfig.builder().numAgents(2).numIterations(2).numTrainEpochs(1).preferenceNumCandidates(4)
                .preferencePairsPerSample(2).numGenerations(2).maxNewTokens(6).temperature(1.0).topP(1.0).topK(0)
                .evalInterval(0).evalNumSamples(2).agentLearningRate(1e-3).rewardModelDevice("cpu")
                .set("reward_learning_rate", 1e-3).set("reward_train_batch_size", 2).loggingSteps(1).seed(9);
    }

    static MARLHFIterTrainer.Builder trainer(MARLHFIterConfig c, Path run) {
        MADPOTrainerTest.writeAgentsIfNeeded();
        return MARLHFIterTrainer.builder().agents(List.of(MADPOTrainerTest.agent.toString(), MADPOTrainerTest.other.toString()))
                .rewardFunc(TestRewards.lengthDifference()).trainDataset(MADPOTrainerTest.tasks(2))
                .evalDataset(MADPOTrainerTest.tasks(2)).args(c).outputDir(run).verbose(false);
    }

    /** Run from Java, it records itself as marlhf_iter (its MARLHF stage writes the record), not as marlhf. */
    @Test
    void recordsItsRunAsMarlhfIter(@TempDir Path run) throws Exception {
        try (MARLHFIterTrainer t = trainer(config().numIterations(1).build(), run).build()) {
            t.train();
        }
        com.fasterxml.jackson.databind.JsonNode cfg = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(run.resolve("config.json").toFile());
        assertThat(cfg.get("algorithm").asText()).isEqualTo("marlhf_iter");
        assertThat(comlrl.report.RunReport.read(run).algorithm()).isEqualTo("marlhf_iter");
        assertThat(comlrl.report.RunTimes.read(run).orElseThrow().trainS()).as("the iterations, timed").isPositive();
    }

    @Test
    void theIterativeDefaultsAndMarlhfsView() {
        MARLHFIterConfig c = MARLHFIterConfig.builder().rewardModelDevice("cpu").build();
        assertThat(c.numTrainEpochs()).isEqualTo(2);
        assertThat(c.marlhf().rewardNumTrainEpochs()).isEqualTo(2);
        assertThat(c.numIterations()).isEqualTo(6);
        assertThat(c.preferenceNumCandidates()).isEqualTo(20);
        assertThat(c.pairSelection()).isEqualTo(PairSelection.COMPARATOR_REWARD);
        assertThat(c.preferenceScoringReward()).isEqualTo(PreferenceScoringReward.TASK);
        assertThat(c.marlhf().rlAlgorithm()).isEqualTo(RlAlgorithm.MAGRPO);
        assertThat(MARLHFIterConfig.fromMap(Map.of("rl_algorithm", "marloo", "reward_model_device", "cpu")).advantageMode())
                .isEqualTo(comlrl.rl.AdvantageMode.RLOO);
        assertThatThrownBy(() -> MARLHFIterConfig.fromMap(Map.of("num_generations", 1, "reward_model_device", "cpu")))
                .hasMessageContaining("num_generations must be >= 2 for MAGRPO-family MARLHF backends");
        assertThatThrownBy(() -> MARLHFIterConfig.fromMap(Map.of("preference_scoring_reward", "judge")))
                .hasMessageContaining("preference_scoring_reward must be one of: task, reward_model");
    }

    @Test
    void eachIterationTrainsAFreshRewardModelThenTheBackend(@TempDir Path dir) {
        Path run = dir.resolve("run");
        try (MARLHFIterTrainer t = trainer(config().preferenceScoringReward("reward_model").build(), run).build()) {
            t.train();
            assertThat(t.iterationsDone()).isEqualTo(2);
            assertThat(t.replayDir().resolve("iteration_0002.json")).exists();
            assertThat(t.envStep()).isEqualTo(2 * 2 * 2); // 2 iterations × 1 epoch × 2 items × 2 generations
            assertThat(t.logHistory().stream().filter(e -> e.containsKey("reward_model/loss")).count()).isEqualTo(2);
            assertThat(t.logHistory()).anyMatch(e -> e.containsKey("iter/current_iteration"));
            assertThat(t.evaluate()).containsKey("eval/turn_1/reward_mean");
        }
        assertThat(run.resolve("reward_model/config.json")).exists();
    }

    @Test
    void centralizedCollaborationPerIteration(@TempDir Path dir) {
        List<String> prompts = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        MADPOTrainerTest.writeAgentsIfNeeded();
        try (MARLHFIterTrainer t = MARLHFIterTrainer.builder().agentModel(MADPOTrainerTest.agent.toString())
                .centralizedAdapter(MARLHFTrainerTest.secondRoleAnswers(prompts))
                .formatters(List.of(item -> "brief: " + item.getString("prompt"), item -> "long: " + item.getString("prompt")))
                .rewardFunc(TestRewards.lengthDifference()).trainDataset(MADPOTrainerTest.tasks(2))
                .args(config().collaborationMode("centralized").comparatorGenerationMode("centralized").build())
                .outputDir(dir.resolve("run")).verbose(false).build()) {
            assertThat(t.policies()).hasSize(1);
            t.train();
            assertThat(t.iterationsDone()).isEqualTo(2);
        }
        assertThat(prompts).contains("brief: Write a story about a cat. | long: Write a story about a cat.");
    }

    @Test
    void anApiComparatorServesEachIteration(@TempDir Path dir) throws Exception {
        String key = "sk-marlhf-iter-5150";
        try (LocalComparatorServer server = new LocalComparatorServer(List.of("a", "bb bb", "ccc ccc ccc", "d"))) {
            MARLHFIterConfig c = config().comparatorPolicy("api").set("comparator_api_url", server.url())
                    .set("comparator_api_key_env", "COMLRL_TEST_KEY_THAT_IS_NOT_SET").build();
            assertThatThrownBy(() -> trainer(c, dir.resolve("x")).build()).hasMessageContaining(
                    "COMLRL_TEST_KEY_THAT_IS_NOT_SET"); // a missing key variable fails before any model loads
            MARLHFIterConfig keyed = config().comparatorPolicy("api").set("comparator_api_url", server.url())
                    .set("comparator_api_key", key).build();
            try (MARLHFIterTrainer t = trainer(keyed, dir.resolve("run")).build()) {
                t.train(dir.resolve("ckpt"), 1);
                assertThat(t.iterationsDone()).isEqualTo(2);
            }
            assertThat(server.requests()).hasSize(2 * 2 * 2); // 2 iterations × 2 items × 2 agents
            MADPOIterTrainerTest.assertNoFileContains(dir, key);
        }
    }

    @Test
    void anIacBackendRunsPerIteration(@TempDir Path dir) {
        try (MARLHFIterTrainer t = trainer(config().rlAlgorithm("iac").numGenerations(1).build(), dir.resolve("run"))
                .build()) {
            assertThat(t.rlTrainer()).isInstanceOf(comlrl.trainers.actorcritic.IACTrainer.class);
            t.train();
            assertThat(t.envStep()).isEqualTo(2 * 2);
        }
    }

    @Test
    void resumingAtAnIterationBoundaryEqualsTheUninterruptedRun(@TempDir Path dir) {
        Map<String, String> straight;
        Map<String, String> straightReward;
        try (MARLHFIterTrainer t = trainer(config().numIterations(3).preferenceReplayMode("all_history").build(),
                dir.resolve("a")).build()) {
            t.train();
            straight = MADPOTrainerTest.digests(t.policies().get(1));
            straightReward = MARLHFTrainerTest.digests(t.rewardModel());
        }
        Path ckpt = dir.resolve("ckpt");
        try (MARLHFIterTrainer t = trainer(config().preferenceReplayMode("all_history").build(), dir.resolve("b")).build()) {
            t.train(ckpt, 1);
        }
        assertThat(ckpt.resolve("checkpoint-2/preference_replay/iteration_0002.json")).exists();
        assertThat(ckpt.resolve("checkpoint-2/reward_model/config.json")).exists();
        try (MARLHFIterTrainer t = trainer(config().numIterations(3).preferenceReplayMode("all_history").build(),
                dir.resolve("c")).build()) {
            t.train(ckpt, 1, ckpt.resolve("checkpoint-2"));
            assertThat(t.iterationsDone()).isEqualTo(3);
            assertThat(MADPOTrainerTest.digests(t.policies().get(1))).isEqualTo(straight);
            assertThat(MARLHFTrainerTest.digests(t.rewardModel())).isEqualTo(straightReward);
        }
    }
}
