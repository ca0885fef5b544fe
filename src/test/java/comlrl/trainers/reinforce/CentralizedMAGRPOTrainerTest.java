package comlrl.trainers.reinforce;

import static comlrl.trainers.reinforce.ReinforceFixtures.fast;
import static comlrl.trainers.reinforce.ReinforceFixtures.tasks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.data.Dataset;
import comlrl.data.TaskItem;
import comlrl.generation.CausalLm;
import comlrl.generation.Completion;
import comlrl.generation.Generator;
import comlrl.generation.SamplingConfig;
import comlrl.generation.Scorer;
import comlrl.logging.WandbStandIn;
import comlrl.reward.RewardFunction;
import comlrl.rl.AdvantageMode;
import comlrl.rl.Advantages;
import comlrl.tensor.GradMode;
import comlrl.tensor.Scope;
import comlrl.trainers.TinyAgents;
import comlrl.utils.Formatter;
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
 * Centralized MAGRPO: one actor on the joint prompt, rewards on parsed role outputs (all "" when
 * unparsable), MAGRPO's loss on the joint completion, one env step per joint sample, one saved agent.
 */
class CentralizedMAGRPOTrainerTest {
    private static final String MISSING = "/nonexistent/comlrl-test-model";
    private static final List<Formatter> ROLES = List.of(
            item -> "Briefly: " + item.getString("prompt"), item -> "In detail: " + item.getString("prompt"));

    @TempDir
    static Path models;
    static Path actor;

    @BeforeAll
    static void writeActor() {
        actor = TinyAgents.create(models.resolve("actor"), 31);
    }

    /**
     * Joint prompt "Roles:\n[1] p_1\n[2] p_2\n"; a joint completion of even length splits into its two
     * halves, one of odd length cannot be parsed. Records every call.
     */
    static final class HalvesAdapter implements CentralizedAdapter {
        final List<List<String>> rolePrompts = Collections.synchronizedList(new ArrayList<>());
        final List<String> parsed = Collections.synchronizedList(new ArrayList<>());

        @Override
        public String buildPrompt(TaskItem item, List<String> agentPrompts) {
            rolePrompts.add(agentPrompts);
            StringBuilder b = new StringBuilder("Roles:\n");
            for (int r = 0; r < agentPrompts.size(); r++) {
                b.append('[').append(r + 1).append("] ").append(agentPrompts.get(r)).append('\n');
            }
            return b.toString();
        }

        @Override
        public List<String> parseCompletion(String completion, TaskItem item, int numAgents) {
            parsed.add(completion);
            if (completion.length() % 2 == 1) {
                throw new IllegalArgumentException("odd length: no role boundary");
            }
            int half = completion.length() / 2;
            return List.of(completion.substring(0, half), completion.substring(half));
        }
    }

    /** Task reward of the two roles: (len(role 2) + 1) / 10; records the role outputs it saw. */
    static final class RoleReward implements RewardFunction {
        final List<List<String>> seen = Collections.synchronizedList(new ArrayList<>());

        @Override
        public List<Double> score(List<List<String>> roles, List<TaskItem> items) {
            assertThat(roles).hasSize(2);
            List<Double> out = new ArrayList<>();
            for (int k = 0; k < roles.get(0).size(); k++) {
                seen.add(List.of(roles.get(0).get(k), roles.get(1).get(k)));
                out.add((roles.get(1).get(k).length() + 1) / 10.0);
            }
            return out;
        }
    }

    private static MAGRPOConfig config() {
        return fast(CentralizedMAGRPOConfig.builder()).numAgents(2).numGenerations(4).maxNewTokens(8)
                .rolloutBufferSize(1).build();
    }

    @Test
    void trainsOneActorOnTheJointPromptWithRewardsOnParsedRoles(@TempDir Path checkpoints) {
        HalvesAdapter adapter = new HalvesAdapter();
        RoleReward reward = new RoleReward();
        List<List<List<String>>> evalRoles = new ArrayList<>();
        MAGRPOConfig config = config();
        Dataset data = tasks(2);
        double firstLoss;
        try (CentralizedMAGRPOTrainer trainer = CentralizedMAGRPOTrainer.builder().centralizedAdapter(adapter)
                .agentModel(actor.toString()).formatters(ROLES).rewardFunc(reward).trainDataset(data)
                .evalDataset(tasks(1)).evalLogger((completions, items, prompts) -> {
                    evalRoles.addAll(completions);
                    return List.of(Map.of("roles", (double) completions.size()));
                })
                .evalAggregator((rows, turns) -> Map.of("roles", rows.get(0).get("roles")))
                .args(config).verbose(false).build()) {
            assertThat(trainer.numAgents()).isEqualTo(1);
            assertThat(trainer.numRoles()).isEqualTo(2);
            assertThat(trainer.algorithmName()).isEqualTo("CentralizedMAGRPO");
            trainer.train(checkpoints, 1);

            // one env step per joint sample
            assertThat(trainer.envStep()).isEqualTo(2L * 4);
            // the joint prompt was built from every role's formatted prompt
            assertThat(adapter.rolePrompts.get(0))
                    .containsExactly("Briefly: Write a story about a cat.", "In detail: Write a story about a cat.");
            // the task reward saw each joint completion's parsed roles, or "" for every role
            assertThat(reward.seen).hasSize(8);
            assertThat(adapter.parsed).hasSize(8);
            int failures = 0;
            for (int k = 0; k < 8; k++) {
                String joint = adapter.parsed.get(k);
                if (joint.length() % 2 == 1) {
                    failures++;
                    assertThat(reward.seen.get(k)).containsExactly("", "");
                } else {
                    assertThat(String.join("", reward.seen.get(k))).isEqualTo(joint);
                }
            }
            assertThat(failures).as("both parse outcomes occur").isBetween(1, 7);

            List<Map<String, Double>> history = trainer.logHistory();
            assertThat(history).hasSize(2);
            assertThat(history.get(0)).containsKeys("turn_1/reward_mean", "turn_1/policy_loss",
                    "agent_0/turn_1/reward_mean").doesNotContainKey("agent_1/turn_1/reward_mean");
            firstLoss = history.get(0).get("turn_1/policy_loss");

            // evaluation hands role outputs ([role][item][turn]) to the eval logger
            Map<String, Double> eval = trainer.evaluate(1);
            assertThat(eval).containsKeys("eval/turn_1/reward_mean").containsEntry("eval/roles", 2.0);
            assertThat(evalRoles).hasSize(2);
            assertThat(evalRoles.get(0)).hasSize(1);
            assertThat(evalRoles.get(0).get(0)).hasSize(1);
        }
        // checkpoints hold the single actor
        assertThat(checkpoints.resolve("checkpoint-1/agent_0/config.json")).isRegularFile();
        assertThat(checkpoints.resolve("checkpoint-1/agent_1")).doesNotExist();

        // the first update's loss is MAGRPO's on the joint completions: (1/G) Σ_k −A_k · log π(y_k | joint prompt)
        try (CausalLm lm = TinyAgents.load(actor); Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
            String prompt = new HalvesAdapter().buildPrompt(data.get(0), List.of(ROLES.get(0).format(data.get(0)),
                    ROLES.get(1).format(data.get(0))));
            long[] promptIds = lm.encode(prompt);
            List<Completion> group = lm.generator().generate(List.of(promptIds),
                    SamplingConfig.sample(1.0, null, 1.0, 8, 4), Generator.rowSeed(config.seed(), 0, 0)).get(0);
            assertThat(group.stream().map(Completion::text).toList()).isEqualTo(adapter.parsed.subList(0, 4));
            double[] returns = reward.seen.subList(0, 4).stream().mapToDouble(r -> (r.get(1).length() + 1) / 10.0)
                    .toArray();
            double[] advantages = Advantages.compute(returns, AdvantageMode.MEAN, true);
            double loss = 0;
            for (int k = 0; k < 4; k++) {
                double logp = Scorer.score(lm.model(), List.of(promptIds), List.of(group.get(k).tokenIds()), lm.padId())
                        .sequenceLogprobs().item();
                loss += -advantages[k] * logp / 4;
            }
            assertThat(firstLoss).isCloseTo(loss, within(MAGRPOUpdateTest.LOSS_TOLERANCE)); // 8-token completions
        }
    }

    /**
     * Reference §3.7: the centralized run's W&amp;B config adds {@code collaboration_mode},
     * {@code num_roles} (N) and {@code num_actor_models} (1) to MAGRPO's, and carries no comparator field.
     */
    @Test
    void theWandbRunRecordsTheRolesAndTheOneActorModel(@TempDir Path tmp) throws Exception {
        Path received = tmp.resolve("received.jsonl");
        List<String> standIn = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                System.getProperty("java.class.path"), WandbStandIn.class.getName(), received.toString(), "ok");
        CentralizedMAGRPOTrainer.Builder b = CentralizedMAGRPOTrainer.builder();
        b.wandbConfig(Map.of("project", "centralized", "finish_timeout_s", 20)).wandbBridge(standIn);
        try (CentralizedMAGRPOTrainer t = b.centralizedAdapter(new HalvesAdapter()).agentModel(actor.toString())
                .formatters(ROLES).rewardFunc(new RoleReward()).trainDataset(tasks(1)).args(config())
                .outputDir(tmp.resolve("run")).verbose(false).build()) {
            assertThat(t.numRoles()).isEqualTo(2);
        }
        JsonNode init = new ObjectMapper().readTree(Files.readAllLines(received).get(0));
        assertThat(init.get("op").asText()).isEqualTo("init");
        JsonNode config = init.get("kwargs").get("config");
        assertThat(config.get("algorithm").asText()).isEqualTo(CentralizedMAGRPOTrainer.ALGORITHM_NAME);
        assertThat(config.get("collaboration_mode").asText()).isEqualTo("centralized");
        assertThat(config.path("num_roles").asInt(-1)).isEqualTo(2);
        assertThat(config.path("num_actor_models").asInt(-1)).isEqualTo(1);
        List<String> keys = new ArrayList<>();
        config.fieldNames().forEachRemaining(keys::add);
        assertThat(keys).noneMatch(k -> k.startsWith("comparator"));
    }

    @Test
    void rejectsWhatCannotWorkBeforeLoadingTheActor() {
        RoleReward reward = new RoleReward();
        HalvesAdapter adapter = new HalvesAdapter();
        assertThatThrownBy(() -> CentralizedMAGRPOTrainer.builder().centralizedAdapter(adapter).agentModel(MISSING)
                .rewardFunc(reward).trainDataset(tasks(1)).args(fast(MAGRPOConfig.builder()).numTurns(1).build()).build())
                .hasMessageContaining("requires a CentralizedMAGRPOConfig");
        assertThatThrownBy(() -> CentralizedMAGRPOTrainer.builder().centralizedAdapter(null).agentModel(MISSING)
                .rewardFunc(reward).trainDataset(tasks(1)).args(config()).build())
                .hasMessageContaining("centralized_adapter must be provided");
        assertThatThrownBy(() -> CentralizedMAGRPOTrainer.builder().centralizedAdapter(adapter)
                .agents(List.of(MISSING, MISSING)).rewardFunc(reward).trainDataset(tasks(1)).args(config()).build())
                .hasMessageContaining("agents must hold exactly 1 model, got 2");
        assertThatThrownBy(() -> CentralizedMAGRPOTrainer.builder().centralizedAdapter(adapter).numAgents(3)
                .agentModel(MISSING).rewardFunc(reward).trainDataset(tasks(1)).args(config()).build())
                .hasMessageContaining("num_agents (3) is the number of roles and must equal args.num_agents (2)");
        assertThatThrownBy(() -> CentralizedMAGRPOTrainer.builder().centralizedAdapter(adapter).agentModel(MISSING)
                .formatters(ROLES.subList(0, 1)).rewardFunc(reward).trainDataset(tasks(1)).args(config()).build())
                .hasMessageContaining("Number of formatters must match num_agents");
        assertThatThrownBy(() -> CentralizedMAGRPOTrainer.builder().centralizedAdapter(adapter).agentModel(MISSING)
                .trainDataset(tasks(1)).args(config()).build())
                .hasMessageContaining("reward_func must be provided");
    }

    @Test
    void anUnparsableCompletionGivesEveryRoleAnEmptyOutput() {
        HalvesAdapter adapter = new HalvesAdapter();
        TaskItem item = tasks(1).get(0);
        assertThat(CentralizedMAGRPOTrainer.splitRoles(adapter, "abc", item, 2)).containsExactly("", "");
        assertThat(CentralizedMAGRPOTrainer.splitRoles(adapter, "abcd", item, 2)).containsExactly("ab", "cd");
        CentralizedAdapter wrongCount = new CentralizedAdapter() {
            @Override
            public String buildPrompt(TaskItem i, List<String> p) {
                return "";
            }

            @Override
            public List<String> parseCompletion(String c, TaskItem i, int n) {
                return List.of(c);
            }
        };
        assertThatThrownBy(() -> CentralizedMAGRPOTrainer.splitRoles(wrongCount, "x", item, 2))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("must return 2 role outputs");
    }
}
