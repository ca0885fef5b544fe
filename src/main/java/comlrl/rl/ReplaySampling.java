package comlrl.rl;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;

/**
 * Which stored preference pairs the iterative trainers train on (reference §7.4 step 3): each
 * iteration's pairs are one shard; {@link #shardWeights} weighs the shards by age for a
 * {@link ReplayMode}, {@link #sample} draws records from them by those weights, {@link #sampleSize}
 * says how many. Pure: the result depends only on the arguments and the given {@link Random}.
 */
public final class ReplaySampling {
    private ReplaySampling() {
    }

    /**
     * The weight of each of {@code shardCount} shards, ordered oldest → newest (index i has age
     * {@code a = shardCount − 1 − i}, age 0 = newest):
     * <pre>
     *   current       w_a = [a = 0]
     *   nearest_k     w_a = [a &lt; k] / min(k, count)               k ≥ 1 (k &gt; count → every shard)
     *   all_history   w_a = 1 / count
     *   lambda_decay  w_a = (1−λ)·λ^a / Σ_b (1−λ)·λ^b              λ ∈ [0, 1]; λ = 1 → 1 / count (uniform);
     *                                                              λ = 0 → [a = 0] (0^0 = 1)
     * </pre>
     *
     * @param k {@code preference_replay_k}: required for nearest_k, ignored otherwise
     * @param lambda {@code preference_replay_lambda}: required for lambda_decay, ignored otherwise
     * @return {@code [shardCount]} weights summing to 1 (empty when there are no shards)
     */
    public static double[] shardWeights(ReplayMode mode, int shardCount, Integer k, Double lambda) {
        if (shardCount < 0) {
            throw new IllegalArgumentException("shardCount must be >= 0, got " + shardCount);
        }
        if (mode == ReplayMode.NEAREST_K && (k == null || k < 1)) {
            throw new IllegalArgumentException("preference_replay_mode='nearest_k' needs preference_replay_k >= 1, got "
                    + k + "; set preference_replay_k to the number of newest iterations to replay");
        }
        if (mode == ReplayMode.LAMBDA_DECAY && (lambda == null || !(lambda >= 0 && lambda <= 1))) {
            throw new IllegalArgumentException("preference_replay_mode='lambda_decay' needs preference_replay_lambda in "
                    + "[0, 1], got " + lambda + "; 0 replays only the newest iteration, 1 all of them uniformly");
        }
        double[] weights = new double[shardCount]; // [count], oldest first
        for (int i = 0; i < shardCount; i++) {
            int age = shardCount - 1 - i;
            weights[i] = switch (mode) {
                case CURRENT -> age == 0 ? 1 : 0;
                case NEAREST_K -> age < k ? 1 : 0;
                case ALL_HISTORY -> 1;
                case LAMBDA_DECAY -> lambda == 1 ? 1 : (1 - lambda) * Math.pow(lambda, age);
            };
        }
        double total = Arrays.stream(weights).sum();
        return Arrays.stream(weights).map(w -> w / total).toArray();
    }

    /**
     * {@code sampleSize} records drawn from {@code shards} (oldest first) by {@code weights}:
     * <pre>
     *   w'_i  = 0 if shard i is empty, else weights_i;   W = Σ w'_i        (W = 0 → no records)
     *   draw  : u = random.nextDouble() · W;  shard = the first i with u &lt; Σ_{j≤i} w'_j
     *           record = the shard's next one in its current order: a Collections.shuffle of its records
     *           with {@code random}, made when the shard is first drawn and made afresh each time it is
     *           used up (so no record repeats before its shard is exhausted: "cycled")
     * </pre>
     * The shard's random number is drawn before that shard's shuffle. Deterministic for a seeded {@code random}.
     *
     * @param weights {@code [shards.size()]} finite non-negative weights, e.g. from {@link #shardWeights}
     */
    public static <T> List<T> sample(List<List<T>> shards, double[] weights, int sampleSize,
            Random random) {
        if (weights.length != shards.size()) {
            throw new IllegalArgumentException("one weight per replay shard is needed: " + shards.size() + " shards, "
                    + weights.length + " weights");
        }
        if (sampleSize < 0) {
            throw new IllegalArgumentException("the replay sample size must be >= 0, got " + sampleSize);
        }
        double[] cumulative = new double[weights.length]; // [shards], Σ_{j≤i} w'_j
        double total = 0;
        int lastWeighted = -1; // where u rounded up to W lands
        for (int i = 0; i < weights.length; i++) {
            if (!(weights[i] >= 0) || !Double.isFinite(weights[i])) {
                throw new IllegalArgumentException("replay shard weight " + i + " is " + weights[i]
                        + ": weights must be finite and >= 0");
            }
            if (!shards.get(i).isEmpty() && weights[i] > 0) {
                total += weights[i];
                lastWeighted = i;
            }
            cumulative[i] = total;
        }
        List<T> drawn = new ArrayList<>();
        if (total == 0) {
            return drawn;
        }
        List<List<Integer>> orders = new ArrayList<>(Collections.nCopies(shards.size(), null)); // per shard: the shuffle
        int[] next = new int[shards.size()]; // per shard: position in its order
        for (int draw = 0; draw < sampleSize; draw++) {
            double u = random.nextDouble() * total;
            int shard = lastWeighted;
            for (int i = 0; i < cumulative.length; i++) {
                if (u < cumulative[i]) {
                    shard = i;
                    break;
                }
            }
            List<T> records = shards.get(shard);
            if (orders.get(shard) == null || next[shard] == records.size()) {
                List<Integer> order = new ArrayList<>(IntStream.range(0, records.size()).boxed().toList());
                Collections.shuffle(order, random);
                orders.set(shard, order);
                next[shard] = 0;
            }
            drawn.add(records.get(orders.get(shard).get(next[shard]++)));
        }
        return drawn;
    }

    /**
     * How many records to train on: {@code preference_replay_sample_size} when set (≥ 1), else this
     * iteration's pair count, or when that is 0 the last non-empty shard's record count.
     */
    public static int sampleSize(Integer configured, int currentPairs, int lastNonEmptyShardSize) {
        if (configured != null) {
            if (configured < 1) {
                throw new IllegalArgumentException("preference_replay_sample_size must be >= 1 or null (null trains on "
                        + "as many pairs as the iteration produced), got " + configured);
            }
            return configured;
        }
        return currentPairs > 0 ? currentPairs : lastNonEmptyShardSize;
    }
}
