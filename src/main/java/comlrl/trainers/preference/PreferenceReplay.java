package comlrl.trainers.preference;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.checkpoint.Checkpoints;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import java.util.stream.Stream;

/**
 * The iterative trainers' preference replay (reference §7.4 step 3): each iteration's pairs go to one
 * shard {@code {preference_replay_dir}/iteration_NNNN.json}; the pairs trained on are drawn from the
 * shards by {@link #shardWeights} and {@link #sample}.
 * <p>
 * Shards hold text only. Token ids are not stored: the trainer rebuilds them on load by re-tokenising
 * each prompt with special tokens and each completion without, so a shard stays valid across
 * tokenizer settings and is readable by hand.
 */
public final class PreferenceReplay {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern SHARD_NAME = Pattern.compile("iteration_(\\d{4,9})\\.json");

    private PreferenceReplay() {
    }

    /**
     * One stored preference pair: per agent the prompt and the winner's and loser's completion texts,
     * with the processed joint rewards of the winner, the loser and the item's candidates (mean).
     */
    public record ReplayRecord(@JsonProperty("prompt_texts") List<String> promptTexts,
            @JsonProperty("winner_texts") List<String> winnerTexts, @JsonProperty("loser_texts") List<String> loserTexts,
            @JsonProperty("winner_reward") double winnerReward, @JsonProperty("loser_reward") double loserReward,
            @JsonProperty("candidate_reward_mean") double candidateRewardMean) {
        public ReplayRecord {
            promptTexts = List.copyOf(promptTexts);
            winnerTexts = List.copyOf(winnerTexts);
            loserTexts = List.copyOf(loserTexts);
            if (winnerTexts.size() != promptTexts.size() || loserTexts.size() != promptTexts.size()) {
                throw new IllegalArgumentException("a replay record needs one prompt, winner and loser text per agent, got "
                        + promptTexts.size() + " prompts, " + winnerTexts.size() + " winners, " + loserTexts.size()
                        + " losers");
            }
        }
    }

    /** A shard as written. */
    private record ShardFile(int iteration, List<ReplayRecord> pairs) {
    }

    /** One shard as read back: its iteration, file and records in stored order. */
    public record Shard(int iteration, Path file, List<ReplayRecord> records) {
        public Shard {
            records = List.copyOf(records);
        }
    }

    /** The shard file name of {@code iteration}: {@code iteration_NNNN.json} (at least 4 digits, zero padded). */
    public static String shardName(int iteration) {
        return String.format("iteration_%04d.json", iteration);
    }

    /**
     * Writes {@code records} as shard {@code dir/iteration_NNNN.json} (atomically), returning it:
     * {@code {"iteration": n, "pairs": [{prompt_texts, winner_texts, loser_texts, winner_reward,
     * loser_reward, candidate_reward_mean}, ...]}}.
     */
    public static Path writeShard(Path dir, int iteration, List<ReplayRecord> records) {
        if (iteration < 0) {
            throw new IllegalArgumentException("a replay shard's iteration must be >= 0, got " + iteration);
        }
        Path file = dir.resolve(shardName(iteration));
        Checkpoints.writeAtomically(file, tmp -> Checkpoints.writeJson(tmp, new ShardFile(iteration, records)));
        return file;
    }

    /** Reads one shard; fails naming the file when it is not one as {@link #writeShard} writes it. */
    public static Shard readShard(Path file) {
        try {
            Map<?, ?> doc = JSON.readValue(file.toFile(), Map.class);
            Object iteration = doc.get("iteration");
            if (!(iteration instanceof Integer n) || n < 0) {
                throw new IllegalArgumentException("'iteration' must be a non-negative integer, got " + iteration);
            }
            Matcher name = SHARD_NAME.matcher(file.getFileName().toString());
            if (name.matches() && Integer.parseInt(name.group(1)) != n) {
                throw new IllegalArgumentException("'iteration' is " + n + " but the file name says " + name.group(1));
            }
            if (!(doc.get("pairs") instanceof List<?> pairs)) {
                throw new IllegalArgumentException("'pairs' must be a list, got " + doc.get("pairs"));
            }
            List<ReplayRecord> records = new ArrayList<>();
            for (int i = 0; i < pairs.size(); i++) {
                if (!(pairs.get(i) instanceof Map<?, ?> row)) {
                    throw new IllegalArgumentException("pair " + i + " must be an object, got " + pairs.get(i));
                }
                String at = "pair " + i + ": ";
                records.add(new ReplayRecord(texts(row, "prompt_texts", at), texts(row, "winner_texts", at),
                        texts(row, "loser_texts", at), number(row, "winner_reward", at), number(row, "loser_reward", at),
                        number(row, "candidate_reward_mean", at)));
            }
            return new Shard(n, file, records);
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("Malformed replay shard " + file + ": " + e.getMessage()
                    + "; delete it or point preference_replay_dir at an intact replay directory", e);
        }
    }

    /** Every shard in {@code dir}, oldest iteration first; other files are ignored, a missing directory has none. */
    public static List<Shard> listShards(Path dir) {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> Files.isRegularFile(f) && SHARD_NAME.matcher(f.getFileName().toString()).matches())
                    .map(PreferenceReplay::readShard)
                    .sorted(Comparator.comparingInt(Shard::iteration))
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot list replay shards in " + dir + ": " + e.getMessage(), e);
        }
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
    public static List<ReplayRecord> sample(List<List<ReplayRecord>> shards, double[] weights, int sampleSize,
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
        List<ReplayRecord> drawn = new ArrayList<>();
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
            List<ReplayRecord> records = shards.get(shard);
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

    private static List<String> texts(Map<?, ?> row, String field, String at) {
        if (!(row.get(field) instanceof List<?> list) || !list.stream().allMatch(String.class::isInstance)) {
            throw new IllegalArgumentException(at + "'" + field + "' must be a list of strings, got " + row.get(field));
        }
        return list.stream().map(String.class::cast).toList();
    }

    private static double number(Map<?, ?> row, String field, String at) {
        if (!(row.get(field) instanceof Number n)) {
            throw new IllegalArgumentException(at + "'" + field + "' must be a number, got " + row.get(field));
        }
        return n.doubleValue();
    }
}
