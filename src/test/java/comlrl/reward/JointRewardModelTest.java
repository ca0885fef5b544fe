package comlrl.reward;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import comlrl.model.SequenceClassifier;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import comlrl.trainers.TinyAgents;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** MARLHF's joint reward model: its text, the Bradley–Terry loss and gradient, training, saving. */
class JointRewardModelTest {
    @Test
    void theJointTextNumbersAgentsFromOne() {
        assertThat(JointRewardModel.jointText(List.of("p1", "p2"), List.of("c1", "c2"))).isEqualTo(
                "Joint multi-agent response\n\nAgent 1 prompt:\np1\n\nAgent 1 response:\nc1\n\nAgent 2 prompt:\np2"
                        + "\n\nAgent 2 response:\nc2");
    }

    @Test
    void bradleyTerryLossAndGradientByHand() {
        try (Scope s = Scope.open()) {
            Tensor w = Tensor.ofDoubles(new double[] {1.0, 0.0}, Device.CPU).toFloat().requiresGrad(true);
            Tensor l = Tensor.ofDoubles(new double[] {0.0, 0.5}, Device.CPU).toFloat().requiresGrad(true);
            Tensor loss = JointRewardModel.bradleyTerry(w, l);
            // (softplus(−1) + softplus(0.5)) / 2 = (0.3132617 + 0.9740770) / 2
            assertThat(loss.item()).isCloseTo(0.6436693, within(1e-6));
            loss.backward();
            // ∂L/∂s_w = −σ(−(s_w − s_l)) / B: −σ(−1)/2 = −0.1344707, −σ(0.5)/2 = −0.3112297; ∂L/∂s_l the opposite
            assertThat(w.grad().toDoubleArray()).containsExactly(new double[] {-0.1344707, -0.3112297}, within(1e-6));
            assertThat(l.grad().toDoubleArray()).containsExactly(new double[] {0.1344707, 0.3112297}, within(1e-6));
        }
    }

    /**
     * Margins z = s_w − s_l of ±100 and ±1000 in float32: the loss is mean softplus(−z) =
     * (e^−100 + 100 + 0 + 1000)/4 = 275 (e^−100 ≈ 4e−44 is lost in the sum), and ∂L/∂s_w = −σ(−z)/4,
     * finite: (−σ(−100)/4 ≈ −9e−45, −1/4, 0, −1/4). The naive log(1 + e^−z) is inf at z = −100 and
     * its gradient inf/inf = NaN.
     */
    @Test
    void bradleyTerryIsFiniteAndExactForLargeMarginsInFloat32() {
        double[] z = {100, -100, 1000, -1000};
        try (Scope s = Scope.open()) {
            Tensor w = Tensor.ofDoubles(z, Device.CPU).toFloat().requiresGrad(true);
            Tensor l = Tensor.ofDoubles(new double[4], Device.CPU).toFloat().requiresGrad(true);
            Tensor loss = JointRewardModel.bradleyTerry(w, l);
            assertThat(loss.item()).isEqualTo(275.0);
            loss.backward();
            double[] gw = w.grad().toDoubleArray();
            double[] gl = l.grad().toDoubleArray();
            for (int b = 0; b < z.length; b++) {
                double want = -sigmoid(-z[b]) / z.length;
                assertThat(gw[b]).as("∂L/∂s_w at z = %s", z[b]).isFinite().isCloseTo(want, within(1e-7));
                assertThat(gl[b]).as("∂L/∂s_l at z = %s", z[b]).isFinite().isCloseTo(-want, within(1e-7));
            }
        }
    }

    private static double sigmoid(double x) {
        return x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x));
    }

    @Test
    void trainingRanksWinnersAboveLosersAndTheSavedModelScoresTheSame(@TempDir Path dir) {
        Path base = TinyAgents.create(dir.resolve("base"), 5);
        List<String> winners = new ArrayList<>();
        List<String> losers = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            winners.add(JointRewardModel.jointText(List.of("q" + i), List.of("a long and careful answer number " + i)));
            losers.add(JointRewardModel.jointText(List.of("q" + i), List.of("no")));
        }
        try (JointRewardModel rm = JointRewardModel.fromCausalLm(base.toString(), DType.F32, Device.CPU, 1, false, 64, 1e-2)) {
            double[] before = rm.score(winners, 4);
            double[] beforeL = rm.score(losers, 4);
            double first = rm.train(winners, losers, 1, 4, 3)[0];
            double[] epochs = rm.train(winners, losers, 10, 4, 3);
            double last = epochs[epochs.length - 1];
            assertThat(last).isLessThan(first);
            double[] w = rm.score(winners, 4);
            double[] l = rm.score(losers, 4);
            for (int i = 0; i < w.length; i++) {
                assertThat(w[i]).as("pair %d (before: %.3f vs %.3f)", i, before[i], beforeL[i]).isGreaterThan(l[i]);
            }
            rm.save(dir.resolve("rm"));
            try (SequenceClassifier loaded = SequenceClassifier.load(dir.resolve("rm"), DType.F32, Device.CPU);
                    comlrl.reward.RewardModelReward reward = comlrl.reward.RewardModelReward
                            .builder(dir.resolve("rm").toString()).template("{completion_0}").maxLength(64).build()) {
                assertThat(loaded.numLabels()).isEqualTo(1);
                // the saved model, used as a reward model, scores a text as the trained one does
                double saved = reward.score(List.of(List.of(winners.get(0))), List.of(comlrl.data.TaskItem.of(
                        java.util.Map.of("prompt", "")))).get(0);
                assertThat(saved).isCloseTo(w[0], within(1e-4));
            }
        }
    }

    @Test
    void aFrozenBackboneTrainsOnlyTheHead(@TempDir Path dir) {
        Path base = TinyAgents.create(dir.resolve("base"), 5);
        List<String> winners = List.of("a long answer", "another long answer");
        List<String> losers = List.of("no", "n");
        try (JointRewardModel rm = JointRewardModel.fromCausalLm(base.toString(), DType.F32, Device.CPU, 1, true, 64, 1e-2)) {
            Map<String, float[]> before = snapshot(rm);
            rm.train(winners, losers, 2, 2, 3);
            Map<String, float[]> after = snapshot(rm);
            before.forEach((k, v) -> {
                if (k.equals(SequenceClassifier.SCORE)) {
                    assertThat(after.get(k)).as(k).isNotEqualTo(v);
                } else {
                    assertThat(after.get(k)).as(k).isEqualTo(v);
                }
            });
            assertThat(rm.optimizer().parameters()).hasSize(1);
        }
    }

    private static Map<String, float[]> snapshot(JointRewardModel rm) {
        Map<String, float[]> out = new java.util.LinkedHashMap<>();
        try (Scope s = Scope.open()) {
            rm.classifier().namedParameters().forEach((k, v) -> out.put(k, v.toFloat().toFloatArray()));
        }
        return out;
    }
}
