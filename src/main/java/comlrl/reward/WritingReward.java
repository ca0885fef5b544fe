package comlrl.reward;

import comlrl.data.TaskItem;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The level rewards of two-agent collaborative writing (config {@code type: writing, task: tldr|arxiv}):
 * agent 0 writes c1, agent 1 writes c2, and a joint response earns up to 3.0 in four levels, each
 * reached only when the one before it is met (as CoMLRL's writing environments define them):
 * <pre>
 *   T(c) = whitespace-separated tokens of c        L(c) = length of c in code points
 *   W(c) = the set of lowercase words (\w+) of c   S    = function words (resource writing-stopwords.txt)
 *   ramp(x; lo, a, b, hi) = 1 on [a, b];  (x − lo)/(a − lo) on [lo, a);  1 − (x − b)/(hi − b) on (b, hi];
 *                           outside [lo, hi] the level fails and the reward stops there
 *
 *   level 1, structure:    T(c1), T(c2) both in [minTokens, maxTokens]          → + 0.5
 *   level 2, coordination: r = L(c2) / L(c1) (stop if L(c1) = 0)                  → + ramp(r; lengthRatio)
 *   level 3, vocabulary:   u = |W(c2)| / |W(c1)| (stop if W(c1) empty)            → + 0.5 · ramp(u; uniqueWordsRatio)
 *   level 4, style:        k = transition categories found in c2 (arXiv: in c1 and c2)
 *                          t = 0 if k = 0, else min(0.4 + min(0.05 · (k − 1), 0.6), 1)
 *                          J = |W(c1)∖S ∩ W(c2)∖S| / |W(c1)∖S ∪ W(c2)∖S|  (1 when both are empty)
 *                                                                                → + 0.4 · t + 0.6 · min(J, jaccardCap) / jaccardCap
 * </pre>
 * {@link #TLDR}: tokens in [8, 256]; r ramps on (1.1, 1.6, 3.2, 5.0) (the elaboration 1.6–3.2 times
 * the summary's length); u on (1.3, 2.0, ∞, ∞) (at least twice the summary's vocabulary);
 * J capped at 0.03. {@link #ARXIV}: tokens in [128, 256]; r on (0.8, 1.3, 1.6, 2.0); u on
 * (0.5, 0.7, 1.3, 1.7); J capped at 0.23; transitions counted over both texts.
 *
 * <p>Two choices differ from the Python definitions: transition words are matched as whole words
 * or phrases ("so" is not found inside "also", "as" not inside "was"), where a substring match finds
 * several categories in nearly any text; and the word lists are this library's own (12 categories,
 * resource writing-transitions.txt), so a text's level 4 can differ slightly. u counts all words,
 * function words included, as the Python code does (its documentation says otherwise).
 */
public final class WritingReward implements RewardFunction {
    /** A trapezoid {@code ramp(x; low, fullFrom, fullTo, high)}; see the class comment. */
    public record Ramp(double low, double fullFrom, double fullTo, double high) {
        public Ramp {
            if (!(low <= fullFrom && fullFrom <= fullTo && fullTo <= high)) {
                throw new IllegalArgumentException("a ramp needs low <= fullFrom <= fullTo <= high, got " + low + ", "
                        + fullFrom + ", " + fullTo + ", " + high);
            }
        }

        /** The ramp's value in [0, 1], or NaN when x lies outside [low, high] (the level fails). */
        public double value(double x) {
            if (x >= fullFrom && x <= fullTo) {
                return 1.0;
            }
            if (x >= low && x < fullFrom) {
                return (x - low) / (fullFrom - low);
            }
            if (x > fullTo && x <= high) {
                return 1.0 - (x - fullTo) / (high - fullTo);
            }
            return Double.NaN;
        }
    }

    /** The thresholds of one writing task; see the class comment. */
    public record Levels(String task, int minTokens, int maxTokens, Ramp lengthRatio, Ramp uniqueWordsRatio,
            double jaccardCap, boolean transitionsInBoth) {}

    /** TL;DR: a concise summary (agent 0) and a longer elaboration with a richer vocabulary (agent 1). */
    public static final Levels TLDR = new Levels("tldr", 8, 256, new Ramp(1.1, 1.6, 3.2, 5.0),
            new Ramp(1.3, 2.0, Double.POSITIVE_INFINITY, Double.POSITIVE_INFINITY), 0.03, false);
    /** arXiv: two halves of an introduction from an abstract (background + motivation; method + implications). */
    public static final Levels ARXIV = new Levels("arxiv", 128, 256, new Ramp(0.8, 1.3, 1.6, 2.0),
            new Ramp(0.5, 0.7, 1.3, 1.7), 0.23, true);

    /** The parts of one joint response's reward; {@link #total()} is the reward. */
    public record Breakdown(double structure, double coordination, double vocabulary, double style, int levelsPassed,
            double lengthRatio, double uniqueWordsRatio, double jaccard, int transitionCategories) {
        public double total() {
            return structure + coordination + vocabulary + style;
        }

        /** The parts as evaluation metrics ({@code writing_*}); ratios of a level not reached are absent. */
        public Map<String, Double> metrics() {
            Map<String, Double> m = new LinkedHashMap<>();
            m.put("writing_reward", total());
            m.put("writing_structure", structure);
            m.put("writing_coordination", coordination);
            m.put("writing_vocabulary", vocabulary);
            m.put("writing_style", style);
            m.put("writing_levels_passed", (double) levelsPassed);
            putIfFinite(m, "writing_length_ratio", lengthRatio);
            putIfFinite(m, "writing_unique_words_ratio", uniqueWordsRatio);
            putIfFinite(m, "writing_jaccard", jaccard);
            if (levelsPassed >= 3) {
                m.put("writing_transition_categories", (double) transitionCategories);
            }
            return m;
        }

        private static void putIfFinite(Map<String, Double> m, String key, double v) {
            if (Double.isFinite(v)) {
                m.put(key, v);
            }
        }
    }

    private static final Pattern WORD = Pattern.compile("\\w+", Pattern.UNICODE_CHARACTER_CLASS);
    private static final Pattern SPACE = Pattern.compile("\\s+", Pattern.UNICODE_CHARACTER_CLASS);
    private static final Set<String> STOPWORDS = Set.copyOf(lines("writing-stopwords.txt"));
    /** Category → its phrases as whole-word patterns, in file order. */
    private static final Map<String, List<Pattern>> TRANSITIONS = transitions(lines("writing-transitions.txt"));

    private final Levels levels;

    public WritingReward(Levels levels) {
        this.levels = java.util.Objects.requireNonNull(levels, "levels");
    }

    /** The reward of {@code task} ("tldr" or "arxiv", any case). */
    public static WritingReward forTask(String task) {
        return switch (task.trim().toLowerCase(Locale.ROOT)) {
            case "tldr" -> new WritingReward(TLDR);
            case "arxiv" -> new WritingReward(ARXIV);
            default -> throw new IllegalArgumentException("reward writing: unknown task '" + task
                    + "'; use tldr (summary + elaboration) or arxiv (two halves of an introduction)");
        };
    }

    public Levels levels() {
        return levels;
    }

    @Override
    public List<Double> score(List<List<String>> agentCompletions, List<TaskItem> batchItems) {
        if (agentCompletions.size() != 2) {
            throw new IllegalArgumentException("writing reward needs 2 agents (" + (levels.transitionsInBoth()
                    ? "background, method" : "summary, elaboration") + "), got " + agentCompletions.size()
                    + "; set num_agents: 2");
        }
        int k = RewardFunctions.jointResponseCount(agentCompletions);
        List<Double> rewards = new ArrayList<>(k);
        for (int j = 0; j < k; j++) {
            rewards.add(breakdown(agentCompletions.get(0).get(j), agentCompletions.get(1).get(j)).total());
        }
        return rewards;
    }

    /** Every level of one joint response; see the class comment. */
    public Breakdown breakdown(String c1, String c2) {
        double nan = Double.NaN;
        if (!inRange(tokens(c1)) || !inRange(tokens(c2))) {
            return new Breakdown(0, 0, 0, 0, 0, nan, nan, nan, 0);
        }
        int len1 = c1.codePointCount(0, c1.length());
        if (len1 == 0) {
            return new Breakdown(0.5, 0, 0, 0, 1, nan, nan, nan, 0);
        }
        double r = (double) c2.codePointCount(0, c2.length()) / len1;
        double coordination = levels.lengthRatio().value(r);
        if (Double.isNaN(coordination)) {
            return new Breakdown(0.5, 0, 0, 0, 1, r, nan, nan, 0);
        }
        Set<String> w1 = words(c1);
        Set<String> w2 = words(c2);
        double u = w1.isEmpty() ? nan : (double) w2.size() / w1.size();
        double vocabulary = w1.isEmpty() ? nan : 0.5 * levels.uniqueWordsRatio().value(u);
        if (Double.isNaN(vocabulary)) {
            return new Breakdown(0.5, coordination, 0, 0, 2, r, u, nan, 0);
        }
        int k = transitionCategories(levels.transitionsInBoth() ? c1 + "\n" + c2 : c2);
        double t = k == 0 ? 0.0 : Math.min(0.4 + Math.min(0.05 * (k - 1), 0.6), 1.0);
        double jaccard = jaccard(content(w1), content(w2));
        double style = 0.4 * t + 0.6 * Math.min(jaccard, levels.jaccardCap()) / levels.jaccardCap();
        return new Breakdown(0.5, coordination, vocabulary, style, 4, r, u, jaccard, k);
    }

    /** The reward lies in [0, 3]. */
    @Override
    public double[] rewardRange() {
        return new double[] {0.0, 3.0};
    }

    private boolean inRange(int tokens) {
        return tokens >= levels.minTokens() && tokens <= levels.maxTokens();
    }

    /** Python's {@code len(text.split())}. */
    static int tokens(String text) {
        String t = text.strip();
        return t.isEmpty() ? 0 : SPACE.split(t).length;
    }

    /** The lowercase words ({@code \w+}) of a text. */
    static Set<String> words(String text) {
        Set<String> words = new HashSet<>();
        Matcher m = WORD.matcher(text.toLowerCase(Locale.ROOT));
        while (m.find()) {
            words.add(m.group());
        }
        return words;
    }

    private static Set<String> content(Set<String> words) {
        Set<String> content = new HashSet<>(words);
        content.removeAll(STOPWORDS);
        return content;
    }

    /** |a ∩ b| / |a ∪ b|; 1 when both are empty. */
    static double jaccard(Set<String> a, Set<String> b) {
        if (a.isEmpty() && b.isEmpty()) {
            return 1.0;
        }
        Set<String> union = new HashSet<>(a);
        union.addAll(b);
        long common = a.stream().filter(b::contains).count();
        return (double) common / union.size();
    }

    /** The number of categories with at least one phrase in {@code text} (whole words, any case). */
    static int transitionCategories(String text) {
        int found = 0;
        for (List<Pattern> phrases : TRANSITIONS.values()) {
            if (phrases.stream().anyMatch(p -> p.matcher(text).find())) {
                found++;
            }
        }
        return found;
    }

    private static Map<String, List<Pattern>> transitions(List<String> lines) {
        Map<String, List<Pattern>> map = new LinkedHashMap<>();
        List<Pattern> current = null;
        for (String line : lines) {
            if (line.startsWith("[") && line.endsWith("]")) {
                current = map.computeIfAbsent(line.substring(1, line.length() - 1), c -> new ArrayList<>());
            } else if (current != null) {
                String phrase = String.join("\\s+", java.util.Arrays.stream(line.split(" ")).map(Pattern::quote).toList());
                current.add(Pattern.compile("(?<!\\w)" + phrase + "(?!\\w)",
                        Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE | Pattern.UNICODE_CHARACTER_CLASS));
            }
        }
        return map;
    }

    /** The non-blank, non-comment lines of a resource next to this class. */
    private static List<String> lines(String resource) {
        try (InputStream in = WritingReward.class.getResourceAsStream("/comlrl/reward/" + resource)) {
            if (in == null) {
                throw new IllegalStateException("missing resource comlrl/reward/" + resource);
            }
            List<String> lines = new ArrayList<>();
            BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            for (String line; (line = r.readLine()) != null; ) {
                String t = line.strip();
                if (!t.isEmpty() && !t.startsWith("#")) {
                    lines.add(t.toLowerCase(Locale.ROOT));
                }
            }
            return lines;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public String toString() {
        return "WritingReward(" + levels.task() + ")";
    }
}
