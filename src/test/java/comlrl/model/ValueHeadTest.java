package comlrl.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import comlrl.tensor.AdamW;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Forward values, gradients and initialisation of {@link ValueHead}, worked by hand. */
class ValueHeadTest {
    private static final double EPS = 1e-6;

    /** E = 3, no hidden layer: w_v = [0.1, -0.2, 0.3], b_v = 0.05. */
    private static ValueHead linearHead() {
        ValueHead head = ValueHead.create(3, 0, DType.F32, Device.CPU, 1);
        Map<String, Tensor> state = new LinkedHashMap<>();
        state.put("value_projection.weight", Tensor.ofFloats(new float[] {0.1f, -0.2f, 0.3f}, Device.CPU, 1, 3));
        state.put("value_projection.bias", Tensor.ofFloats(new float[] {0.05f}, Device.CPU, 1));
        head.loadStateDict(state, "test");
        return head;
    }

    /** E = 2, d = 2: W_p = [[0.5, -0.5], [1.0, 0.25]], b_p = [0.1, -0.2], w_v = [2, -1], b_v = 0.3. */
    private static ValueHead hiddenHead() {
        ValueHead head = ValueHead.create(2, 2, DType.F32, Device.CPU, 1);
        Map<String, Tensor> state = new LinkedHashMap<>();
        state.put("pre_projection.0.weight", Tensor.ofFloats(new float[] {0.5f, -0.5f, 1.0f, 0.25f}, Device.CPU, 2, 2));
        state.put("pre_projection.0.bias", Tensor.ofFloats(new float[] {0.1f, -0.2f}, Device.CPU, 2));
        state.put("value_projection.weight", Tensor.ofFloats(new float[] {2f, -1f}, Device.CPU, 1, 2));
        state.put("value_projection.bias", Tensor.ofFloats(new float[] {0.3f}, Device.CPU, 1));
        head.loadStateDict(state, "test");
        return head;
    }

    @Test
    void withoutAHiddenLayerTheValueIsOneLinearMap() {
        try (ValueHead head = linearHead(); Scope s = Scope.open()) {
            // hidden [B=2, S=2, E=3]
            Tensor hidden = Tensor.ofFloats(new float[] {1, 2, 3, -1, 0, 2, 0, 0, 0, 2, -1, 1}, Device.CPU, 2, 2, 3);
            Tensor values = head.forward(hidden);
            assertThat(values.shape()).containsExactly(2, 2);
            // V = 0.1 h1 - 0.2 h2 + 0.3 h3 + 0.05
            //   [1, 2, 3]:  0.1 - 0.4 + 0.9 + 0.05 = 0.65     [-1, 0, 2]: -0.1 + 0 + 0.6 + 0.05 = 0.55
            //   [0, 0, 0]:  0.05                               [2, -1, 1]:  0.2 + 0.2 + 0.3 + 0.05 = 0.75
            assertThat(values.toDoubleArray()).containsExactly(new double[] {0.65, 0.55, 0.05, 0.75}, within(EPS));
        }
    }

    @Test
    void withAHiddenLayerTheValueGoesThroughTanh() {
        try (ValueHead head = hiddenHead(); Scope s = Scope.open()) {
            Tensor hidden = Tensor.ofFloats(new float[] {1, 2, 0, 0}, Device.CPU, 1, 2, 2); // [B=1, S=2, E=2]
            Tensor values = head.forward(hidden);
            assertThat(values.shape()).containsExactly(1, 2);
            // h = [1, 2]: z = W_p h + b_p = [0.5 - 1.0 + 0.1, 1.0 + 0.5 - 0.2] = [-0.4, 1.3]
            //   V = 2 tanh(-0.4) - tanh(1.3) + 0.3 = 2(-0.3799490) - 0.8617232 + 0.3 = -1.3216211
            //   (without the tanh it would be 2(-0.4) - 1.3 + 0.3 = -1.8)
            // h = [0, 0]: z = b_p = [0.1, -0.2]
            //   V = 2 tanh(0.1) - tanh(-0.2) + 0.3 = 0.1993360 + 0.1973753 + 0.3 = 0.6967113
            assertThat(values.toDoubleArray()).containsExactly(new double[] {-1.3216211, 0.6967113}, within(EPS));
        }
    }

    @Test
    void gradientOfTheSumOfValuesMatchesTheHandWorkedOne() {
        try (ValueHead head = hiddenHead(); Scope s = Scope.open()) {
            Tensor hidden = Tensor.ofFloats(new float[] {1, 2}, Device.CPU, 1, 1, 2).requiresGrad(true);
            head.forward(hidden).sum().backward();
            // one position, h = [1, 2], z = [-0.4, 1.3], t = tanh(z) = [-0.3799490, 0.8617232]
            //   dV/dw_v = t                                    dV/db_v = 1
            //   dV/db_p = w_v ⊙ (1 - t²) = [2 · 0.8556388, -1 · 0.2574332] = [1.7112776, -0.2574332]
            //   dV/dW_p = (dV/db_p) hᵀ = [[1.7112776, 3.4225551], [-0.2574332, -0.5148664]]
            //   dV/dh   = W_pᵀ (dV/db_p) = [0.5 · 1.7112776 + 1.0 · (-0.2574332), -0.5 · 1.7112776 + 0.25 · (-0.2574332)]
            //           = [0.5982056, -0.9199971]
            Map<String, Tensor> p = head.namedParameters();
            assertThat(p.get("value_projection.weight").grad().toDoubleArray())
                    .containsExactly(new double[] {-0.3799490, 0.8617232}, within(EPS));
            assertThat(p.get("value_projection.bias").grad().toDoubleArray()).containsExactly(new double[] {1}, within(EPS));
            assertThat(p.get("pre_projection.0.bias").grad().toDoubleArray())
                    .containsExactly(new double[] {1.7112776, -0.2574332}, within(EPS));
            assertThat(p.get("pre_projection.0.weight").grad().toDoubleArray())
                    .containsExactly(new double[] {1.7112776, 3.4225551, -0.2574332, -0.5148664}, within(EPS));
            assertThat(hidden.grad().toDoubleArray()).containsExactly(new double[] {0.5982056, -0.9199971}, within(EPS));
        }
    }

    @Test
    void linearHeadGradientIsTheSumOfTheHiddenStates() {
        try (ValueHead head = linearHead(); Scope s = Scope.open()) {
            Tensor hidden = Tensor.ofFloats(new float[] {1, 2, 3, -1, 0, 2}, Device.CPU, 1, 2, 3);
            head.forward(hidden).sum().backward();
            // Σ_n V_n = w_v · Σ_n h_n + 2 b_v  =>  dw_v = [1 - 1, 2 + 0, 3 + 2] = [0, 2, 5], db_v = 2
            assertThat(head.namedParameters().get("value_projection.weight").grad().toDoubleArray())
                    .containsExactly(new double[] {0, 2, 5}, within(EPS));
            assertThat(head.namedParameters().get("value_projection.bias").grad().toDoubleArray())
                    .containsExactly(new double[] {2}, within(EPS));
        }
    }

    @Test
    void initialWeightsAreNormalWithStd002AndBiasesZero() {
        try (ValueHead head = ValueHead.create(256, 128, DType.F32, Device.CPU, 7); Scope s = Scope.open()) {
            Map<String, Tensor> p = head.namedParameters();
            assertThat(p.keySet()).containsExactly("pre_projection.0.weight", "pre_projection.0.bias",
                    "value_projection.weight", "value_projection.bias");
            assertThat(p.get("pre_projection.0.weight").shape()).containsExactly(128, 256);
            assertThat(p.get("value_projection.weight").shape()).containsExactly(1, 128);
            // 32,768 draws: the sample std of N(0, 0.02) is within 0.4% (one standard error) of 0.02
            double[] w = p.get("pre_projection.0.weight").toDoubleArray();
            assertThat(std(w)).isCloseTo(0.02, within(0.0004));
            assertThat(mean(w)).isCloseTo(0, within(0.0006));
            // 128 draws: standard error of the std about 6%
            assertThat(std(p.get("value_projection.weight").toDoubleArray())).isCloseTo(0.02, within(0.005));
            assertThat(p.get("pre_projection.0.bias").toDoubleArray()).containsOnly(0.0);
            assertThat(p.get("value_projection.bias").toDoubleArray()).containsOnly(0.0);
            assertThat(p.values()).allSatisfy(t -> {
                assertThat(t.dtype()).isEqualTo(DType.F32);
                assertThat(t.requiresGrad()).isTrue();
            });
        }
    }

    @Test
    void initialisationIsSeededAndTakesTheBackbonesDtype() {
        try (ValueHead a = ValueHead.create(64, 0, DType.BF16, Device.CPU, 3);
                ValueHead b = ValueHead.create(64, 0, DType.BF16, Device.CPU, 3);
                ValueHead c = ValueHead.create(64, 0, DType.BF16, Device.CPU, 4)) {
            Tensor wa = a.namedParameters().get("value_projection.weight");
            assertThat(a.namedParameters().keySet()).containsExactly("value_projection.weight", "value_projection.bias");
            assertThat(a.hiddenDim()).isZero();
            assertThat(a.inputDim()).isEqualTo(64);
            assertThat(wa.dtype()).isEqualTo(DType.BF16);
            assertThat(a.namedParameters().get("value_projection.bias").dtype()).isEqualTo(DType.BF16);
            assertThat(wa.bitEquals(b.namedParameters().get("value_projection.weight"))).isTrue();
            assertThat(wa.bitEquals(c.namedParameters().get("value_projection.weight"))).isFalse();
            assertThat(std(wa.toDoubleArray())).isCloseTo(0.02, within(0.006));
        }
    }

    @Test
    void aHeadForABackboneReadsItsHiddenStates() {
        ModelConfig config = TinyConfigs.of("qwen2", true, "float32");
        try (DecoderLm lm = DecoderLm.random(config, DType.F32, Device.CPU, 5);
                comlrl.tensor.Rng rng = new comlrl.tensor.Rng(9);
                ValueHead head = ValueHead.forBackbone(lm, 16, rng); Scope s = Scope.open()) {
            assertThat(head.inputDim()).isEqualTo(config.hiddenSize());
            assertThat(head.hiddenDim()).isEqualTo(16);
            Tensor ids = Tensor.ofLongs(new long[] {1, 2, 3, 4, 5, 6}, Device.CPU, 2, 3);
            Tensor pos = Tensor.arangeOf(3, Device.CPU).view(1, 3).expand(2, 3).contiguous();
            Tensor values = head.forward(lm.forward(ids, pos, null, null, 3).hidden());
            assertThat(values.shape()).containsExactly(2, 3);
            assertThat(values.allFinite()).isTrue();
        }
    }

    @Test
    void theHeadTrainsWithAdamW() {
        try (ValueHead head = linearHead();
                AdamW opt = new AdamW(head.parameters(), 0.1, 0.0)) {
            double before;
            double after;
            try (Scope s = Scope.open()) {
                Tensor hidden = Tensor.ofFloats(new float[] {1, 2, 3}, Device.CPU, 1, 1, 3);
                Tensor loss = head.forward(hidden).sub(2.0).mul(head.forward(hidden).sub(2.0)).sum(); // (V - 2)²
                before = loss.item();
                loss.backward();
                opt.step();
                after = head.forward(hidden).sub(2.0).mul(head.forward(hidden).sub(2.0)).sum().item();
            }
            assertThat(after).isLessThan(before);
        }
    }

    @Test
    void valuesAtPicksOnePositionPerRowAndPassesGradientsThere() {
        try (Scope s = Scope.open()) {
            Tensor values = Tensor.ofFloats(new float[] {1, 2, 3, 4, 5, 6}, Device.CPU, 2, 3).requiresGrad(true);
            Tensor picked = ValueHead.valuesAt(values, new long[] {2, 0});
            assertThat(picked.shape()).containsExactly(2);
            assertThat(picked.toDoubleArray()).containsExactly(3, 4);
            picked.sum().backward();
            assertThat(values.grad().toDoubleArray()).containsExactly(0, 0, 1, 1, 0, 0);
            assertThatThrownBy(() -> ValueHead.valuesAt(values, new long[] {3, 0}))
                    .hasMessageContaining("Position 3 of row 0 is outside the 3 positions");
            assertThatThrownBy(() -> ValueHead.valuesAt(values, new long[] {1}))
                    .hasMessageContaining("values [2, 3] and 1 positions");
        }
    }

    @Test
    void wrongInputsAreRefusedWithTheFix() {
        try (ValueHead head = linearHead(); Scope s = Scope.open()) {
            assertThatThrownBy(() -> head.forward(Tensor.zerosOf(DType.F32, Device.CPU, 1, 2, 4)))
                    .hasMessageContaining("reads hidden states [..., 3], got [1, 2, 4]");
            assertThatThrownBy(() -> head.forward(Tensor.zerosOf(DType.BF16, Device.CPU, 1, 2, 3)))
                    .hasMessageContaining("hidden states are bfloat16 but the value head is float32");
        }
        assertThatThrownBy(() -> ValueHead.create(8, -1, DType.F32, Device.CPU, 1))
                .hasMessageContaining("must be positive, or unset/0 for none; got -1");
        assertThatThrownBy(() -> ValueHead.create(0, 4, DType.F32, Device.CPU, 1))
                .hasMessageContaining("hidden size (>= 1), got 0");
    }

    static double mean(double[] x) {
        double m = 0;
        for (double v : x) {
            m += v;
        }
        return m / x.length;
    }

    static double std(double[] x) {
        double m = mean(x);
        double ss = 0;
        for (double v : x) {
            ss += (v - m) * (v - m);
        }
        return Math.sqrt(ss / (x.length - 1));
    }
}
