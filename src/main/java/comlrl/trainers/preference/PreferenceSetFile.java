package comlrl.trainers.preference;

import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.checkpoint.Checkpoints;
import comlrl.trainers.common.TrainerCheckpoint;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The preference set in a checkpoint ({@code preference_pairs.json}): per pair and agent the prompt,
 * winner and loser texts and token ids, the rewards, the candidate mean and, for {@code frozen_initial}, the
 * frozen reference's log-probabilities. A resumed run trains on exactly these pairs instead of sampling new ones.
 */
final class PreferenceSetFile {
    static final String FILE = "preference_pairs.json";
    private static final ObjectMapper JSON = new ObjectMapper();

    private PreferenceSetFile() {
    }

    static TrainerCheckpoint.Part part(Supplier<List<PreferencePair>> current, Consumer<List<PreferencePair>> restore) {
        return new TrainerCheckpoint.Part() {
            @Override
            public void save(Path dir) {
                List<PreferencePair> pairs = current.get();
                List<Map<String, Object>> rows = new ArrayList<>();
                if (pairs != null) {
                    for (PreferencePair p : pairs) {
                        Map<String, Object> row = new LinkedHashMap<>();
                        row.put("prompt_texts", p.promptTexts());
                        row.put("winner_texts", p.winnerTexts());
                        row.put("loser_texts", p.loserTexts());
                        row.put("prompts", p.prompts());
                        row.put("winners", p.winners());
                        row.put("losers", p.losers());
                        row.put("winner_reward", p.winnerReward());
                        row.put("loser_reward", p.loserReward());
                        row.put("candidate_reward_mean", p.candidateRewardMean());
                        row.put("reference_winners", p.referenceWinners());
                        row.put("reference_losers", p.referenceLosers());
                        rows.add(row);
                    }
                }
                Map<String, Object> doc = new LinkedHashMap<>();
                doc.put("built", pairs != null);
                doc.put("pairs", rows);
                Checkpoints.writeJson(dir.resolve(FILE), doc);
            }

            @Override
            public void restore(Path dir) {
                Path file = dir.resolve(FILE);
                if (!Files.isRegularFile(file)) {
                    throw new IllegalArgumentException(dir + " has no " + FILE + " (the preference set of a preference-learning run)");
                }
                try {
                    Map<?, ?> doc = JSON.readValue(file.toFile(), Map.class);
                    if (!Boolean.TRUE.equals(doc.get("built"))) {
                        restore.accept(null);
                        return;
                    }
                    List<PreferencePair> pairs = new ArrayList<>();
                    for (Object o : (List<?>) doc.get("pairs")) {
                        Map<?, ?> row = (Map<?, ?>) o;
                        pairs.add(new PreferencePair(texts(row.get("prompt_texts")),
                                texts(row.get("winner_texts")), texts(row.get("loser_texts")), ids(row.get("prompts")), ids(row.get("winners")),
                                ids(row.get("losers")), num(row.get("winner_reward")), num(row.get("loser_reward")),
                                num(row.get("candidate_reward_mean")), doubles(row.get("reference_winners")),
                                doubles(row.get("reference_losers"))));
                    }
                    restore.accept(pairs);
                } catch (IOException | RuntimeException e) {
                    throw new IllegalArgumentException("Malformed " + file + ": " + e.getMessage()
                            + "; resume from an intact checkpoint", e);
                }
            }
        };
    }

    private static List<long[]> ids(Object o) {
        List<long[]> out = new ArrayList<>();
        for (Object row : (List<?>) o) {
            List<?> l = (List<?>) row;
            long[] a = new long[l.size()];
            for (int i = 0; i < a.length; i++) {
                a[i] = ((Number) l.get(i)).longValue();
            }
            out.add(a);
        }
        return out;
    }

    private static List<String> texts(Object o) {
        if (!(o instanceof List<?> l)) {
            throw new IllegalArgumentException("a pair has no texts");
        }
        return l.stream().map(t -> (String) t).toList();
    }

    private static double num(Object o) {
        return ((Number) o).doubleValue();
    }

    private static double[] doubles(Object o) {
        if (o == null) {
            return null;
        }
        List<?> l = (List<?>) o;
        double[] a = new double[l.size()];
        for (int i = 0; i < a.length; i++) {
            a[i] = num(l.get(i));
        }
        return a;
    }
}
