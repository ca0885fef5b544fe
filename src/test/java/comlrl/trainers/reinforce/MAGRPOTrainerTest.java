package comlrl.trainers.reinforce;

import static comlrl.trainers.reinforce.ReinforceFixtures.fast;
import static comlrl.trainers.reinforce.ReinforceFixtures.lengthDifference;
import static comlrl.trainers.reinforce.ReinforceFixtures.snapshot;
import static comlrl.trainers.reinforce.ReinforceFixtures.tasks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.generation.CausalLm;
import comlrl.reward.RewardFunction;
import comlrl.rl.JointMode;
import comlrl.trainers.TinyAgents;
import comlrl.trainers.TransitionContext;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * MAGRPO on tiny random agents: a run trains every parameter and logs the spec's metric keys;
 * env_step accounting; multi-turn trees; the constructor's rules, checked before any model loads.
 */
class MAGRPOTrainerTest {
    private static final String MISSING = "/nonexistent/comlrl-test-model";

    @TempDir
    static Path models;
    static Path agentA;
    static Path agentB;

    @BeforeAll
    static void writeAgents() {
        agentA = TinyAgents.create(models.resolve("a"), 1);
        agentB = TinyAgents.create(models.resolve("b"), 2);
    }

    /** Records every call of the wrapped reward: the joint action (one completion per agent) and its reward. */
    static final class RecordingReward implements RewardFunction {
        final RewardFunction inner;
        final List<List<String>> joints = Collections.synchronizedList(new ArrayList<>());
        final List<Double> rewards = Collections.synchronizedList(new ArrayList<>());

        RecordingReward(RewardFunction inner) {
            this.inner = inner;
        }

        @Override
        public List<Double> score(List<List<String>> agentCompletions, List<comlrl.data.TaskItem> batchItems) {
            List<Double> r = inner.score(agentCompletions, batchItems);
            List<String> joint = new ArrayList<>();
            agentCompletions.forEach(c -> joint.add(c.get(0)));
            joints.add(joint);
            rewards.add(r.get(0));
            return r;
        }
    }

    private static double mean(List<Double> xs) {
        return xs.stream().mapToDouble(Double::doubleValue).average().orElseThrow();
    }

    @Test
    void twoAgentsTrainEveryParameterAndLogTheSpecKeys(@TempDir Path out) throws Exception {
        Map<String, float[]> before0;
        Map<String, float[]> before1;
        try (CausalLm a = TinyAgents.load(agentA); CausalLm b = TinyAgents.load(agentB)) {
            before0 = snapshot(a);
            before1 = snapshot(b);
        }
        MAGRPOConfig config = fast(MAGRPOConfig.builder()).numTrainEpochs(2).rolloutBufferSize(1)
                .evalInterval(1).build();
        try (MAGRPOTrainer trainer = MAGRPOTrainer.builder().agents(List.of(agentA.toString(), agentB.toString()))
                .rewardFunc(lengthDifference()).trainDataset(tasks(2)).evalDataset(tasks(1)).args(config)
                .outputDir(out).verbose(false).build()) {
            trainer.train();

            // env_step = |D|·G·epochs (aligned)
            assertThat(trainer.envStep()).isEqualTo(2L * 2 * 2);

            // every parameter tensor of both agents moved by more than AdamW's weight decay alone
            double lr = config.agentLearningRate();
            List<Map<String, float[]>> before = List.of(before0, before1);
            for (int i = 0; i < 2; i++) {
                Map<String, float[]> after = snapshot(trainer.agents().get(i));
                assertThat(after.keySet()).isEqualTo(before.get(i).keySet());
                for (Map.Entry<String, float[]> e : before.get(i).entrySet()) {
                    float[] p0 = e.getValue();
                    float[] p1 = after.get(e.getKey());
                    double moved = 0;
                    for (int j = 0; j < p0.length; j++) {
                        moved = Math.max(moved, Math.abs(p1[j] - p0[j] * (1 - lr * 0.01)));
                    }
                    assertThat(moved).as("agent %d parameter %s received no gradient step", i, e.getKey())
                            .isGreaterThan(lr / 100);
                }
            }

            List<Map<String, Double>> history = trainer.logHistory();
            List<Map<String, Double>> train = history.stream().filter(m -> m.containsKey("turn_1/reward_mean")).toList();
            List<Map<String, Double>> eval = history.stream().filter(m -> m.containsKey("eval/turn_1/reward_mean")).toList();
            assertThat(train).hasSize(4); // one drain per item (buffer size 1), logging_steps 1
            assertThat(eval).hasSize(4);  // before every item (eval_interval 1)
            for (Map<String, Double> m : train) {
                assertThat(m).containsKeys("env_step", "turn_1/reward_mean", "turn_1/expected_return",
                        "turn_1/policy_loss", "agent_0/turn_1/reward_mean", "agent_0/turn_1/expected_return",
                        "agent_0/turn_1/policy_loss", "agent_1/turn_1/reward_mean", "agent_1/turn_1/policy_loss");
                m.values().forEach(v -> assertThat(v).isFinite());
                // aggregate keys average the agents
                assertThat(m.get("turn_1/policy_loss")).isCloseTo(
                        (m.get("agent_0/turn_1/policy_loss") + m.get("agent_1/turn_1/policy_loss")) / 2, within(1e-12));
            }
            assertThat(train.stream().map(m -> m.get("env_step")).toList()).containsExactly(2.0, 4.0, 6.0, 8.0);
            assertThat(eval.get(0)).containsKey("eval/turn_1/expected_return");

            // the same events in metrics.jsonl
            List<String> lines = Files.readAllLines(out.resolve("metrics.jsonl"));
            assertThat(lines).hasSize(history.size());
            ObjectMapper json = new ObjectMapper();
            for (int j = 0; j < lines.size(); j++) {
                JsonNode node = json.readTree(lines.get(j));
                for (Map.Entry<String, Double> e : history.get(j).entrySet()) {
                    assertThat(node.has(e.getKey())).as("line %d has %s", j, e.getKey()).isTrue();
                    assertThat(node.get(e.getKey()).asDouble()).isCloseTo(e.getValue(), within(1e-9));
                }
            }
        }
    }

    @Test
    void theLogHistoryKeepsOnlyTheLatestEvents(@TempDir Path out) throws Exception {
        // 6 items, one logged drain each: the trainer keeps the last 3 events, metrics.jsonl all 6
        MAGRPOConfig config = fast(MAGRPOConfig.builder()).rolloutBufferSize(1).build();
        try (MAGRPOTrainer trainer = MAGRPOTrainer.builder().agentModel(agentA.toString()).numAgents(1)
                .rewardFunc(RewardFunction.ignoringItems(c -> List.of((double) c.get(0).get(0).length())))
                .trainDataset(tasks(6)).args(config).outputDir(out).logHistoryLimit(3).verbose(false).build()) {
            trainer.train();
            assertThat(trainer.logHistory()).hasSize(3);
            assertThat(trainer.logHistory().stream().map(m -> m.get("env_step")).toList()).containsExactly(8.0, 10.0, 12.0);
        }
        assertThat(Files.readAllLines(out.resolve("metrics.jsonl"))).hasSize(6);
        assertThatThrownBy(() -> MAGRPOTrainer.builder().agentModel(MISSING).rewardFunc(lengthDifference())
                .trainDataset(tasks(1)).args(fast(MAGRPOConfig.builder()).build()).logHistoryLimit(-1).build())
                .hasMessageContaining("log_history_limit must be >= 0");
    }

    /**
     * A builder given task data the formatters cannot read fails before any model loads (the agent
     * path does not exist, so loading would fail otherwise), naming the set, the row and the field.
     */
    @Test
    void taskDataTheFormattersCannotReadIsRefusedBeforeAnyModelLoads(@TempDir Path out) {
        java.util.Map<String, Object> nullPrompt = new java.util.HashMap<>();
        nullPrompt.put("prompt", null);
        java.util.List<java.util.Map<String, ?>> rows = List.of(java.util.Map.of("prompt", "fine"),
                java.util.Map.of("question", "no prompt here"), nullPrompt, java.util.Map.of("prompt", 42));
        for (int bad = 1; bad < rows.size(); bad++) {
            comlrl.data.Dataset tasks = comlrl.data.Dataset.fromRows(List.of(rows.get(0), rows.get(bad)));
            assertThatThrownBy(() -> MAGRPOTrainer.builder().agentModel(MISSING).numAgents(1).rewardFunc(lengthDifference())
                    .trainDataset(tasks).args(fast(MAGRPOConfig.builder()).build()).outputDir(out).verbose(false).build())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("the training set: ")
                    .hasMessageContaining("row 2").hasMessageContaining("'prompt'");
        }
        assertThatThrownBy(() -> MAGRPOTrainer.builder().agentModel(MISSING).numAgents(1).rewardFunc(lengthDifference())
                .trainDataset(tasks(1)).evalDataset(comlrl.data.Dataset.empty()).args(fast(MAGRPOConfig.builder()).build())
                .outputDir(out).verbose(false).build())
                .hasMessageStartingWith("the evaluation set: ");
    }

    @Test
    void crossModeScoresEveryCombinationAndLogsTheirMean() {
        RecordingReward reward = new RecordingReward(lengthDifference());
        MAGRPOConfig config = fast(MAGRPOConfig.builder()).jointMode(JointMode.CROSS).numGenerations(3).build();
        try (MAGRPOTrainer trainer = MAGRPOTrainer.builder().agents(List.of(agentA.toString(), agentB.toString()))
                .rewardFunc(reward).trainDataset(tasks(2)).args(config).verbose(false).build()) {
            trainer.train();
            // env_step = |D|·G^N·epochs
            assertThat(trainer.envStep()).isEqualTo(2L * 9);
            assertThat(reward.rewards).hasSize(18);
            // both items' nodes drain together (rollout_buffer_size 2): reward_mean = mean of node means
            Map<String, Double> m = trainer.logHistory().get(0);
            assertThat(m.get("env_step")).isEqualTo(18.0);
            assertThat(m.get("turn_1/reward_mean")).isCloseTo(mean(reward.rewards), within(1e-12));
            // every combination of agent 0's and agent 1's completions was scored once per item
            for (int item = 0; item < 2; item++) {
                List<List<String>> joints = reward.joints.subList(item * 9, item * 9 + 9);
                for (int j = 0; j < 9; j++) {
                    assertThat(joints.get(j).get(0)).isEqualTo(joints.get(j / 3 * 3).get(0)); // agent 0 slowest
                    assertThat(joints.get(j).get(1)).isEqualTo(joints.get(j % 3).get(1));
                }
            }
        }
    }

    @Test
    void multiTurnBuildsTheTreeAndLogsBothTurns() {
        RecordingReward reward = new RecordingReward(lengthDifference());
        List<TransitionContext> calls = new ArrayList<>();
        MAGRPOConfig config = fast(MAGRPOConfig.builder()).numTurns(2).earlyTerminationThreshold(null)
                .rolloutBufferSize(1).build();
        try (MAGRPOTrainer trainer = MAGRPOTrainer.builder().agents(List.of(agentA.toString(), agentB.toString()))
                .rewardFunc(reward).trainDataset(tasks(1)).evalDataset(tasks(1)).args(config)
                .externalTransition(ctx -> {
                    calls.add(ctx);
                    return ctx.agentCompletions().stream().map(c -> "Improve: " + c).toList();
                })
                .verbose(false).build()) {
            trainer.train();

            // root: G joint actions, then one child node per joint action with G more: 2 + 2·2
            assertThat(trainer.envStep()).isEqualTo(6);
            assertThat(reward.rewards).hasSize(6);
            assertThat(calls).hasSize(2);
            for (int k = 0; k < 2; k++) {
                TransitionContext ctx = calls.get(k);
                assertThat(ctx.numAgents()).isEqualTo(2);
                assertThat(ctx.prompt()).isEqualTo("Write a story about a cat.");
                assertThat(ctx.agentCompletions()).isEqualTo(reward.joints.get(k));
                for (int i = 0; i < 2; i++) {
                    assertThat(ctx.promptHistoryPerAgent().get(i)).containsExactly("Write a story about a cat.");
                    assertThat(ctx.responseHistoryPerAgent().get(i)).containsExactly(reward.joints.get(k).get(i));
                }
            }

            // one event (one item); every drain of turn 2 (buffer size 1: two per agent) is in it
            List<Map<String, Double>> history = trainer.logHistory();
            assertThat(history).hasSize(1);
            Map<String, Double> m = history.get(0);
            assertThat(m).containsKeys("turn_2/reward_mean", "turn_2/expected_return", "turn_2/policy_loss",
                    "agent_0/turn_2/reward_mean", "agent_1/turn_2/expected_return");
            List<Double> r = reward.rewards;
            double child0 = (r.get(2) + r.get(3)) / 2;
            double child1 = (r.get(4) + r.get(5)) / 2;
            assertThat(m.get("turn_1/reward_mean")).isCloseTo((r.get(0) + r.get(1)) / 2, within(1e-12));
            assertThat(m.get("turn_2/reward_mean")).isCloseTo((child0 + child1) / 2, within(1e-12));
            assertThat(m.get("turn_2/expected_return")).isCloseTo((child0 + child1) / 2, within(1e-12));
            // R_k = r_k + mean(R of child k), undiscounted
            assertThat(m.get("turn_1/expected_return"))
                    .isCloseTo(((r.get(0) + child0) + (r.get(1) + child1)) / 2, within(1e-12));

            Map<String, Double> eval = trainer.evaluate(1);
            assertThat(eval).containsKeys("eval/turn_1/reward_mean", "eval/turn_2/reward_mean",
                    "eval/turn_1/expected_return", "eval/turn_2/expected_return");
            assertThat(eval.get("eval/turn_1/expected_return")).isCloseTo(
                    eval.get("eval/turn_1/reward_mean") + eval.get("eval/turn_2/reward_mean"), within(1e-12));
            assertThat(calls).hasSize(3); // evaluation follows its single path
        }
    }

    @Test
    void transitionReturningTheWrongNumberOfPromptsFails() {
        MAGRPOConfig config = fast(MAGRPOConfig.builder()).numTurns(2).earlyTerminationThreshold(null).build();
        try (MAGRPOTrainer trainer = MAGRPOTrainer.builder().agentModel(agentA.toString()).numAgents(2)
                .rewardFunc(lengthDifference()).trainDataset(tasks(1)).args(config)
                .externalTransition(ctx -> List.of("only one prompt")).verbose(false).build()) {
            assertThatThrownBy(trainer::train).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("External transition must return per-agent prompts");
        }
    }

    @Test
    void maxNewTokensBeyondAnAgentsContextIsRefusedAtConstruction() {
        MAGRPOConfig config = fast(MAGRPOConfig.builder()).maxNewTokens(512).build(); // the agents' context is 512
        assertThatThrownBy(() -> MAGRPOTrainer.builder().agentModel(agentA.toString()).numAgents(1)
                .rewardFunc(lengthDifference()).trainDataset(tasks(1)).args(config).verbose(false).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("max_new_tokens 512 does not fit agent 0's context of 512 positions");
    }

    @Test
    void multiTurnWithoutTransitionFailsBeforeAnyModelLoads() {
        MAGRPOConfig config = fast(MAGRPOConfig.builder()).numTurns(2).build();
        assertThatThrownBy(() -> MAGRPOTrainer.builder().agentModel(MISSING).rewardFunc(lengthDifference())
                .trainDataset(tasks(1)).args(config).verbose(false).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("Multi-turn MAGRPO requires an external_transition.");
    }

    // ------------------------------------------------------------------ agent sources (spec §6.1)

    private static MAGRPOTrainer.Builder base() {
        return MAGRPOTrainer.builder().rewardFunc(lengthDifference()).trainDataset(tasks(1))
                .args(fast(MAGRPOConfig.builder()).build()).verbose(false);
    }

    @Test
    void neitherAgentModelNorAgentsIsAnError() {
        assertThatThrownBy(() -> base().build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("Either agent_model or agents must be provided.");
    }

    @Test
    void agentModelAndAgentsNamingDifferentModelsConflict() {
        assertThatThrownBy(() -> base().agentModel(MISSING).agents(List.of(MISSING, MISSING + "-other")).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("conflict");
    }

    @Test
    void agentModelAndMatchingAgentsAreAccepted() {
        try (MAGRPOTrainer trainer = base().agentModel(agentA.toString())
                .agents(List.of(agentA.toString(), agentA.toString())).build()) {
            assertThat(trainer.numAgents()).isEqualTo(2);
            assertThat(trainer.agents().get(0)).isNotSameAs(trainer.agents().get(1)); // one load per agent
        }
    }

    @Test
    void agentsLengthMustMatchNumAgents() {
        assertThatThrownBy(() -> base().numAgents(2).agents(List.of(MISSING, MISSING, MISSING)).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("agents length (3) must match num_agents");
    }

    @Test
    void anAgentOfAnUnknownTypeFailsBeforeAnyModelLoads() {
        assertThatThrownBy(() -> base().agents(List.of(MISSING, 42)).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("agents[1] must be a model id/directory");
    }

    @Test
    void missingRewardFunctionIsAnError() {
        assertThatThrownBy(() -> MAGRPOTrainer.builder().agentModel(MISSING).trainDataset(tasks(1))
                .args(fast(MAGRPOConfig.builder()).build()).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("reward_func must be provided");
    }

    @Test
    void withoutAConstructorCountTheConfigsNumAgentsIsUsed() {
        MAGRPOConfig config = fast(MAGRPOConfig.builder()).numAgents(3).build();
        try (MAGRPOTrainer trainer = MAGRPOTrainer.builder().agentModel(agentA.toString())
                .rewardFunc(RewardFunction.ignoringItems(c -> List.of(0.0))).trainDataset(tasks(1)).args(config)
                .verbose(false).build()) {
            assertThat(trainer.numAgents()).isEqualTo(3);
        }
        // the constructor's num_agents wins over the config's
        try (MAGRPOTrainer trainer = MAGRPOTrainer.builder().agentModel(agentA.toString()).numAgents(1)
                .rewardFunc(RewardFunction.ignoringItems(c -> List.of(0.0))).trainDataset(tasks(1)).args(config)
                .verbose(false).build()) {
            assertThat(trainer.numAgents()).isEqualTo(1);
        }
    }
}
