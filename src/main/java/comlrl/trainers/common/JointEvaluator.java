package comlrl.trainers.common;

import comlrl.data.Dataset;
import comlrl.data.TaskItem;
import comlrl.generation.CausalLm;
import comlrl.generation.Completion;
import comlrl.generation.GenerationSettings;
import comlrl.rl.Returns;
import comlrl.trainers.EvalAggregator;
import comlrl.trainers.EvalLogger;
import comlrl.utils.Formatters;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The evaluation of the MA-REINFORCE and preference trainers (reference §3.5): for each of the first
 * n evaluation items, one completion per agent per turn, every turn run (the external transition
 * between turns), the joint reward of each turn; {@code eval/turn_t/reward_mean} and
 * {@code eval/turn_t/expected_return} (the undiscounted suffix sum) averaged over items, and the
 * custom metrics of {@code eval_logger} + {@code eval_aggregator}.
 */
public final class JointEvaluator {
    private final Dataset evalDataset;
    private final List<CausalLm> agents;
    private final List<GenerationSettings.Resolved> generation;
    private final Formatters formatters;
    private final PromptEncoder promptEncoder;
    private final JointRewarder rewarder;
    private final Transitions transitions;
    private final AgentExecutor executor;
    private final SeedStream seeds;
    private final EvalLogger evalLogger;
    private final EvalAggregator evalAggregator;
    private final int numAgents;
    private final int numTurns;
    private final int batchSize;
    private final boolean passthrough;
    private RankWork work = RankWork.single(0);

    /** One completion per agent per turn for each item; rewards {@code [item][turn]}, completions {@code [agent][item][turn]}. */
    private record Batch(double[][] rewards, List<List<List<String>>> completions) {
    }

    public JointEvaluator(Dataset evalDataset, List<CausalLm> agents, List<GenerationSettings.Resolved> generation,
            Formatters formatters, PromptEncoder promptEncoder, JointRewarder rewarder, Transitions transitions,
            AgentExecutor executor, SeedStream seeds, EvalLogger evalLogger, EvalAggregator evalAggregator, int numTurns,
            int batchSize, boolean passthrough) {
        if ((evalLogger == null) != (evalAggregator == null)) {
            throw new IllegalArgumentException("eval_logger and eval_aggregator must be given together");
        }
        this.evalDataset = evalDataset;
        this.agents = agents;
        this.generation = generation;
        this.formatters = formatters;
        this.promptEncoder = promptEncoder;
        this.rewarder = rewarder;
        this.transitions = transitions;
        this.executor = executor;
        this.seeds = seeds;
        this.evalLogger = evalLogger;
        this.evalAggregator = evalAggregator;
        this.numAgents = agents.size();
        this.numTurns = numTurns;
        this.batchSize = batchSize;
        this.passthrough = passthrough;
    }

    /**
     * This evaluation as run by the processes of a ddp run: completions sampled as
     * {@link Rollouts#generate(List, AgentExecutor, List, java.util.function.IntFunction, long[], RankWork)}
     * does; rewards, transitions, {@code eval_logger} and {@code eval_aggregator} on rank 0 only
     * (the other ranks get the rewards and transitions, not the custom metrics). Returns this.
     */
    public JointEvaluator in(RankWork work) {
        this.work = work;
        return this;
    }

    /** The metrics of the first {@code numEvalSamples} items ({@code {}} without an evaluation set). */
    public Map<String, Double> evaluate(int numEvalSamples) {
        if (evalDataset == null) {
            return Map.of();
        }
        if (numEvalSamples < 1) {
            throw new IllegalArgumentException("num_eval_samples must be >= 1, got " + numEvalSamples);
        }
        int n = Math.min(numEvalSamples, evalDataset.size());
        int turns = numTurns;
        double[] rewardSums = new double[turns];
        double[] returnSums = new double[turns];
        List<Map<String, Double>> rows = new ArrayList<>();
        for (int start = 0; start < n; start += batchSize) {
            int end = Math.min(n, start + batchSize);
            List<TaskItem> items = new ArrayList<>();
            for (int j = start; j < end; j++) {
                items.add(evalDataset.get(j));
            }
            Batch batch = batch(items, start);
            for (int j = 0; j < items.size(); j++) {
                double[] suffix = Returns.suffixSums(batch.rewards[j]);
                for (int t = 0; t < turns; t++) {
                    rewardSums[t] += batch.rewards[j][t];
                    returnSums[t] += suffix[t];
                }
            }
            if (evalLogger != null && work.isMain()) {
                List<String> prompts = items.stream().map(it -> it.getString("prompt", "")).toList();
                rows.addAll(evalLogger.log(batch.completions, items, prompts));
            }
        }
        Map<String, Double> metrics = new LinkedHashMap<>();
        for (int t = 0; t < turns; t++) {
            metrics.put("eval/turn_" + (t + 1) + "/reward_mean", rewardSums[t] / n);
            metrics.put("eval/turn_" + (t + 1) + "/expected_return", returnSums[t] / n);
        }
        if (evalAggregator != null && work.isMain()) {
            evalAggregator.aggregate(rows, turns).forEach((k, v) -> metrics.put("eval/" + k, v));
        }
        return metrics;
    }


    /** One completion per agent per turn for each item; rewards {@code [item][turn]}. */
    private Batch batch(List<TaskItem> items, int firstIndex) {
        int turns = numTurns;
        int n = items.size();
        double[][] rewards = new double[n][turns];
        List<List<List<String>>> completions = new ArrayList<>(); // [agent][item][turn]
        for (int i = 0; i < numAgents; i++) {
            List<List<String>> perItem = new ArrayList<>();
            for (int j = 0; j < n; j++) {
                perItem.add(new ArrayList<>());
            }
            completions.add(perItem);
        }
        List<List<String>> prompts = new ArrayList<>(); // [agent][item]
        List<List<List<String>>> promptHist = new ArrayList<>(); // [item][agent][turn]
        List<List<List<String>>> responseHist = new ArrayList<>();
        for (int i = 0; i < numAgents; i++) {
            List<String> p = new ArrayList<>();
            for (TaskItem item : items) {
                p.add(formatters.format(i, item));
            }
            prompts.add(p);
        }
        for (int j = 0; j < n; j++) {
            promptHist.add(new ArrayList<>(transitions.emptyHistories()));
            responseHist.add(new ArrayList<>(transitions.emptyHistories()));
        }
        List<String> historyPrompts = null;
        for (int t = 0; t < turns; t++) {
            long[] rowSeeds = new long[numAgents];
            for (int i = 0; i < numAgents; i++) {
                rowSeeds[i] = seeds.next();
            }
            final List<List<String>> turnPrompts = prompts;
            List<List<long[]>> ids = new ArrayList<>();
            for (int i = 0; i < numAgents; i++) {
                CausalLm agent = agents.get(i);
                ids.add(agent == null ? null // held by another process
                        : turnPrompts.get(i).stream().map(p -> promptEncoder.encode(agent, p)).toList());
            }
            List<List<Completion>> outs = new ArrayList<>();
            for (List<List<Completion>> groups : Rollouts.generate(agents, executor, ids,
                    i -> generation.get(i).sampling().withNumReturnSequences(1), rowSeeds, work)) {
                outs.add(groups.stream().map(group -> group.get(0)).toList());
            }
            List<List<String>> next = new ArrayList<>();
            for (int i = 0; i < numAgents; i++) {
                next.add(new ArrayList<>());
            }
            for (int j = 0; j < n; j++) {
                List<String> chosen = new ArrayList<>();
                for (int i = 0; i < numAgents; i++) {
                    String c = outs.get(i).get(j).text();
                    completions.get(i).get(j).add(c);
                    chosen.add(c);
                    String hp = historyPrompts == null ? turnPrompts.get(i).get(j) : historyPrompts.get(i * n + j);
                    promptHist.get(j).set(i, Transitions.append(promptHist.get(j).get(i), hp));
                    responseHist.get(j).set(i, Transitions.append(responseHist.get(j).get(i), c));
                }
                TaskItem item = items.get(j);
                String label = "eval item " + (firstIndex + j);
                rewards[j][t] = work.onMain("computing the reward of " + label,
                        () -> new double[] {rewarder.reward(item, chosen, label)}, RankWork.DOUBLES)[0];
                if (t < turns - 1) {
                    List<List<String>> ph = promptHist.get(j);
                    List<List<String>> rh = responseHist.get(j);
                    List<String> ext = work.onMain("running the external transition of " + label,
                            () -> transitions.next(item, chosen, ph, rh), RankWork.STRINGS);
                    for (int i = 0; i < numAgents; i++) {
                        next.get(i).add(ext.get(i));
                    }
                }
            }
            if (t < turns - 1) {
                List<List<String>> formatted = new ArrayList<>();
                List<String> raw = new ArrayList<>();
                for (int i = 0; i < numAgents; i++) {
                    List<String> f = new ArrayList<>();
                    for (int j = 0; j < n; j++) {
                        f.add(formatters.turnPrompt(i, items.get(j), next.get(i).get(j), passthrough));
                        raw.add(next.get(i).get(j));
                    }
                    formatted.add(f);
                }
                prompts = formatted;
                historyPrompts = raw;
            }
        }
        return new Batch(rewards, completions);
    }

}
