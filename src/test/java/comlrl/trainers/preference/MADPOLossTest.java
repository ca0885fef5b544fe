package comlrl.trainers.preference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import comlrl.generation.CausalLm;
import comlrl.generation.Scorer;
import comlrl.model.DecoderLm;
import comlrl.tensor.DType;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import comlrl.trainers.TinyAgents;
import comlrl.trainers.preference.MADPOLoss.AgentLoss;
import comlrl.trainers.preference.MADPOLoss.NonFiniteDeltaException;
import comlrl.trainers.preference.MADPOLoss.SequenceLogprobs;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The MADPO loss: hand-worked values and gradients for two agents with the other agent's Δ held
 * constant, the frozen-reference variant, finite differences of the pure function, and on tiny
 * models the weighted log-likelihood surrogate's parameter gradient against autograd through
 * −log σ(β·(Δ_0 + sg(Δ_1))).
 */
class MADPOLossTest {
    private static final double BETA = 0.1;

    // ------------------------------------------------------------------ the pure function

    @Test
    void onePairOfTwoAgentsByHand() {
        // Δ_0 = 0.3, Δ_1 = −0.5, β = 0.1, one pair (|B| = 1):
        //   z     = β·(Δ_0 + sg(Δ_1)) = 0.1·(0.3 − 0.5) = −0.02
        //   L_0   = −log σ(−0.02) = log(1 + e^0.02) = log(2.0202013400) = 0.7031971797
        //   ∂L_0/∂Δ_0 = −β·σ(−z) = −0.1·σ(0.02) = −0.1·0.5049998333 = −0.0504999833
        // Δ_1 enters L_0 only through its value (sg): agent 1's own loss has the same value and the same
        // derivative with respect to Δ_1, and neither loss differentiates the other agent's Δ.
        double[][] deltas = {{0.3}, {-0.5}};
        AgentLoss agent0 = MADPOLoss.agentLoss(0, deltas, BETA);
        assertThat(agent0.loss()).isCloseTo(0.7031971797, within(1e-10));
        assertThat(agent0.gradient()).containsExactly(new double[] {-0.0504999833}, within(1e-10));
        AgentLoss agent1 = MADPOLoss.agentLoss(1, deltas, BETA);
        assertThat(agent1.loss()).isCloseTo(0.7031971797, within(1e-10));
        assertThat(agent1.gradient()).containsExactly(new double[] {-0.0504999833}, within(1e-10));
        // the weights of the rows [winner, loser]: g on s_0(w), −g on s_0(l)
        assertThat(MADPOLoss.weights(agent0)).containsExactly(new double[] {-0.0504999833, 0.0504999833},
                within(1e-10));
    }

    @Test
    void aBatchOfTwoPairsIsTheMeanOverPairs() {
        // pair 0: (Δ_0, Δ_1) = (0.3, −0.5): z = −0.02, ℓ = 0.7031971797, −β·σ(−z) = −0.0504999833
        // pair 1: (Δ_0, Δ_1) = (1.2, 0.4):  z = 0.1·1.6 = 0.16,
        //         ℓ = log(1 + e^−0.16) = log(1.8521437890) = 0.6163437730,  −β·σ(−0.16) = −0.1·0.4600851154
        //   L_0 = (0.7031971797 + 0.6163437730) / 2 = 0.6597704764
        //   ∂L_0/∂Δ_{0,b} = [−0.0504999833, −0.0460085115] / 2 = [−0.0252499917, −0.0230042558]
        double[][] deltas = {{0.3, 1.2}, {-0.5, 0.4}};
        AgentLoss loss = MADPOLoss.agentLoss(0, deltas, BETA);
        assertThat(loss.loss()).isCloseTo(0.6597704764, within(1e-10));
        assertThat(loss.gradient()).containsExactly(new double[] {-0.0252499917, -0.0230042558}, within(1e-10));
        // rows [w_0, w_1, l_0, l_1]
        assertThat(MADPOLoss.weights(loss)).containsExactly(
                new double[] {-0.0252499917, -0.0230042558, 0.0252499917, 0.0230042558}, within(1e-10));
    }

    @Test
    void theGradientIsTheFiniteDifferenceOfTheLossInTheAgentsOwnDeltas() {
        double[][] deltas = {{0.3, 1.2, -7.5}, {-0.5, 0.4, 2.0}, {0.1, -3.0, 25.0}};
        double beta = 0.7;
        double h = 1e-6;
        for (int agent = 0; agent < 3; agent++) {
            AgentLoss loss = MADPOLoss.agentLoss(agent, deltas, beta);
            for (int b = 0; b < 3; b++) {
                double[][] up = copy(deltas);
                double[][] down = copy(deltas);
                up[agent][b] += h;
                down[agent][b] -= h;
                double numeric = (MADPOLoss.agentLoss(agent, up, beta).loss()
                        - MADPOLoss.agentLoss(agent, down, beta).loss()) / (2 * h);
                assertThat(loss.gradient()[b]).as("agent %d pair %d", agent, b).isCloseTo(numeric, within(1e-8));
            }
        }
    }

    @Test
    void largeLogRatiosStayFinite() {
        // z = ±500: softplus(−500) ≈ e^−500, softplus(500) = 500; σ without overflow
        AgentLoss winning = MADPOLoss.agentLoss(0, new double[][] {{5000}}, BETA);
        assertThat(winning.loss()).isCloseTo(0, within(1e-200));
        assertThat(winning.gradient()[0]).isCloseTo(0, within(1e-200));
        AgentLoss losing = MADPOLoss.agentLoss(0, new double[][] {{-5000}}, BETA);
        assertThat(losing.loss()).isCloseTo(500, within(1e-9));
        assertThat(losing.gradient()[0]).isCloseTo(-BETA, within(1e-12));
        // z = ±100, ±1000 in one batch of 4 (Δ = z/β): L = (e^−100 + 100 + e^−1000 + 1000)/4 = 275 up to
        // rounding, ∂L/∂Δ_b = −β·σ(−z_b)/4; the naive log(1 + e^−z) is inf at z = −1000 in double precision
        double[] z = {100, -100, 1000, -1000};
        AgentLoss batch = MADPOLoss.agentLoss(0, new double[][] {java.util.Arrays.stream(z).map(v -> v / BETA).toArray()},
                BETA);
        assertThat(batch.loss()).isCloseTo(275, within(1e-12));
        for (int b = 0; b < z.length; b++) {
            double sigmaMinusZ = z[b] > 0 ? Math.exp(-z[b]) / (1 + Math.exp(-z[b])) : 1 / (1 + Math.exp(z[b]));
            assertThat(batch.gradient()[b]).isFinite().isCloseTo(-BETA * sigmaMinusZ / 4, within(1e-15));
        }
    }

    @Test
    void deltasWithAndWithoutAFrozenReference() {
        // pair 0: s(w) = −4.0, s(l) = −6.0 under π; −4.5 and −5.0 under π_ref
        //   none:           Δ = −4.0 − (−6.0) = 2.0
        //   frozen_initial: Δ = (−4.0 + 4.5) − (−6.0 + 5.0) = 0.5 + 1.0 = 1.5
        // pair 1: s(w) = −1.0, s(l) = −0.5 under π; −2.0 and −0.25 under π_ref
        //   none:           Δ = −0.5
        //   frozen_initial: Δ = (−1.0 + 2.0) − (−0.5 + 0.25) = 1.0 + 0.25 = 1.25
        SequenceLogprobs policy = new SequenceLogprobs(new double[] {-4.0, -1.0}, new double[] {-6.0, -0.5});
        SequenceLogprobs frozen = new SequenceLogprobs(new double[] {-4.5, -2.0}, new double[] {-5.0, -0.25});
        assertThat(MADPOLoss.deltas(DpoReference.NONE, policy, null)).containsExactly(2.0, -0.5);
        assertThat(MADPOLoss.deltas(DpoReference.NONE, policy, frozen)).containsExactly(2.0, -0.5);
        assertThat(MADPOLoss.deltas(DpoReference.FROZEN_INITIAL, policy, frozen)).containsExactly(1.5, 1.25);
        assertThatThrownBy(() -> MADPOLoss.deltas(DpoReference.FROZEN_INITIAL, policy, null))
                .hasMessageContaining("needs the frozen reference's log-probabilities");
    }

    @Test
    void theFrozenInitialLossByHand() {
        // agent 0 as above (Δ_0 = [1.5, 1.25]); agent 1 with Δ_1 = [−1.0, 0.75] (its own π and π_ref), β = 0.1:
        //   z = 0.1·(1.5 − 1.0) = 0.05:  ℓ = log(1 + e^−0.05) = log(1.9512294245) = 0.6684596480
        //                                σ(−0.05) = 0.4875026035
        //   z = 0.1·(1.25 + 0.75) = 0.2: ℓ = log(1 + e^−0.2) = log(1.8187307531) = 0.5981388694
        //                                σ(−0.2) = 0.4501660027
        //   L_0 = (0.6684596480 + 0.5981388694) / 2 = 0.6332992587
        //   ∂L_0/∂Δ_0 = −0.1·[0.4875026035, 0.4501660027] / 2 = [−0.0243751302, −0.0225083001]
        SequenceLogprobs policy = new SequenceLogprobs(new double[] {-4.0, -1.0}, new double[] {-6.0, -0.5});
        SequenceLogprobs frozen = new SequenceLogprobs(new double[] {-4.5, -2.0}, new double[] {-5.0, -0.25});
        double[][] deltas = {MADPOLoss.deltas(DpoReference.FROZEN_INITIAL, policy, frozen), {-1.0, 0.75}};
        AgentLoss loss = MADPOLoss.agentLoss(0, deltas, BETA);
        assertThat(loss.loss()).isCloseTo(0.6332992587, within(1e-10));
        assertThat(loss.gradient()).containsExactly(new double[] {-0.0243751302, -0.0225083001}, within(1e-10));
    }

    @Test
    void nonFiniteDeltasAreReportedWithTheirAgentAndPair() {
        double[][] deltas = {{0.3, 0.1}, {Double.NEGATIVE_INFINITY, 0.2}};
        assertThatThrownBy(() -> MADPOLoss.agentLoss(0, deltas, BETA))
                .isInstanceOfSatisfying(NonFiniteDeltaException.class, e -> {
                    assertThat(e.agent()).isEqualTo(1);
                    assertThat(e.pair()).isEqualTo(0);
                })
                .hasMessage("the DPO log-ratio Δ of agent 1 for preference pair 0 of the batch is -Infinity (a "
                        + "sequence log-probability is not finite)");
        assertThatThrownBy(() -> MADPOLoss.agentLoss(1, new double[][] {{0.3, Double.NaN}, {0, 0}}, BETA))
                .isInstanceOfSatisfying(NonFiniteDeltaException.class, e -> assertThat(e.pair()).isEqualTo(1));
        // finite deltas whose sum overflows: −1e308 + (−1e308) = −∞, so −log σ(z) = +∞
        assertThatThrownBy(() -> MADPOLoss.agentLoss(0, new double[][] {{-1e308}, {-1e308}}, 1))
                .isInstanceOfSatisfying(NonFiniteDeltaException.class, e -> assertThat(e.pair()).isEqualTo(-1))
                .hasMessage("the MADPO loss of agent 0 is Infinity");
    }

    @Test
    void badArgumentsAreRefused() {
        assertThatThrownBy(() -> MADPOLoss.agentLoss(0, new double[][] {{}}, BETA))
                .hasMessage("a DPO batch needs at least one preference pair");
        assertThatThrownBy(() -> MADPOLoss.agentLoss(0, new double[][] {{1}}, 0))
                .hasMessage("dpo_beta must be a finite number > 0, got 0.0");
        assertThatThrownBy(() -> MADPOLoss.agentLoss(2, new double[][] {{1}, {1}}, BETA))
                .isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> MADPOLoss.agentLoss(0, new double[][] {{1, 2}, {1}}, BETA))
                .hasMessage("agent 1 has 1 deltas, agent 0 2");
        assertThatThrownBy(() -> new SequenceLogprobs(new double[2], new double[1]))
                .hasMessage("2 winner but 1 loser log-probabilities");
    }

    @Test
    void completionTokensStopAtTheFirstPad() {
        assertThat(MADPOLoss.completionTokens(new long[] {5, 6, 0, 7, 0}, 0)).containsExactly(5, 6);
        assertThat(MADPOLoss.completionTokens(new long[] {5, 6}, 0)).containsExactly(5, 6);
        assertThat(MADPOLoss.completionTokens(new long[] {0, 6}, 0)).isEmpty();
    }

    private static double[][] copy(double[][] a) {
        double[][] c = new double[a.length][];
        for (int i = 0; i < a.length; i++) {
            c[i] = a[i].clone();
        }
        return c;
    }

    // ------------------------------------------------------------------ on tiny models

    @TempDir
    static Path models;
    static CausalLm agent0;
    static CausalLm agent1;
    static CausalLm reference0;
    static CausalLm reference1;

    @BeforeAll
    static void load() {
        agent0 = TinyAgents.load(TinyAgents.create(models.resolve("a0"), 17));
        agent1 = TinyAgents.load(TinyAgents.create(models.resolve("a1"), 23));
        // any fixed model serves as π_ref for the gradient check; a trainer uses a frozen copy of the initial agent
        reference0 = TinyAgents.load(TinyAgents.create(models.resolve("r0"), 31));
        reference1 = TinyAgents.load(TinyAgents.create(models.resolve("r1"), 37));
    }

    @AfterAll
    static void close() {
        for (CausalLm lm : List.of(agent0, agent1, reference0, reference1)) {
            lm.close();
        }
    }

    /** Three pairs of one agent: prompts, winners, losers (some cut by a pad, one loser only a pad). */
    private record Batch(List<long[]> prompts, List<long[]> winners, List<long[]> losers) {
    }

    private static Batch batch(CausalLm lm, int offset) {
        long pad = lm.padId();
        return new Batch(
                List.of(lm.encode("Say hello."), lm.encode("Describe the sea."), lm.encode("Why?")),
                List.of(new long[] {40 + offset, 41, pad, 9, 9}, new long[] {50 + offset, 51, 52}, new long[] {60, pad}),
                List.of(new long[] {70 + offset, pad, pad}, new long[] {80, 81 + offset, 82, 83}, new long[] {pad}));
    }

    /** The same batch's completions cut at the first pad, written out. */
    private static List<List<long[]>> trimmed(int offset) {
        return List.of(
                List.of(new long[] {40 + offset, 41}, new long[] {50 + offset, 51, 52}, new long[] {60}),
                List.of(new long[] {70 + offset}, new long[] {80, 81 + offset, 82, 83}, new long[0]));
    }

    @Test
    void logprobsAreTheScorersSequenceSumsUpToThePad() {
        Batch b = batch(agent0, 0);
        SequenceLogprobs got = MADPOLoss.logprobs(agent0.model(), b.prompts(), b.winners(), b.losers(), agent0.padId());
        List<List<long[]>> cut = trimmed(0);
        for (int k = 0; k < 3; k++) {
            assertThat(got.winners()[k]).isCloseTo(sequenceLogprob(agent0.model(), b.prompts().get(k), cut.get(0).get(k),
                    agent0.padId()), within(1e-5));
            assertThat(got.losers()[k]).isCloseTo(sequenceLogprob(agent0.model(), b.prompts().get(k), cut.get(1).get(k),
                    agent0.padId()), within(1e-5));
        }
        assertThat(got.losers()[2]).isEqualTo(0.0); // a loser that is only a pad: no token
        assertThat(got.winners()[0]).isLessThan(-1.0);
    }

    private static double sequenceLogprob(DecoderLm model, long[] prompt, long[] completion, long pad) {
        try (Scope scope = Scope.open()) {
            return Scorer.score(model, List.of(prompt), List.of(completion), pad).sequenceLogprobs().item();
        }
    }

    @Test
    void theSurrogatesGradientIsAutogradsGradientOfTheLoss() {
        checkAgainstAutograd(DpoReference.NONE, 0.5);
    }

    @Test
    void theSurrogatesGradientIsAutogradsGradientOfTheFrozenInitialLoss() {
        checkAgainstAutograd(DpoReference.FROZEN_INITIAL, 0.5);
    }

    /**
     * Agent 0's gradient two ways: (a) autograd through
     * {@code mean_b softplus(−β·(Δ_0 + c))}, Δ_0 from the agent's scored completions (cut at the pad
     * by hand) minus, for frozen_initial, the reference's constants, and c = Δ_1 as a constant;
     * (b) {@link MADPOLoss#backward} with {@link MADPOLoss#weights} of {@link MADPOLoss#agentLoss}.
     * Agent 1, whose Δ only enters as a value, gets no gradient.
     */
    private static void checkAgainstAutograd(DpoReference reference, double beta) {
        long pad0 = agent0.padId();
        Batch b0 = batch(agent0, 0);
        Batch b1 = batch(agent1, 3);
        boolean frozen = reference.needsReference();
        SequenceLogprobs ref0 = frozen ? MADPOLoss.logprobs(reference0.model(), b0.prompts(), b0.winners(), b0.losers(),
                pad0) : null;
        SequenceLogprobs ref1 = frozen ? MADPOLoss.logprobs(reference1.model(), b1.prompts(), b1.winners(), b1.losers(),
                agent1.padId()) : null;
        double[] delta1 = MADPOLoss.deltas(reference, MADPOLoss.logprobs(agent1.model(), b1.prompts(), b1.winners(),
                b1.losers(), agent1.padId()), ref1);

        // (a) autograd
        zeroGrad(agent0.model());
        zeroGrad(agent1.model());
        List<List<long[]>> cut = trimmed(0);
        double autogradLoss;
        try (Scope scope = Scope.open()) {
            Tensor winners = Scorer.score(agent0.model(), b0.prompts(), cut.get(0), pad0).sequenceLogprobs(); // [B]
            Tensor losers = Scorer.score(agent0.model(), b0.prompts(), cut.get(1), pad0).sequenceLogprobs();  // [B]
            Tensor delta0 = frozen
                    ? winners.sub(constant(ref0.winners())).sub(losers.sub(constant(ref0.losers())))
                    : winners.sub(losers);
            Tensor z = delta0.add(constant(delta1)).mul(beta);                 // β·(Δ_0 + sg(Δ_1))
            Tensor loss = z.neg().exp().add(1.0).log().mean();                 // mean softplus(−z) = −log σ(z)
            autogradLoss = loss.item();
            loss.backward();
        }
        Map<String, float[]> want = gradients(agent0.model());

        // (b) the weighted log-likelihood
        zeroGrad(agent0.model());
        double[] delta0 = MADPOLoss.deltas(reference, MADPOLoss.logprobs(agent0.model(), b0.prompts(), b0.winners(),
                b0.losers(), pad0), ref0);
        AgentLoss loss = MADPOLoss.agentLoss(0, new double[][] {delta0, delta1}, beta);
        try (Scope scope = Scope.open()) {
            MADPOLoss.backward(agent0.model(), b0.prompts(), b0.winners(), b0.losers(), pad0, MADPOLoss.weights(loss),
                    false);
        }
        assertThat(loss.loss()).isCloseTo(autogradLoss, within(1e-5));
        assertClose(gradients(agent0.model()), want);

        // the same with layer-wise recomputation
        zeroGrad(agent0.model());
        try (Scope scope = Scope.open()) {
            MADPOLoss.backward(agent0.model(), b0.prompts(), b0.winners(), b0.losers(), pad0, MADPOLoss.weights(loss),
                    true);
        }
        assertClose(gradients(agent0.model()), want);
        zeroGrad(agent0.model());

        // stop-gradient: nothing flowed into agent 1
        for (Tensor p : agent1.model().parameters()) {
            assertThat(p.grad()).isNull();
        }
    }

    private static Tensor constant(double[] values) {
        return Tensor.ofDoubles(values, agent0.model().device()).to(DType.F32);
    }

    private static void zeroGrad(DecoderLm model) {
        model.parameters().forEach(Tensor::zeroGrad);
    }

    /** Every parameter's gradient, by name (zeros where none). */
    private static Map<String, float[]> gradients(DecoderLm model) {
        Map<String, float[]> out = new LinkedHashMap<>();
        for (Map.Entry<String, Tensor> e : model.namedParameters().entrySet()) {
            Tensor g = e.getValue().grad();
            out.put(e.getKey(), g == null ? new float[(int) e.getValue().numel()] : g.toFloatArray());
        }
        return out;
    }

    /**
     * Equal up to float32 rounding ({@link comlrl.tensor.Rounding}) over the batch's positions (3 pairs
     * × winner and loser × (a prompt of at most 17 bytes + 5 completion tokens)), and not all zero.
     */
    private static void assertClose(Map<String, float[]> got, Map<String, float[]> want) {
        comlrl.tensor.Rounding.assertSameGradients(got, want, 3 * 2 * (17 + 5));
    }
}
