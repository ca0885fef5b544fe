package comlrl.generation;

import comlrl.tensor.Device;
import comlrl.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;

/** The rows and per-token weights of the scoring tests, built as {@link Scorer} lays them out. */
final class ScoringRows {
    private ScoringRows() {
    }

    /** Each prompt ⊕ completion (to be left-padded as {@link Scorer} pads them). */
    static List<long[]> rows(List<long[]> prompts, List<long[]> completions) {
        List<long[]> rows = new ArrayList<>();
        for (int i = 0; i < prompts.size(); i++) {
            long[] r = new long[prompts.get(i).length + completions.get(i).length];
            System.arraycopy(prompts.get(i), 0, r, 0, prompts.get(i).length);
            System.arraycopy(completions.get(i), 0, r, prompts.get(i).length, completions.get(i).length);
            rows.add(r);
        }
        return rows;
    }

    /** {@code [N, T]}: w_i at row i's completion tokens (right-aligned), 0 at padding. */
    static Tensor coefficients(List<long[]> completions, double[] weights, long t) {
        int n = completions.size();
        float[] coef = new float[(int) (n * t)];
        for (int i = 0; i < n; i++) {
            for (int j = (int) t - completions.get(i).length; j < t; j++) {
                coef[(int) (i * t + j)] = (float) weights[i];
            }
        }
        return Tensor.ofFloats(coef, Device.CPU, n, t);
    }
}
