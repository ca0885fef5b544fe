package comlrl.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

class AdamWTest {
    /**
     * Two steps by hand, lr 0.1, λ 0.01, β (0.9, 0.999), ε 1e-8, p0 = 1, gradient 2 then 4:
     * t=1: p = 1·(1−0.001) = 0.999; m = 0.2; v = 0.004; m̂ = 0.2/0.1 = 2; sqrt(v̂) = sqrt(0.004/0.001) = 2
     *      p = 0.999 − 0.1·2/(2+1e-8) = 0.899
     * t=2: p = 0.899·0.999 = 0.898101; m = 0.18 + 0.4 = 0.58; v = 0.003996 + 0.016 = 0.019996
     *      m̂ = 0.58/0.19 = 3.0526316; v̂ = 0.019996/0.001999 = 10.0030015; sqrt = 3.1627521
     *      p = 0.898101 − 0.1·3.0526316/3.1627521 = 0.8015828
     */
    @Test
    void twoStepsMatchTheFormulaByHandAndSkipParametersWithoutGradients() {
        try (Scope s = Scope.open()) {
            Tensor p = Tensor.ofDoubles(new double[] {1.0}, Device.CPU).requiresGrad(true);
            Tensor untouched = Tensor.ofDoubles(new double[] {5.0}, Device.CPU).requiresGrad(true);
            try (AdamW opt = new AdamW(List.of(p, untouched), 0.1, 0.01)) {
                for (double g : new double[] {2.0, 4.0}) {
                    opt.zeroGrad();
                    p.mul(g).sum().backward(); // dL/dp = g
                    opt.step();
                }
                assertThat(p.item()).isCloseTo(0.8015828, within(1e-6));
                assertThat(untouched.item()).as("no gradient, no step (not even weight decay)").isEqualTo(5.0);
                assertThat(opt.stepCount()).isEqualTo(2);
            }
        }
    }

    /**
     * Made where no scope is open (as a trainer makes it), an AdamW leaves no temporary of its
     * construction alive: a leaked handle of the parameter (its detached view, made to convert it into
     * the float32 master) would still share the parameter's tensor, and with it the conversion's
     * float32 copy would stay too (an extra 4 bytes per parameter: 1.9 GB at the 0.5B shape).
     */
    @Test
    void anOptimizerMadeOutsideAScopeLeavesNoTemporaryBehind() {
        Tensor p = Tensor.fullOf(1.0, DType.BF16, Device.CPU, 8).keep();
        try {
            long uses = p.handle.storage().use_count();
            try (AdamW opt = new AdamW(List.of(p), 0.1, 0.01)) {
                assertThat(p.handle.storage().use_count()).as("handles sharing the parameter's tensor").isEqualTo(uses);
            }
        } finally {
            p.close();
        }
    }

    @Test
    void bf16ParametersKeepAFloat32MasterSoTinyStepsAccumulate() {
        try (Scope s = Scope.open()) {
            // 1 + 100 steps of ~1e-4 each: each alone is below bf16's resolution at 1.0 (2^-7)
            Tensor p = Tensor.fullOf(1.0, DType.BF16, Device.CPU, 4).requiresGrad(true);
            try (AdamW opt = new AdamW(List.of(p), 1e-4, 0.0)) {
                for (int i = 0; i < 100; i++) {
                    opt.zeroGrad();
                    p.toFloat().sum().backward();
                    opt.step();
                }
                assertThat(opt.state().get("exp_avg.0").dtype()).isEqualTo(DType.F32);
                assertThat((double) opt.state().get("master.0").toFloatArray()[0]).isCloseTo(1 - 100e-4, within(1e-5));
                assertThat(p.dtype()).isEqualTo(DType.BF16);
                assertThat(p.toFloatArray()[0]).isLessThan(1.0f); // the sum of the steps reached the bf16 weights
            }
        }
    }

    /**
     * A bf16 parameter of two slices and a few elements more, its gradient varying by element: after
     * two steps its master, moments and bf16 weights are bit for bit those of a float32 parameter
     * started from the same values and stepped with the same gradients (in float32) by the same
     * kernel at once, then rounded to bf16: the slices cover every element once, in place.
     */
    @Test
    void bf16UpdateBySlicesIsTheWholeFloat32UpdateRounded() {
        long n = 2 * AdamW.SLICE + 5;
        try (Scope s = Scope.open(); Rng rng = new Rng(3)) {
            Tensor start = Tensor.randn(rng, 1, DType.F32, Device.CPU, n).to(DType.BF16);
            Tensor p = start.cloneTensor().requiresGrad(true);
            Tensor reference = start.toFloat().cloneTensor().requiresGrad(true);
            Tensor[] grads = {Tensor.randn(rng, 1, DType.F32, Device.CPU, n).to(DType.BF16),
                    Tensor.randn(rng, 1, DType.F32, Device.CPU, n).to(DType.BF16)};
            try (AdamW bf = new AdamW(List.of(p), 0.01, 0.1); AdamW f32 = new AdamW(List.of(reference), 0.01, 0.1)) {
                for (Tensor g : grads) {
                    bf.zeroGrad();
                    f32.zeroGrad();
                    p.mul(g).sum().backward();                // dL/dp = g (bf16)
                    reference.mul(g.toFloat()).sum().backward(); // the same values in float32
                    bf.step();
                    f32.step();
                }
                assertThat(bf.state().get("master.0").bitEquals(reference.detach())).isTrue();
                assertThat(bf.state().get("exp_avg_sq.0").bitEquals(f32.state().get("exp_avg_sq.0"))).isTrue();
                assertThat(p.detach().bitEquals(reference.detach().to(DType.BF16))).isTrue();
                assertThat(p.detach().bitEquals(start)).as("the weights moved").isFalse();
            }
        }
    }

    @Test
    void stateRoundTripsAndContinuesIdentically() {
        try (Scope s = Scope.open()) {
            Tensor a = Tensor.ofDoubles(new double[] {0.5, -1.5}, Device.CPU).to(DType.F32).requiresGrad(true);
            Tensor b = Tensor.ofDoubles(new double[] {0.5, -1.5}, Device.CPU).to(DType.F32).requiresGrad(true);
            try (AdamW first = new AdamW(List.of(a), 0.01, 0.01); AdamW second = new AdamW(List.of(b), 0.01, 0.01)) {
                for (Tensor p : List.of(a)) {
                    first.zeroGrad();
                    p.mul(p).sum().backward();
                    first.step();
                }
                try (GradMode g = GradMode.noGrad()) {
                    b.copy_(a.detach());
                }
                second.loadState(first.state());
                first.zeroGrad();
                a.mul(a).sum().backward();
                first.step();
                second.zeroGrad();
                b.mul(b).sum().backward();
                second.step();
                assertThat(b.bitEquals(a)).isTrue();
            }
        }
    }

    /**
     * A shard holding parameters 0 and 2 of three updates them exactly as the whole optimizer does,
     * leaves parameter 1 alone, keeps state (moments, the bf16 parameter's master) for its two only,
     * and restores them from the whole optimizer's state.
     */
    @Test
    void aShardUpdatesItsParametersAsTheWholeOptimizerAndKeepsOnlyTheirState() {
        try (Scope s = Scope.open()) {
            List<Tensor> whole = List.of(Tensor.ofDoubles(new double[] {0.5, -1.5}, Device.CPU).to(DType.F32).requiresGrad(true),
                    Tensor.ofDoubles(new double[] {2.0}, Device.CPU).to(DType.F32).requiresGrad(true),
                    Tensor.ofDoubles(new double[] {1.0, 3.0}, Device.CPU).to(DType.BF16).requiresGrad(true));
            List<Tensor> part = whole.stream().map(t -> t.detach().cloneTensor().requiresGrad(true)).toList();
            try (AdamW all = new AdamW(whole, 0.01, 0.01);
                    AdamW shard = AdamW.shard(part, 0.01, 0.01, i -> i != 1)) {
                assertThat(shard.sharded()).isTrue();
                assertThat(all.sharded()).isFalse();
                for (int step = 0; step < 3; step++) {
                    for (AdamW opt : List.of(all, shard)) {
                        opt.zeroGrad();
                        opt.parameters().forEach(p -> p.toFloat().mul(p.toFloat()).sum().backward());
                        opt.step();
                    }
                }
                assertThat(part.get(0).bitEquals(whole.get(0))).isTrue();
                assertThat(part.get(2).bitEquals(whole.get(2))).isTrue();
                assertThat(part.get(1).item()).as("another shard's parameter").isEqualTo(2.0);
                assertThat(whole.get(1).item()).isNotEqualTo(2.0);
                assertThat(shard.state().keySet()).containsExactlyInAnyOrder("exp_avg.0", "exp_avg_sq.0", "exp_avg.2",
                        "exp_avg_sq.2", "master.2", "step");
                assertThat(shard.holds(1)).isFalse();
                try (AdamW restored = AdamW.shard(part, 0.01, 0.01, i -> i != 1)) {
                    restored.loadState(all.state()); // a whole optimizer's state (what checkpoints hold)
                    assertThat(restored.state().get("exp_avg_sq.2").bitEquals(all.state().get("exp_avg_sq.2"))).isTrue();
                    assertThat(restored.stepCount()).isEqualTo(3);
                }
            }
        }
    }
}
