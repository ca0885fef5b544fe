package comlrl.trainers.preference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import comlrl.generation.CausalLm;
import comlrl.generation.Scorer;
import comlrl.tensor.GradMode;
import comlrl.tensor.Rounding;
import comlrl.tensor.Scope;
import comlrl.trainers.TinyAgents;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What the DPO update of MADPO and MADPOIter measures its log-ratios against, by value: each batch's
 * pairs are scored in the test, one sequence at a time, under the live policy and under a fresh load
 * of the initial agents, and compared with the reference log-probabilities the batch carries and with
 * the implicit-reward metrics the batch logs.
 */
class DpoReferenceWiringTest {
    private static final double BETA = 0.5;
    /**
     * How far a sequence log-probability may move between the trainer's batched scoring and one
     * sequence scored alone ({@link Rounding#logprobSumBound}): completions of at most 6 tokens on the
     * tiny agents (V = 515, products of at most K = 64 terms, L = 2 layers, logits below 1).
     */
    private static final double BOUND = Rounding.logprobSumBound(6, 515, 64, 2, 1.0, 1.0);

    /**
     * One batch as the test scored it, each {@code [agent][0 winner | 1 loser][pair]}: under the live
     * policy before the batch's steps, under the initial agents, and the reference log-probabilities
     * the pairs carry (null without a reference).
     */
    private record Scored(int round, double[][][] live, double[][][] initial, double[][][] carried) {
    }

    /**
     * Two iterations; with LoRA agents the reference is the frozen base under the fresh adapter
     * (B = 0), which the initial agents equal.
     */
    @ParameterizedTest
    @CsvSource({"frozen_initial, false", "none, false", "frozen_initial, true"})
    void madpoIterScoresTheReferenceWithTheInitialPolicyInEveryIteration(String mode, boolean lora, @TempDir Path dir) {
        MADPOTrainerTest.writeAgentsIfNeeded();
        List<Scored> seen = new ArrayList<>();
        List<CausalLm> initial = List.of(TinyAgents.load(MADPOTrainerTest.agent), TinyAgents.load(MADPOTrainerTest.other));
        MADPOIterTrainer.Builder builder = MADPOIterTrainerTest.trainer(MADPOIterTrainerTest.config().dpoReference(mode)
                .dpoBeta(BETA).agentLearningRate(1e-2).build(), dir.resolve("run"));
        if (lora) {
            builder.lora(new comlrl.model.LoraConfig(4, 16, 0, List.of("all-linear"), false));
        }
        try (MADPOIterTrainer t = builder.build()) {
            MADPOTrainer dpo = (MADPOTrainer) t.stage();
            dpo.observeBatches(batch -> seen.add(score(() -> t.iterationsDone() + 1, batch, dpo.agents(), initial)));
            t.train();
            assertThat(t.iterationsDone()).isEqualTo(2);
            check(DpoReference.parse(mode), seen, dpoRows(t.logHistory()));
        } finally {
            initial.forEach(CausalLm::close);
        }
    }

    @Test
    void madpoScoresTheReferenceWithTheInitialPolicyInEveryEpoch() {
        List<Scored> seen = new ArrayList<>();
        List<CausalLm> initial = List.of(TinyAgents.load(MADPOTrainerTest.agent), TinyAgents.load(MADPOTrainerTest.other));
        try (MADPOTrainer t = MADPOTrainerTest.trainer(MADPOTrainerTest.config().numTrainEpochs(2)
                .dpoReference(DpoReference.FROZEN_INITIAL).dpoBeta(BETA).agentLearningRate(1e-2).build()).build()) {
            t.observeBatches(batch -> seen.add(score(() -> t.progress() + 1, batch, t.agents(), initial)));
            t.train();
            check(DpoReference.FROZEN_INITIAL, seen, dpoRows(t.logHistory()));
        } finally {
            initial.forEach(CausalLm::close);
        }
    }

    /** The logged events of the DPO batches, in order. */
    private static List<Map<String, Double>> dpoRows(List<Map<String, Double>> history) {
        return history.stream().filter(e -> e.containsKey("agent_0/dpo_loss")).toList();
    }

    /**
     * With a frozen reference every batch of every round carries the initial agents' log-probabilities,
     * and in round 2 the live policy has moved away from them (so a reference that followed the policy
     * would show); without one the pairs carry none. Every batch logs, per agent, TRL's implicit rewards
     * β·(s_π − s_ref) of its pairs (s_ref: the initial agents', or 0 without a reference).
     */
    private static void check(DpoReference mode, List<Scored> seen, List<Map<String, Double>> rows) {
        assertThat(seen).anyMatch(s -> s.round() == 2);
        assertThat(rows).hasSize(seen.size());
        double moved = 0;
        int accuraciesChecked = 0;
        for (int k = 0; k < seen.size(); k++) {
            Scored s = seen.get(k);
            for (int i = 0; i < s.live().length; i++) {
                for (int side = 0; side < 2; side++) {
                    for (int b = 0; b < s.live()[i][side].length; b++) {
                        if (mode.needsReference()) {
                            assertThat(s.carried()[i][side][b]).as("round %d, agent %d, pair %d: reference log-prob",
                                    s.round(), i, b).isCloseTo(s.initial()[i][side][b], within(BOUND));
                        }
                        if (s.round() == 2) {
                            moved = Math.max(moved, Math.abs(s.live()[i][side][b] - s.initial()[i][side][b]));
                        }
                    }
                }
                accuraciesChecked += checkRewards(mode, s, i, rows.get(k)) ? 1 : 0;
            }
            if (!mode.needsReference()) {
                assertThat(s.carried()).isNull();
            }
        }
        // the policy of round 2 is not the initial one: a reference scored with it would fail above
        assertThat(moved).isGreaterThan(100 * BOUND);
        assertThat(accuraciesChecked).as("batches whose accuracy was checked").isPositive();
    }

    /**
     * The logged {@code agent_i/rewards/*} against r_w,b = β·(s_π(w_b) − s_ref(w_b)), r_l,b likewise,
     * from the test's scores: each s within {@link #BOUND} of the trainer's, so each mean within 2β·BOUND
     * (4β·BOUND for the margin); the accuracy exactly where no pair's r_w − r_l is that close to 0
     * (returns whether it was checked).
     */
    private static boolean checkRewards(DpoReference mode, Scored s, int agent, Map<String, Double> row) {
        int pairs = s.live()[agent][0].length;
        double chosen = 0;
        double rejected = 0;
        int right = 0;
        boolean decided = true;
        for (int b = 0; b < pairs; b++) {
            double rw = BETA * (s.live()[agent][0][b] - (mode.needsReference() ? s.initial()[agent][0][b] : 0));
            double rl = BETA * (s.live()[agent][1][b] - (mode.needsReference() ? s.initial()[agent][1][b] : 0));
            chosen += rw / pairs;
            rejected += rl / pairs;
            right += rw > rl ? 1 : 0;
            decided &= Math.abs(rw - rl) > 4 * BETA * BOUND;
        }
        String p = "agent_" + agent + "/rewards/";
        assertThat(row.get(p + "chosen")).as(p + "chosen").isCloseTo(chosen, within(2 * BETA * BOUND));
        assertThat(row.get(p + "rejected")).as(p + "rejected").isCloseTo(rejected, within(2 * BETA * BOUND));
        assertThat(row.get(p + "margins")).as(p + "margins").isCloseTo(chosen - rejected, within(4 * BETA * BOUND));
        if (decided) {
            assertThat(row.get(p + "accuracies")).as(p + "accuracies").isEqualTo((double) right / pairs);
        }
        return decided;
    }

    private static Scored score(IntSupplier round, List<PreferencePair> batch, List<CausalLm> live, List<CausalLm> initial) {
        int agents = live.size();
        double[][][] liveScores = new double[agents][2][batch.size()];
        double[][][] initialScores = new double[agents][2][batch.size()];
        double[][][] carried = batch.get(0).referenceWinners() == null ? null : new double[agents][2][batch.size()];
        for (int b = 0; b < batch.size(); b++) {
            PreferencePair p = batch.get(b);
            for (int i = 0; i < agents; i++) {
                List<long[]> sides = List.of(p.winners().get(i), p.losers().get(i));
                for (int side = 0; side < 2; side++) {
                    liveScores[i][side][b] = logprob(live.get(i), p.prompts().get(i), sides.get(side));
                    initialScores[i][side][b] = logprob(initial.get(i), p.prompts().get(i), sides.get(side));
                }
                if (carried != null) {
                    carried[i][0][b] = p.referenceWinners()[i];
                    carried[i][1][b] = p.referenceLosers()[i];
                }
            }
        }
        return new Scored(round.getAsInt(), liveScores, initialScores, carried);
    }

    /** Σ_t log π(y_t | x, y_&lt;t) of one completion (cut at its pad already) scored alone. */
    private static double logprob(CausalLm lm, long[] prompt, long[] completion) {
        if (completion.length == 0) {
            return 0;
        }
        try (GradMode g = GradMode.noGrad(); Scope s = Scope.open()) {
            return Scorer.score(lm.model(), List.of(prompt), List.of(completion), lm.padId()).sequenceLogprobs().item();
        }
    }
}
