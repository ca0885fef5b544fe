package comlrl.rl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class ReplaySamplingTest {
    /** A record as the sampler sees it: any object; a name here. */
    private static String record(String name) {
        return name;
    }

    /** A Random whose nextDouble and nextInt(bound) return scripted values, recording the bounds asked for. */
    private static final class ScriptedRandom extends Random {
        final Deque<Double> doubles = new ArrayDeque<>();
        final Deque<Integer> ints = new ArrayDeque<>();
        final List<Integer> bounds = new ArrayList<>();

        ScriptedRandom(List<Double> doubles, List<Integer> ints) {
            this.doubles.addAll(doubles);
            this.ints.addAll(ints);
        }

        @Override
        public double nextDouble() {
            return doubles.pop();
        }

        @Override
        public int nextInt(int bound) {
            bounds.add(bound);
            return ints.pop();
        }
    }

    // ---- ReplayMode

    @Test
    void replayModeParsesNamesAndAliases() {
        assertThat(ReplayMode.parse(null)).isEqualTo(ReplayMode.CURRENT);
        assertThat(Stream.of("current", "latest", " NEW ").map(ReplayMode::parse)).containsOnly(ReplayMode.CURRENT);
        assertThat(Stream.of("nearest_k", "recent_k", "last_k", "k").map(ReplayMode::parse))
                .containsOnly(ReplayMode.NEAREST_K);
        assertThat(ReplayMode.parse("all_history")).isEqualTo(ReplayMode.ALL_HISTORY);
        assertThat(Stream.of("lambda_decay", "lambda", "TD_Lambda").map(ReplayMode::parse))
                .containsOnly(ReplayMode.LAMBDA_DECAY);
        assertThatThrownBy(() -> ReplayMode.parse("newest")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("preference_replay_mode must be one of: current (or latest, new), nearest_k (or recent_k, "
                        + "last_k, k), all_history, lambda_decay (or lambda, td_lambda) (got \"newest\")");
    }

    // ---- shardWeights (index 0 = oldest; age = count − 1 − index)

    @Test
    void currentWeighsOnlyTheNewestShard() {
        assertThat(ReplaySampling.shardWeights(ReplayMode.CURRENT, 3, null, null)).containsExactly(0, 0, 1);
        assertThat(ReplaySampling.shardWeights(ReplayMode.CURRENT, 1, null, null)).containsExactly(1);
        assertThat(ReplaySampling.shardWeights(ReplayMode.CURRENT, 0, null, null)).isEmpty();
    }

    @Test
    void nearestKIsUniformOverTheLastKShards() {
        // k = 2 of 3: ages 0 and 1, i.e. indices 1 and 2
        assertThat(ReplaySampling.shardWeights(ReplayMode.NEAREST_K, 3, 2, null)).containsExactly(0, 0.5, 0.5);
        // k = 5 > 4 shards: all of them
        assertThat(ReplaySampling.shardWeights(ReplayMode.NEAREST_K, 4, 5, null))
                .containsExactly(0.25, 0.25, 0.25, 0.25);
        assertThatThrownBy(() -> ReplaySampling.shardWeights(ReplayMode.NEAREST_K, 3, null, null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("preference_replay_mode='nearest_k' needs preference_replay_k >= 1, got null");
        assertThatThrownBy(() -> ReplaySampling.shardWeights(ReplayMode.NEAREST_K, 3, 0, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("preference_replay_k >= 1, got 0");
    }

    @Test
    void allHistoryIsUniform() {
        assertThat(ReplaySampling.shardWeights(ReplayMode.ALL_HISTORY, 4, null, null))
                .containsExactly(0.25, 0.25, 0.25, 0.25);
    }

    @Test
    void lambdaDecayWeighsByAge() {
        // λ = 0.5, 3 shards, ages 2, 1, 0: (1−λ)λ^a = 0.125, 0.25, 0.5, sum 0.875 → 1/7, 2/7, 4/7
        assertThat(ReplaySampling.shardWeights(ReplayMode.LAMBDA_DECAY, 3, null, 0.5))
                .containsExactly(new double[] {1.0 / 7, 2.0 / 7, 4.0 / 7}, within(1e-15));
        // λ = 0.25, 2 shards, ages 1, 0: 0.1875, 0.75, sum 0.9375 → 0.2, 0.8
        assertThat(ReplaySampling.shardWeights(ReplayMode.LAMBDA_DECAY, 2, null, 0.25))
                .containsExactly(new double[] {0.2, 0.8}, within(1e-15));
        // λ = 1: the formula gives 0 everywhere, the rule is uniform; λ = 0: 0^0 = 1, only the newest
        assertThat(ReplaySampling.shardWeights(ReplayMode.LAMBDA_DECAY, 4, null, 1.0))
                .containsExactly(0.25, 0.25, 0.25, 0.25);
        assertThat(ReplaySampling.shardWeights(ReplayMode.LAMBDA_DECAY, 3, null, 0.0)).containsExactly(0, 0, 1);
        for (Double bad : new Double[] {null, -0.1, 1.5, Double.NaN}) {
            assertThatThrownBy(() -> ReplaySampling.shardWeights(ReplayMode.LAMBDA_DECAY, 3, null, bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("preference_replay_mode='lambda_decay' needs preference_replay_lambda in "
                            + "[0, 1], got " + bad);
        }
    }

    // ---- sample

    @Test
    void sampleDrawsShardsByWeightAndRecordsWithoutReplacementThenCycles() {
        // A = [a0, a1] (oldest, weight 0.25), B = [b0, b1, b2] (newest, weight 0.75): CDF [0.25, 1].
        // Collections.shuffle(list, r): for i = size..2: swap(i−1, r.nextInt(i)).
        //   draw 1: u 0.10 → A (first use: shuffle [0,1], nextInt(2)=0 → swap(1,0) → [1,0])   → a1
        //   draw 2: u 0.25 → B (not < 0.25) (shuffle [0,1,2], nextInt(3)=0 → [2,1,0], nextInt(2)=1 → [2,1,0]) → b2
        //   draw 3: u 0.90 → B → b1
        //   draw 4: u 0.20 → A → a0                                                   (A now used up)
        //   draw 5: u 0.50 → B → b0                                                   (B now used up)
        //   draw 6: u 0.00 → A, exhausted: fresh shuffle, nextInt(2)=1 → [0,1]          → a0
        //   draw 7: u 0.99 → B, exhausted: nextInt(3)=1 → [0,2,1], nextInt(2)=0 → [2,0,1] → b2
        String a0 = record("a0"), a1 = record("a1"), b0 = record("b0"), b1 = record("b1"), b2 = record("b2");
        ScriptedRandom random = new ScriptedRandom(List.of(0.10, 0.25, 0.90, 0.20, 0.50, 0.0, 0.99),
                List.of(0, 0, 1, 1, 1, 0));
        List<String> drawn = ReplaySampling.sample(List.of(List.of(a0, a1), List.of(b0, b1, b2)),
                new double[] {0.25, 0.75}, 7, random);
        assertThat(drawn).containsExactly(a1, b2, b1, a0, b0, a0, b2);
        assertThat(random.bounds).containsExactly(2, 3, 2, 2, 3, 2);
        assertThat(random.doubles).isEmpty();
        assertThat(random.ints).isEmpty();
    }

    @Test
    void emptyShardsGetNoWeight() {
        // shard 0 is empty: weights become [0, 0.1], u = 0.05 · 0.1 = 0.005 → shard 1; its one record needs a
        // shuffle of one element (no random numbers)
        String x = record("x");
        ScriptedRandom random = new ScriptedRandom(List.of(0.05, 0.0), List.of());
        assertThat(ReplaySampling.sample(List.of(List.of(), List.of(x)), new double[] {0.9, 0.1}, 2, random))
                .containsExactly(x, x);
        // every shard empty (or a size of 0): nothing, and no random numbers drawn
        ScriptedRandom untouched = new ScriptedRandom(List.of(), List.of());
        assertThat(ReplaySampling.sample(List.of(List.of(), List.of()), new double[] {0.5, 0.5}, 4, untouched)).isEmpty();
        assertThat(ReplaySampling.sample(List.of(List.of(x)), new double[] {1}, 0, untouched)).isEmpty();
    }

    @Test
    void aDrawAtTheTopOfTheCdfFallsToTheLastWeightedShard() {
        // u = W (a nextDouble rounded up to 1): no u < cumulative; the last non-empty shard with weight is 1
        String x = record("x"), y = record("y");
        ScriptedRandom random = new ScriptedRandom(List.of(1.0), List.of());
        assertThat(ReplaySampling.sample(List.of(List.of(x), List.of(y), List.of()), new double[] {0.5, 0.5, 0}, 1,
                random)).containsExactly(y);
    }

    @Test
    void noRecordRepeatsBeforeItsShardIsUsedUp() {
        List<String> shard = Stream.of("r0", "r1", "r2", "r3", "r4", "r5").map(ReplaySamplingTest::record).toList();
        for (long seed = 0; seed < 10; seed++) {
            List<String> drawn = ReplaySampling.sample(List.of(shard), new double[] {1}, 14, new Random(seed));
            assertThat(drawn).hasSize(14);
            assertThat(new HashSet<>(drawn.subList(0, 6))).hasSize(6);
            assertThat(new HashSet<>(drawn.subList(6, 12))).hasSize(6);
            assertThat(ReplaySampling.sample(List.of(shard), new double[] {1}, 14, new Random(seed))).isEqualTo(drawn);
        }
    }

    @Test
    void sampleRejectsMismatchedOrNegativeWeights() {
        List<List<String>> shards = List.of(List.of(record("x")));
        assertThatThrownBy(() -> ReplaySampling.sample(shards, new double[] {0.5, 0.5}, 1, new Random(0)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("one weight per replay shard is needed: 1 shards, 2 weights");
        assertThatThrownBy(() -> ReplaySampling.sample(shards, new double[] {-1}, 1, new Random(0)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("replay shard weight 0 is -1.0");
        assertThatThrownBy(() -> ReplaySampling.sample(shards, new double[] {1}, -1, new Random(0)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(">= 0, got -1");
    }

    @Test
    void sampleSizeIsTheConfiguredOneElseTheCurrentPairsElseTheLastNonEmptyShard() {
        assertThat(ReplaySampling.sampleSize(5, 3, 7)).isEqualTo(5);
        assertThat(ReplaySampling.sampleSize(null, 3, 7)).isEqualTo(3);
        assertThat(ReplaySampling.sampleSize(null, 0, 7)).isEqualTo(7);
        assertThatThrownBy(() -> ReplaySampling.sampleSize(0, 3, 7)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("preference_replay_sample_size must be >= 1 or null")
                .hasMessageEndingWith("got 0");
    }
}
