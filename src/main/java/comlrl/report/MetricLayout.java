package comlrl.report;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where each metric key goes in a report. First the headline charts, training reward and evaluation
 * reward with one line per turn ({@code turn_t/reward_mean}, {@code eval/turn_t/reward_mean}); then one
 * chart per remaining key, in sections by family: Training ({@code turn_t/...} and keys without a
 * prefix), Evaluation ({@code eval/...}), Per agent (keys with an {@code agent_i} segment, one chart per
 * key with the agent left out and one line per agent), and one section per other prefix
 * ({@code reward_model/...}, {@code preference/...}, {@code iter/...}). Within a section, charts are
 * ordered by {@link Kind}: rewards and returns, losses, KL, lengths, the rest.
 */
final class MetricLayout {
    private static final Pattern TURN_REWARD = Pattern.compile("turn_(\\d{1,6})/reward_mean");
    private static final Pattern EVAL_TURN_REWARD = Pattern.compile("eval/turn_(\\d{1,6})/reward_mean");
    private static final Pattern AGENT = Pattern.compile("(^|/)agent_(\\d{1,6})(?=/|$)");
    private static final Pattern TURN = Pattern.compile("turn_\\d+");
    private static final Pattern ACRONYM = Pattern.compile("\\b(kl|dpo|ppo|grpo|lora|td|ema)\\b");

    private MetricLayout() {
    }

    /** One curve per run: metric {@code key}, named {@code label} in a legend; {@code variant} orders and styles it. */
    record Line(String key, String label, int variant) {
    }

    /** One chart: its lines, a title, the key pattern it shows ({@code subtitle}); headline charts are {@code large}. */
    record Chart(String title, String subtitle, List<Line> lines, boolean large) {
        /** How many distinct variants (turns, agents) the chart holds. */
        int variants() {
            return (int) lines.stream().mapToInt(Line::variant).distinct().count();
        }
    }

    /** A section of charts, its {@code id} the page anchor. */
    record Section(String id, String title, List<Chart> charts) {
    }

    /** What a metric measures, read from its last segment's words: the order of charts within a section. */
    enum Kind {
        REWARD, LOSS, KL, LENGTH, OTHER;

        static Kind of(String key) {
            List<String> words = Arrays.asList(key.substring(key.lastIndexOf('/') + 1).toLowerCase(Locale.ROOT).split("_"));
            if (words.contains("kl")) {
                return KL;
            }
            if (words.stream().anyMatch(w -> w.contains("loss"))) {
                return LOSS;
            }
            if (words.contains("reward") || words.contains("return") || words.contains("advantage")) {
                return REWARD;
            }
            if (words.contains("length")) {
                return LENGTH;
            }
            return OTHER;
        }
    }

    /** The sections for a set of keys (the union of every run's). Every key is on exactly one chart. */
    static List<Section> of(Collection<String> keys) {
        List<Section> sections = new ArrayList<>();
        List<Chart> headline = new ArrayList<>();
        List<String> rest = new ArrayList<>();
        List<Line> train = new ArrayList<>();
        List<Line> eval = new ArrayList<>();
        for (String key : keys) {
            Matcher t = TURN_REWARD.matcher(key);
            Matcher e = EVAL_TURN_REWARD.matcher(key);
            if (t.matches()) {
                train.add(turnLine(key, t.group(1)));
            } else if (e.matches()) {
                eval.add(turnLine(key, e.group(1)));
            } else {
                rest.add(key);
            }
        }
        if (!train.isEmpty()) {
            headline.add(new Chart("Training reward", "turn_t/reward_mean", sortByVariant(train), true));
        }
        if (!eval.isEmpty()) {
            headline.add(new Chart("Evaluation reward", "eval/turn_t/reward_mean", sortByVariant(eval), true));
        }
        if (!headline.isEmpty()) {
            sections.add(new Section("headline", "Reward", headline));
        }
        // family -> chart key (agent segment replaced) -> lines
        Map<String, Map<String, List<Line>>> families = new TreeMap<>(MetricLayout::compareFamilies);
        for (String key : rest) {
            Matcher a = AGENT.matcher(key);
            String chartKey = key;
            Line line = new Line(key, key, 0);
            if (a.find()) {
                chartKey = key.substring(0, a.start()) + a.group(1) + "agent_*" + key.substring(a.end());
                int agent = Integer.parseInt(a.group(2));
                line = new Line(key, "agent " + agent, agent);
            }
            families.computeIfAbsent(family(chartKey), f -> new TreeMap<>(MetricLayout::compareKeys))
                    .computeIfAbsent(chartKey, c -> new ArrayList<>()).add(line);
        }
        families.forEach((family, charts) -> {
            List<Chart> list = new ArrayList<>();
            charts.forEach((chartKey, lines) -> list.add(new Chart(title(chartKey), chartKey, sortByVariant(lines), false)));
            list.sort(Comparator.comparing(c -> Kind.of(c.subtitle()))); // stable: by name within a kind
            sections.add(new Section("metrics-" + family.replaceAll("[^A-Za-z0-9_-]", "-"), sectionTitle(family), list));
        });
        return sections;
    }

    private static Line turnLine(String key, String turn) {
        return new Line(key, "turn " + turn, Integer.parseInt(turn) - 1);
    }

    private static List<Line> sortByVariant(List<Line> lines) {
        List<Line> sorted = new ArrayList<>(lines);
        sorted.sort(Comparator.comparingInt(Line::variant));
        return sorted;
    }

    /** "training", "eval", "agent" or the key's first segment. */
    private static String family(String chartKey) {
        int slash = chartKey.indexOf('/');
        String first = slash < 0 ? "" : chartKey.substring(0, slash);
        if (first.isEmpty() || TURN.matcher(first).matches()) {
            return "training";
        }
        if (first.equals("eval")) {
            return "eval";
        }
        if (first.equals("agent_*")) {
            return "agent";
        }
        return first;
    }

    private static final List<String> FAMILY_ORDER = List.of("training", "eval", "agent");

    private static int compareFamilies(String a, String b) {
        int ia = FAMILY_ORDER.indexOf(a);
        int ib = FAMILY_ORDER.indexOf(b);
        if (ia >= 0 || ib >= 0) {
            return Integer.compare(ia < 0 ? FAMILY_ORDER.size() : ia, ib < 0 ? FAMILY_ORDER.size() : ib);
        }
        return a.compareTo(b);
    }

    private static String sectionTitle(String family) {
        return switch (family) {
            case "training" -> "Training";
            case "eval" -> "Evaluation";
            case "agent" -> "Per agent";
            case "iter" -> "Iterations";
            default -> humanize(family);
        };
    }

    /** "turn_1/policy_loss" -> "Policy loss, turn 1"; "agent_&#42;/turn_2/reward_mean" -> "Reward mean, turn 2". */
    static String title(String chartKey) {
        String[] parts = chartKey.split("/");
        String title = humanize(parts[parts.length - 1]);
        for (int i = parts.length - 2; i >= 0; i--) {
            if (TURN.matcher(parts[i]).matches()) {
                return title + ", turn " + parts[i].substring(5);
            }
        }
        return title;
    }

    private static String humanize(String name) {
        String words = name.replace('_', ' ').trim();
        words = ACRONYM.matcher(words).replaceAll(m -> m.group().toUpperCase(Locale.ROOT));
        return words.isEmpty() ? name : Character.toUpperCase(words.charAt(0)) + words.substring(1);
    }

    /**
     * Orders chart keys by metric name first and then naturally (numbers by value), so that
     * {@code turn_2/policy_loss} follows {@code turn_1/policy_loss} and {@code turn_10} follows {@code turn_9}.
     */
    private static int compareKeys(String a, String b) {
        int byName = natural(a.substring(a.lastIndexOf('/') + 1), b.substring(b.lastIndexOf('/') + 1));
        return byName != 0 ? byName : natural(a, b);
    }

    private static final Pattern CHUNK = Pattern.compile("\\d+|\\D+");

    static int natural(String a, String b) {
        Matcher ma = CHUNK.matcher(a);
        Matcher mb = CHUNK.matcher(b);
        while (ma.find() && mb.find()) {
            String ca = ma.group();
            String cb = mb.group();
            int c = Character.isDigit(ca.charAt(0)) && Character.isDigit(cb.charAt(0))
                    ? new java.math.BigInteger(ca).compareTo(new java.math.BigInteger(cb)) : ca.compareTo(cb);
            if (c != 0) {
                return c;
            }
        }
        return a.compareTo(b);
    }
}
