package comlrl.trainers.preference;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.checkpoint.Checkpoints;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The iterative trainers' preference replay (reference §7.4 step 3): each iteration's pairs go to one
 * shard {@code {preference_replay_dir}/iteration_NNNN.json}; the pairs trained on are drawn from the
 * shards by {@link comlrl.rl.ReplaySampling}.
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
