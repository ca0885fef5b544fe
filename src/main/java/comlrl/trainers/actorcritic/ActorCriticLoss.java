package comlrl.trainers.actorcritic;

import comlrl.rl.Advantages;
import comlrl.rl.Stats;
import comlrl.tensor.Tensor;

/**
 * The math of the actor-critic trainers (reference §5.5, §5.6), one place for each formula.
 *
 * <p>Targets of one agent's episode of T executed turns, shaped rewards {@code r'_t = r_t − β·KL_t}
 * and old values {@code V_old(h_t)} (the critic's value of turn t's input, recorded at rollout):
 * <pre>
 *   y_t = r'_t + γ·V_old(h_{t+1})      t &lt; T−1
 *   y_t = r'_t                         t = T−1 (the last executed turn, also after early termination)
 *   G_t = r'_t + γ·G_{t+1}             (the logged discounted return; γ = 1 gives the suffix sum)
 * </pre>
 * Advantages of one update group (one agent, one turn index):
 * <pre>
 *   A_j = y_j − V_old_j,    Â = (A − mean A) / max(std_pop A, 1e-6)   when normalising and |group| &gt; 1
 * </pre>
 * Losses of a minibatch B, with {@code log π_j = Σ_t log π(y_{j,t})} over the response tokens and the
 * current value {@code V_j}:
 * <pre>
 *   actor_loss = (1/|B|) Σ_j −log π_j · Â_j
 *   value_loss = (1/|B|) Σ_j e_j,   e_j = (y_j − V_j)²
 *                or, clipped (shared-head IAC with value_clip_range ε):
 *                e_j = max((y_j − V_j)², (y_j − V_clip_j)²),  V_clip = V_old + clamp(V − V_old, −ε, ε)
 * </pre>
 * A separate critic steps on {@code value_loss_coef · value_loss} and the actor on {@code actor_loss};
 * a shared backbone takes one step on {@code actor_loss + value_loss_coef · value_loss}.
 *
 * <p>The critic's health over an update group (cleanrl's {@code explained_variance}), with population
 * variances:
 * <pre>
 *   EV = 1 − Var[y − V_old] / Var[y]      (undefined, NaN, when Var[y] = 0)
 * </pre>
 * 1 when the old values predict the targets exactly, 0 when they do no better than the targets' mean,
 * negative when they do worse.
 */
public final class ActorCriticLoss {
    private ActorCriticLoss() {
    }

    /** {@code y_t} of one episode from its shaped rewards and old values (same length T ≥ 1). */
    public static double[] tdTargets(double[] shapedRewards, double[] oldValues, double gamma) {
        int n = shapedRewards.length;
        double[] y = new double[n];
        for (int t = 0; t < n; t++) {
            y[t] = t < n - 1 ? shapedRewards[t] + gamma * oldValues[t + 1] : shapedRewards[t];
        }
        return y;
    }

    /** {@code G_t = r'_t + γ·G_{t+1}}, {@code G_{T−1} = r'_{T−1}}. */
    public static double[] discountedReturns(double[] shapedRewards, double gamma) {
        double[] g = new double[shapedRewards.length];
        double next = 0;
        for (int t = shapedRewards.length - 1; t >= 0; t--) {
            next = shapedRewards[t] + (t == shapedRewards.length - 1 ? 0 : gamma * next);
            g[t] = next;
        }
        return g;
    }

    /** One agent's episode (one generation, T turns): {@code r'_t}, {@code y_t}, {@code G_t}, {@code A_t}. */
    public record Episode(double[] shapedRewards, double[] targets, double[] returns, double[] advantages) {
    }

    /**
     * {@link Episode} of rewards {@code r_t}, reference KLs {@code KL_t} and old values {@code V_old_t} (length
     * T ≥ 1): targets discounted by {@code gamma}, returns by {@code returnGamma} (IAC γ, MAAC 1: suffix sums).
     */
    public static Episode episode(double[] rewards, double[] kls, double[] oldValues, double beta, double gamma,
            double returnGamma) {
        int n = rewards.length;
        double[] shaped = new double[n];
        for (int t = 0; t < n; t++) {
            shaped[t] = rewards[t] - beta * kls[t];
        }
        double[] y = tdTargets(shaped, oldValues, gamma);
        return new Episode(shaped, y, discountedReturns(shaped, returnGamma), advantages(y, oldValues, false));
    }

    /** {@code A = y − V_old}, normalised over the group ({@link Advantages#normalize}) when asked. */
    public static double[] advantages(double[] targets, double[] oldValues, boolean normalize) {
        double[] a = new double[targets.length];
        for (int j = 0; j < a.length; j++) {
            a[j] = targets[j] - oldValues[j];
        }
        return normalize ? Advantages.normalize(a) : a;
    }

    /**
     * The per-sample value error {@code e [B]} of current values {@code v [B]} (differentiable),
     * targets and old values as constants; clipped when {@code clipRange} is not null.
     */
    public static Tensor valueErrors(Tensor v, double[] targets, double[] oldValues, Double clipRange) {
        Tensor y = Tensor.ofDoubles(targets, v.device()).to(v.dtype());
        Tensor d = y.sub(v);
        Tensor plain = d.mul(d);
        if (clipRange == null) {
            return plain;
        }
        Tensor old = Tensor.ofDoubles(oldValues, v.device()).to(v.dtype());
        Tensor clipped = old.add(v.sub(old).clampMin(-clipRange).clampMax(clipRange));
        Tensor dc = y.sub(clipped);
        return plain.maximum(dc.mul(dc));
    }

    /**
     * {@code 1 − Var[y − v] / Var[y]} of {@code targets} y and {@code values} v (population variances);
     * NaN when {@code Var[y] = 0} (one sample, or equal targets), where it is undefined.
     */
    public static double explainedVariance(double[] targets, double[] values) {
        double[] residuals = new double[targets.length];
        for (int j = 0; j < targets.length; j++) {
            residuals[j] = targets[j] - values[j];
        }
        double varY = variance(targets);
        return varY == 0 ? Double.NaN : 1 - variance(residuals) / varY;
    }

    /** The population variance {@code (1/n) Σ (x − mean x)²}. */
    private static double variance(double[] x) {
        double mean = Stats.mean(x);
        double sum = 0;
        for (double v : x) {
            sum += (v - mean) * (v - mean);
        }
        return sum / x.length;
    }
}
