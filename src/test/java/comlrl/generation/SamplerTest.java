package comlrl.generation;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.tensor.Device;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The inverse-CDF sampler against the categorical distribution it draws from. */
class SamplerTest {
    private static final float[] LOGITS = {2.0f, 1.0f, 0.0f, -1.0f, 0.5f, -3.0f};

    /** Frequencies of {@code draws} samples of one row (temperature t, top-k / top-p as given). */
    private static double[] frequencies(SamplingConfig config, int draws) {
        double[] counts = new double[LOGITS.length];
        List<Rng> rngs = new ArrayList<>(List.of(new Rng(11)));
        try (Scope s = Scope.open(); Sampler sampler = new Sampler(config, rngs, LOGITS.length)) {
            Tensor logits = Tensor.ofFloats(LOGITS, Device.CPU, 1, LOGITS.length);
            for (int i = 0; i < draws; i++) {
                try (Scope step = Scope.open()) {
                    counts[(int) sampler.choose(logits, i).itemLong()]++;
                }
            }
        } finally {
            rngs.forEach(Rng::close);
        }
        for (int v = 0; v < counts.length; v++) {
            counts[v] /= draws;
        }
        return counts;
    }

    /** softmax(logits / t) with everything outside {@code keep} removed and renormalised. */
    private static double[] expected(double t, boolean[] keep) {
        double[] p = new double[LOGITS.length];
        double z = 0;
        for (int v = 0; v < p.length; v++) {
            p[v] = keep[v] ? Math.exp(LOGITS[v] / t) : 0;
            z += p[v];
        }
        for (int v = 0; v < p.length; v++) {
            p[v] /= z;
        }
        return p;
    }

    private static void assertClose(double[] got, double[] want) {
        // 20000 draws: the standard error of a frequency is at most 0.0036; allow ~4.5 of them
        for (int v = 0; v < got.length; v++) {
            assertThat(got[v]).as("token %d", v).isCloseTo(want[v], org.assertj.core.data.Offset.offset(0.016));
        }
    }

    @Test
    void plainSamplingFollowsTheSoftmaxAtTheTemperature() {
        boolean[] all = {true, true, true, true, true, true};
        assertClose(frequencies(SamplingConfig.sample(1.0, null, null, 1, 1), 20000), expected(1.0, all));
        assertClose(frequencies(SamplingConfig.sample(0.7, null, null, 1, 1), 20000), expected(0.7, all));
    }

    @Test
    void topKAndTopPRemoveExactlyTheTokensHuggingFaceRemoves() {
        // top-k 3 keeps logits 2.0, 1.0, 0.5
        assertClose(frequencies(SamplingConfig.sample(1.0, 3, null, 1, 1), 20000),
                expected(1.0, new boolean[] {true, true, false, false, true, false}));
        // softmax: 0.561, 0.206, 0.076, 0.028, 0.125, 0.004 → with p = 0.8 the ascending cumsum drops
        // tokens whose cumulative mass stays <= 0.2: −3 (0.004), −1 (0.032), 0 (0.108); 0.5 makes 0.233
        assertClose(frequencies(SamplingConfig.sample(1.0, null, 0.8, 1, 1), 20000),
                expected(1.0, new boolean[] {true, true, false, false, true, false}));
    }

    @Test
    void eachRowDrawsFromItsOwnStream() {
        float[] two = new float[LOGITS.length * 2];
        System.arraycopy(LOGITS, 0, two, 0, LOGITS.length);
        System.arraycopy(LOGITS, 0, two, LOGITS.length, LOGITS.length);
        List<Rng> pair = new ArrayList<>(List.of(new Rng(11), new Rng(12)));
        List<Rng> alone = new ArrayList<>(List.of(new Rng(12)));
        SamplingConfig config = SamplingConfig.sample(1.0, null, null, 1, 1);
        try (Scope s = Scope.open(); Sampler both = new Sampler(config, pair, LOGITS.length);
                Sampler single = new Sampler(config, alone, LOGITS.length)) {
            Tensor logitsTwo = Tensor.ofFloats(two, Device.CPU, 2, LOGITS.length);
            Tensor logitsOne = Tensor.ofFloats(LOGITS, Device.CPU, 1, LOGITS.length);
            long differ = 0;
            for (int step = 0; step < 200; step++) {
                long[] a = both.choose(logitsTwo, step).toLongArray();
                long[] b = single.choose(logitsOne, step).toLongArray();
                assertThat(a[1]).as("step %d: row 1 with a neighbour = row alone", step).isEqualTo(b[0]);
                differ += a[0] != a[1] ? 1 : 0;
            }
            assertThat(differ).as("the two rows' streams differ").isGreaterThan(50);
        } finally {
            pair.forEach(Rng::close);
            alone.forEach(Rng::close);
        }
    }
}
