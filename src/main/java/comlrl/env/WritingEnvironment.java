package comlrl.env;

import comlrl.reward.WritingReward;
import comlrl.trainers.EvalLogger;
import comlrl.utils.ConfigMaps;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Two-agent collaborative writing ({@code environment: {type: writing, task: tldr|arxiv}}), rewarded
 * by {@link WritingReward}'s four levels:
 * <ul>
 *   <li>{@code tldr}: Reddit posts from the hub's {@code trl-lib/tldr} (column {@code prompt},
 *       splits train / test); agent 0 writes a one- or two-sentence summary, agent 1 a longer,
 *       more varied elaboration.</li>
 *   <li>{@code arxiv}: abstracts from {@code OpenMLRL/arXiv_abstract} (column
 *       {@code abstract_text}, splits train / val); agent 0 writes the background and motivation of
 *       an introduction, agent 1 the method and its implications.</li>
 * </ul>
 * Offline, {@code builtin:writing-tldr} and {@code builtin:writing-arxiv} hold a few tasks with the
 * same columns.
 */
public final class WritingEnvironment {
    /** The formatters of each task (our wording), agent 0 first. */
    public static final Map<String, List<String>> FORMATTERS = Map.of(
            "tldr", List.of(
                    "Summarize the post below in one or two sentences. Be factual and brief.\n\nPost:\n{prompt}\n\n"
                            + "Summary:",
                    "Write a detailed summary of the post below, two to three times as long as a one-sentence summary. "
                            + "Another writer gives the one-sentence version. Use varied words and a few transitions "
                            + "(however, for example, as a result) so that it reads smoothly.\n\nPost:\n{prompt}\n\n"
                            + "Detailed summary:"),
            "arxiv", List.of(
                    "Write the first half of an introduction for the paper with the abstract below: its background and "
                            + "motivation. Another writer covers the method and its implications; do not repeat them."
                            + "\n\nAbstract:\n{abstract_text}\n\nBackground and motivation:",
                    "Write the second half of an introduction for the paper with the abstract below: its method and "
                            + "implications. Another writer covers the background and motivation; do not repeat them."
                            + "\n\nAbstract:\n{abstract_text}\n\nMethod and implications:"));
    /** The hub dataset of each task: id, train split, evaluation split. */
    public static final Map<String, List<String>> HUB = Map.of(
            "tldr", List.of("trl-lib/tldr", "train", "test"),
            "arxiv", List.of("OpenMLRL/arXiv_abstract", "train", "val"));

    private WritingEnvironment() {}

    /**
     * Evaluation metrics of {@code task}: per evaluated task item, {@link WritingReward.Breakdown#metrics()}
     * of the two agents' last-turn texts (the levels reached and their parts, {@code writing_*}).
     */
    public static EvalLogger evalLogger(String task) {
        WritingReward reward = WritingReward.forTask(task);
        return (completions, items, prompts) -> {
            List<Map<String, Double>> rows = new java.util.ArrayList<>();
            for (int j = 0; j < completions.get(0).size(); j++) {
                List<String> first = completions.get(0).get(j);
                List<String> second = completions.get(1).get(j);
                rows.add(reward.breakdown(first.get(first.size() - 1), second.get(second.size() - 1)).metrics());
            }
            return rows;
        };
    }

    /** The config keys {@code environment: {type: writing, task: T}} stands for. */
    static Map<String, Object> defaults(Map<String, Object> env) {
        ConfigMaps.requireKnownKeys("environment writing", env, List.of("type", "task"), Map.of());
        if (ConfigMaps.isNullLike(env.get("task"))) {
            throw new IllegalArgumentException("environment writing needs 'task': tldr (summary + elaboration) or "
                    + "arxiv (two halves of an introduction)");
        }
        String task = ConfigMaps.toStr("environment writing", "task", env.get("task")).trim().toLowerCase(Locale.ROOT);
        if (!FORMATTERS.containsKey(task)) {
            throw new IllegalArgumentException("environment writing: unknown task '" + env.get("task")
                    + "'; use tldr or arxiv");
        }
        Map<String, Object> d = new LinkedHashMap<>();
        List<String> hub = HUB.get(task);
        Map<String, Object> dataset = new LinkedHashMap<>();
        dataset.put("hub", hub.get(0));
        dataset.put("split", hub.get(1));
        dataset.put("eval_split", hub.get(2));
        d.put("dataset", dataset);
        d.put("formatters", FORMATTERS.get(task));
        Map<String, Object> reward = new LinkedHashMap<>();
        reward.put("type", "writing");
        reward.put("task", task);
        d.put("reward", reward);
        d.put("num_agents", 2);
        d.put("args", new LinkedHashMap<>(Map.of("num_turns", 1))); // one turn: each agent writes once
        return d;
    }
}
