package comlrl.trainers.actorcritic;

import static comlrl.trainers.actorcritic.ActorCriticTrainerTest.tasks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import comlrl.generation.CausalLm;
import comlrl.generation.CausalLmWithValueHead;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import comlrl.trainers.TinyAgents;
import comlrl.trainers.TransitionContext;
import comlrl.trainers.common.ReferencePolicy;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The values an actor-critic update trains on, each recomputed here from what the test knows (the
 * reward function, the initial weights, the critics), not from another run of the trainer:
 * <pre>
 *   r'_t = r_t − β·KL_t,   KL = Σ_t (e^{d_t} − d_t − 1),  d_t = log p_ref(y_t) − log p_pol(y_t)
 *   y_t  = r'_t + γ·V_i,old(h_{t+1})  (t &lt; T−1),   y_{T−1} = r'_{T−1}
 *   A_t  = y_t − V_i,old(h_t)         (agent i's OWN critic)
 * </pre>
 * The rollout-time quantities are read in {@code metrics_callback} (called after the rollout, before
 * any update of that item's samples), the update's inputs through {@link
 * ActorCriticBuilder.UpdateObserver#minibatch}.
 */
class ActorCriticWiringTest {
    private static final double BETA = 2.0;
    /**
     * How far our KL may be from the trainer's: each is Σ_t (e^{d_t} − d_t − 1) over float32
     * log-probabilities scored in other batches/threads; ∂KL/∂d_t = e^{d_t} − 1, below e − 1 for
     * |d_t| ≤ 1, and d_t = ref − pol moves by at most the sum bound of both sides
     * ({@link comlrl.tensor.Rounding#logprobSumBound}: completions of at most 6 tokens on the tiny agents,
     * V = 515, K = 64 terms, L = 2 layers, logits below 1).
     */
    private static final double KL_TOLERANCE = (Math.E - 1) * 2 * comlrl.tensor.Rounding.logprobSumBound(6, 515, 64, 2,
            1.0, 1.0);

    @TempDir
    static Path models;
    static Path agent;
    static Path other;

    @BeforeAll
    static void agents() {
        List<Long> printable = java.util.stream.LongStream.rangeClosed(33, 126).boxed().toList();
        agent = TinyAgents.create(models.resolve("agent"), 11, printable);
        other = TinyAgents.create(models.resolve("other"), 12, printable);
    }

    /** A sample's identity across the callback and the update. */
    private static String key(RolloutSample s) {
        return s.item().get("prompt") + "|" + s.agentIdx() + "|" + s.turnIdx() + "|" + s.generationIdx();
    }

    /** Records every minibatch an update received. */
    private static final class Minibatches implements ActorCriticBuilder.UpdateObserver {
        final List<RolloutSample> seen = new ArrayList<>();

        @Override
        public void beforeStep(int agentIndex, String which, List<Tensor> parameters) {
        }

        @Override
        public void minibatch(int agentIndex, List<RolloutSample> minibatch) {
            assertThat(minibatch).allSatisfy(s -> assertThat(s.agentIdx()).isEqualTo(agentIndex));
            seen.addAll(minibatch);
        }
    }

    /**
     * In the callback: per sample, {@code r − β·KL} with KL scored here between the actor as it sampled
     * and {@code reference} (a fresh load of the initial weights), each agent's completions of a turn in
     * one batch, as the trainer scores them (within {@link #KL_TOLERANCE}, the targets within β times it).
     */
    private static ActorCriticTrainerBase.MetricsCallback shapedTargets(List<CausalLm> policies, CausalLm reference,
            ToDoubleFunction<RolloutSample> reward, Map<String, Double> expected, List<Double> kls) {
        return rollouts -> {
            for (RolloutSample s : rollouts) {
                List<RolloutSample> group = rollouts.stream().filter(x -> x.agentIdx() == s.agentIdx()
                        && x.turnIdx() == s.turnIdx()).toList();
                CausalLm policy = policies.get(s.agentIdx());
                double kl = ReferencePolicy.kls(policy.model(), reference.model(), s.promptIds(),
                        group.stream().map(RolloutSample::responseIds).toList(), policy.padId())[s.generationIdx()];
                double y = reward.applyAsDouble(s) - BETA * kl;
                assertThat(s.referenceKl()).isCloseTo(kl, within(KL_TOLERANCE));
                assertThat(s.valueTarget()).isCloseTo(y, within(BETA * KL_TOLERANCE));
                expected.put(key(s), y);
                kls.add(kl);
            }
            return Map.of();
        };
    }

    /** Every minibatch sample trains on the target worked out at rollout time and {@code A = y − V_old}. */
    private static void assertUpdatesUse(Minibatches updates, Map<String, Double> expected, List<Double> kls) {
        // after the first update the policy left the reference: the sign of β·KL shows in the targets
        // (+β·KL instead of −β·KL moves a target by 2β·KL, twenty times the tolerance or more)
        assertThat(kls.stream().mapToDouble(Double::doubleValue).max().orElse(0)).isGreaterThan(10 * KL_TOLERANCE);
        assertThat(updates.seen).hasSize(expected.size());
        for (RolloutSample s : updates.seen) {
            assertThat(s.valueTarget()).isCloseTo(expected.get(key(s)), within(BETA * KL_TOLERANCE));
            assertThat(s.advantage()).isCloseTo(expected.get(key(s)) - s.oldValue(), within(BETA * KL_TOLERANCE));
        }
    }

    @Test
    void iacTrainsOnTheRewardMinusBetaTimesTheReferenceKl() {
        Map<String, Double> expected = new LinkedHashMap<>();
        List<Double> kls = new ArrayList<>();
        Minibatches updates = new Minibatches();
        IACConfig config = IACConfig.builder().numAgents(1).numTurns(1).numTrainEpochs(1).numGenerations(2)
                .maxNewTokens(6).temperature(1.0).topP(1.0).topK(0).rolloutBufferSize(2).trainBatchSize(2).evalInterval(0)
                .agentLearningRate(2e-2).criticLearningRate(1e-3).referenceKlEnabled(true).referenceKlCoef(BETA).seed(3)
                .build();
        try (CausalLm reference = TinyAgents.load(agent); Scope s = Scope.open()) {
            List<CausalLm> policies = new ArrayList<>();
            try (IACTrainer t = IACTrainer.builder().agentModel(agent.toString()).criticModel(other.toString())
                    .rewardFunc(comlrl.trainers.TestRewards.ownLength()).trainDataset(tasks(3)).args(config)
                    .verbose(false).observer(updates).metricsCallback(shapedTargets(policies, reference,
                            x -> x.completion().length() / 10.0, expected, kls)).build()) {
                policies.addAll(t.policies());
                t.train();
            }
        }
        assertUpdatesUse(updates, expected, kls);
    }

    @Test
    void maacTrainsOnTheRewardMinusBetaTimesTheReferenceKl() {
        Map<String, Double> expected = new LinkedHashMap<>();
        List<Double> kls = new ArrayList<>();
        Minibatches updates = new Minibatches();
        MAACConfig config = MAACConfig.builder().numAgents(2).numTurns(1).numTrainEpochs(1).numGenerations(2)
                .maxNewTokens(6).temperature(1.0).topP(1.0).topK(0).rolloutBufferSize(2).trainBatchSize(2).evalInterval(0)
                .agentLearningRate(2e-2).criticLearningRate(1e-3).referenceKlEnabled(true).referenceKlCoef(BETA).seed(5)
                .build();
        // one homogeneous team: both agents start from (and are referenced to) the same initial weights
        try (CausalLm reference = TinyAgents.load(agent); Scope s = Scope.open()) {
            List<CausalLm> policies = new ArrayList<>();
            List<RolloutSample> current = new ArrayList<>();
            // reward of joint action k: (len c_1,k − len c_0,k) / 10 for both agents
            ToDoubleFunction<RolloutSample> reward = x -> {
                String[] c = new String[2];
                current.stream().filter(y -> y.turnIdx() == x.turnIdx() && y.generationIdx() == x.generationIdx())
                        .forEach(y -> c[y.agentIdx()] = y.completion());
                return (c[1].length() - c[0].length()) / 10.0;
            };
            ActorCriticTrainerBase.MetricsCallback check = shapedTargets(policies, reference, reward, expected, kls);
            try (MAACTrainer t = MAACTrainer.builder().agentModel(agent.toString()).criticModel(other.toString())
                    .rewardFunc(ActorCriticTrainerTest.lengthDifference()).trainDataset(tasks(3)).args(config)
                    .verbose(false).observer(updates).metricsCallback(r -> {
                        current.clear();
                        current.addAll(r);
                        return check.apply(r);
                    }).build()) {
                policies.addAll(t.policies());
                t.train();
            }
        }
        assertUpdatesUse(updates, expected, kls);
    }

    /** V of a prompt at its last token under one critic and its head, as the trainer reads it (one row). */
    private static double value(CausalLmWithValueHead critic, long[] promptIds) {
        try (Scope s = Scope.open(); comlrl.tensor.GradMode g = comlrl.tensor.GradMode.noGrad()) {
            return ActorCriticUpdateTest.value(critic.model(), critic.valueHead(), promptIds, new long[0]).item();
        }
    }

    /**
     * Two agents with two different critics over two turns: each agent's old values are its own
     * critic's, and its TD target {@code y_0 = r_0 + γ·V_i(h_1)} and advantage {@code A = y − V_i(h_t)}
     * use them. The values are float32 of the same one-row forward pass the trainer runs (agreement
     * within 1e-6); the two critics' values of the same prompt differ by far more, so taking the
     * other agent's critic fails.
     */
    @Test
    void eachIacAgentsTargetsAndAdvantagesUseItsOwnCritic() {
        Map<String, Double> expectedAdvantage = new LinkedHashMap<>();
        Minibatches updates = new Minibatches();
        IACConfig config = IACConfig.builder().numAgents(2).numTurns(2).numTrainEpochs(1).numGenerations(1)
                .maxNewTokens(6).temperature(1.0).topP(1.0).topK(0).rolloutBufferSize(2).trainBatchSize(1).evalInterval(0)
                .earlyTerminationThreshold(null).agentLearningRate(1e-3).criticLearningRate(1e-2).seed(9).build();
        List<CausalLmWithValueHead> critics = new ArrayList<>();
        List<Double> gaps = new ArrayList<>();
        double gamma = config.discount();
        try (IACTrainer t = IACTrainer.builder().agentModel(agent.toString())
                .critics(List.of(agent.toString(), other.toString())).rewardFunc(ActorCriticTrainerTest.lengthDifference())
                .externalTransition((TransitionContext c) -> c.agentCompletions().stream().map(x -> "Go on: " + x).toList())
                .trainDataset(tasks(2)).args(config).verbose(false).observer(updates).metricsCallback(r -> {
                    for (RolloutSample s : r) {
                        int i = s.agentIdx();
                        double own = value(critics.get(i), s.promptIds());
                        gaps.add(Math.abs(own - value(critics.get(1 - i), s.promptIds())));
                        assertThat(s.oldValue()).isCloseTo(own, within(1e-6));
                        double y = s.reward();
                        if (s.turnIdx() == 0) {
                            RolloutSample next = r.stream().filter(x -> x.agentIdx() == i && x.turnIdx() == 1)
                                    .findFirst().orElseThrow();
                            y += gamma * value(critics.get(i), next.promptIds());
                        }
                        assertThat(s.valueTarget()).isCloseTo(y, within(1e-6));
                        expectedAdvantage.put(key(s), y - own);
                    }
                    return Map.of();
                }).build()) {
            critics.addAll(t.critics());
            t.train();
        }
        assertThat(gaps).allSatisfy(g -> assertThat(g).isGreaterThan(1e-4));
        assertThat(updates.seen).hasSize(8); // 2 items × 2 agents × 2 turns, one sample per update group
        for (RolloutSample s : updates.seen) {
            // groups of one sample: Â = A, not normalised
            assertThat(s.normalizedAdvantage()).isCloseTo(expectedAdvantage.get(key(s)), within(1e-6));
        }
    }

    /** Each agent's minibatch samples, by agent. */
    private static Map<Integer, List<RolloutSample>> byAgent(List<RolloutSample> samples) {
        Map<Integer, List<RolloutSample>> out = new java.util.TreeMap<>();
        samples.forEach(s -> out.computeIfAbsent(s.agentIdx(), i -> new ArrayList<>()).add(s));
        return out;
    }

    /** {@link ActorCriticLoss#explainedVariance} of what an update read: its targets y and old values V_old. */
    private static double explainedVariance(List<RolloutSample> samples) {
        return ActorCriticLoss.explainedVariance(samples.stream().mapToDouble(RolloutSample::valueTarget).toArray(),
                samples.stream().mapToDouble(RolloutSample::oldValue).toArray());
    }

    /** The one training event that holds {@code key}. */
    private static Map<String, Double> eventWith(List<Map<String, Double>> log, String key) {
        List<Map<String, Double>> events = log.stream().filter(e -> e.containsKey(key)).toList();
        assertThat(events).hasSize(1);
        return events.get(0);
    }

    /**
     * IAC logs each agent's explained variance of its update (one turn group of G = 4 samples) and
     * their mean; the same sums in another order (the shuffle) agree to double rounding (1e-12).
     */
    @Test
    void iacLogsEachAgentsExplainedVarianceOfTheTargetsItsUpdateRead() {
        Minibatches updates = new Minibatches();
        IACConfig config = IACConfig.builder().numAgents(2).numTurns(1).numTrainEpochs(1).numGenerations(4)
                .maxNewTokens(6).temperature(1.0).topP(1.0).topK(0).rolloutBufferSize(4).trainBatchSize(2).evalInterval(0)
                .seed(3).build();
        List<Map<String, Double>> log;
        try (IACTrainer t = IACTrainer.builder().agents(List.of(agent.toString(), other.toString()))
                .critics(List.of(agent.toString(), other.toString())).rewardFunc(ActorCriticTrainerTest.lengthDifference())
                .trainDataset(tasks(1)).args(config).verbose(false).observer(updates).build()) {
            t.train();
            log = t.logHistory();
        }
        Map<Integer, List<RolloutSample>> seen = byAgent(updates.seen);
        Map<String, Double> event = eventWith(log, "turn_1/explained_variance");
        double ev0 = explainedVariance(seen.get(0));
        double ev1 = explainedVariance(seen.get(1));
        assertThat(ev0).isNotNaN().isNotEqualTo(ev1);
        assertThat(event.get("agent_0/turn_1/explained_variance")).isCloseTo(ev0, within(1e-12));
        assertThat(event.get("agent_1/turn_1/explained_variance")).isCloseTo(ev1, within(1e-12));
        assertThat(event.get("turn_1/explained_variance")).isCloseTo((ev0 + ev1) / 2, within(1e-12));
    }

    /**
     * MAAC's one critic: {@code turn_1/explained_variance} over every sample of the agents updated
     * together (its whole batch), the per-agent values beside it. The agents' targets differ through
     * their reference KLs after the first update (the second item's event), so the batch's value is
     * not the mean of the agents'. Absent where Var[y] = 0 (groups of one sample: two turns of G = 1,
     * one item per update).
     */
    @Test
    void maacLogsTheCriticsExplainedVarianceOverEveryAgentsSamples() {
        Minibatches updates = new Minibatches();
        MAACConfig config = MAACConfig.builder().numAgents(2).numTurns(1).numTrainEpochs(1).numGenerations(4)
                .maxNewTokens(6).temperature(1.0).topP(1.0).topK(0).rolloutBufferSize(4).trainBatchSize(4).evalInterval(0)
                .agentLearningRate(2e-2).referenceKlEnabled(true).referenceKlCoef(BETA).criticType("q").seed(5).build();
        List<Map<String, Double>> log;
        try (MAACTrainer t = MAACTrainer.builder().agents(List.of(agent.toString(), other.toString()))
                .criticModel(other.toString()).rewardFunc(ActorCriticTrainerTest.lengthDifference())
                .trainDataset(tasks(2)).args(config).verbose(false).observer(updates).build()) {
            t.train();
            log = t.logHistory();
        }
        List<Map<String, Double>> events = log.stream().filter(e -> e.containsKey("turn_1/explained_variance")).toList();
        assertThat(events).hasSize(2);
        Map<String, Double> second = events.get(1);
        List<RolloutSample> batch = updates.seen.subList(8, 16); // the second item: 4 samples of each agent
        Map<Integer, List<RolloutSample>> seen = byAgent(batch);
        double pooled = explainedVariance(batch);
        double ev0 = explainedVariance(seen.get(0));
        double ev1 = explainedVariance(seen.get(1));
        assertThat(Math.abs(pooled - (ev0 + ev1) / 2)).isGreaterThan(1e-6);
        assertThat(second.get("turn_1/explained_variance")).isCloseTo(pooled, within(1e-12));
        assertThat(second.get("agent_0/turn_1/explained_variance")).isCloseTo(ev0, within(1e-12));
        assertThat(second.get("agent_1/turn_1/explained_variance")).isCloseTo(ev1, within(1e-12));

        MAACConfig single = config.toBuilder().numTurns(2).numGenerations(1).rolloutBufferSize(2).trainBatchSize(1)
                .earlyTerminationThreshold(null).referenceKlEnabled(false).build();
        try (MAACTrainer t = MAACTrainer.builder().agents(List.of(agent.toString(), other.toString()))
                .criticModel(other.toString()).rewardFunc(ActorCriticTrainerTest.lengthDifference())
                .externalTransition((TransitionContext c) -> c.agentCompletions()).trainDataset(tasks(1)).args(single)
                .verbose(false).build()) {
            t.train();
            assertThat(t.logHistory()).anySatisfy(e -> assertThat(e).containsKey("turn_2/value_loss"))
                    .allSatisfy(e -> assertThat(e.keySet()).noneMatch(k -> k.contains("explained_variance")));
        }
    }
}
