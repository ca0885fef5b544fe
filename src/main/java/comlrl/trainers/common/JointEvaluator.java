package comlrl.trainers.common;

import comlrl.data.Dataset;
import comlrl.data.TaskItem;
import comlrl.distributed.AgentExecutor;
import comlrl.distributed.RankWork;
import comlrl.generation.CausalLm;
import comlrl.generation.GenerationSettings;
import comlrl.generation.PromptEncoder;
import comlrl.generation.SeedStream;
import comlrl.logging.EvalSamples;
import comlrl.rl.JointMode;
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
 * custom metrics of {@code eval_logger} + {@code eval_aggregator}. Evaluations sample from their own
 * stream ({@link SeedStream#evaluation()}), none drawn from training's.
 *
 * <p>With {@code eval_num_generations} g > 1 ({@link #generations(int)}) each batch of items is rolled out g
 * times, one after the other, each rollout drawing its own seeds from the evaluation stream (so the g joint
 * samples of an item differ, and a run with the same seed draws the same ones); the reward means run over
 * items and samples ({@code Σ_items Σ_samples r / (n · g)}) and the {@code eval_logger} gets every sample
 * through {@link EvalLogger#logSamples} (pass@k). With g = 1 this is the one-sample evaluation above.
 */
public final class JointEvaluator {
    private final Dataset evalDataset;
    private final JointRewarder rewarder;
    private final SeedStream seeds;
    private final EvalLogger evalLogger;
    private final EvalAggregator evalAggregator;
    private final int numTurns;
    private final int batchSize;
    private int generations = 1;
    private final JointRollout rollout;
    private final RankWork work;

    /** The samples of the latest evaluation's first items ({@link EvalSamples}; rank 0 only). */
    private List<EvalSamples.Sample> lastSamples = List.of();

    /** Rewards {@code [item][turn]}; completions and the prompts they answered {@code [agent][item][turn]}. */
    private record Batch(double[][] rewards, List<List<List<String>>> completions, List<List<List<String>>> prompts) {
        EvalSamples.Sample sample(int item, int index) {
            List<Double> turnRewards = java.util.Arrays.stream(rewards[item]).boxed().toList();
            return new EvalSamples.Sample(index, prompts.stream().map(a -> a.get(item)).toList(),
                    completions.stream().map(a -> a.get(item)).toList(), turnRewards);
        }
    }

    public JointEvaluator(Dataset evalDataset, List<CausalLm> agents, List<GenerationSettings.Resolved> generation,
            Formatters formatters, PromptEncoder promptEncoder, JointRewarder rewarder, Transitions transitions,
            AgentExecutor executor, RankWork work, SeedStream seeds, EvalLogger evalLogger, EvalAggregator evalAggregator,
            int numTurns, int batchSize, boolean passthrough) {
        if ((evalLogger == null) != (evalAggregator == null)) {
            throw new IllegalArgumentException("eval_logger and eval_aggregator must be given together");
        }
        this.evalDataset = evalDataset;
        this.rewarder = rewarder;
        this.seeds = seeds;
        this.evalLogger = evalLogger;
        this.evalAggregator = evalAggregator;
        this.numTurns = numTurns;
        this.batchSize = batchSize;
        this.work = work;
        this.rollout = JointRollout.of(agents, generation, formatters, promptEncoder, executor, work)
                .withTransitions(transitions, passthrough);
    }

    /** Evaluates {@code g} joint samples of each item ({@code eval_num_generations}, default 1; ≥ 1). Returns this. */
    public JointEvaluator generations(int g) {
        if (g < 1) {
            throw new IllegalArgumentException("eval_num_generations must be >= 1, got " + g);
        }
        this.generations = g;
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
        SeedStream evalSeeds = seeds.evaluation(); // the evaluations' own stream, none of training's
        double[] rewardSums = new double[numTurns];
        double[] returnSums = new double[numTurns];
        List<Map<String, Double>> rows = new ArrayList<>();
        List<EvalSamples.Sample> kept = new ArrayList<>();
        for (int start = 0; start < n; start += batchSize) {
            List<TaskItem> items = java.util.stream.IntStream.range(start, Math.min(n, start + batchSize))
                    .mapToObj(evalDataset::get).toList();
            List<List<List<List<String>>>> samples = new ArrayList<>(); // [sample][agent][item][turn]
            for (int g = 0; g < generations; g++) {
                Batch batch = batch(items, start, evalSeeds);
                for (int j = 0; g == 0 && work.isMain() && j < items.size() && start + j < EvalSamples.KEPT; j++) {
                    kept.add(batch.sample(j, start + j));
                }
                for (int j = 0; j < items.size(); j++) {
                    double[] suffix = Returns.suffixSums(batch.rewards[j]);
                    for (int t = 0; t < numTurns; t++) {
                        rewardSums[t] += batch.rewards[j][t];
                        returnSums[t] += suffix[t];
                    }
                }
                samples.add(batch.completions);
            }
            if (evalLogger != null && work.isMain()) {
                List<String> prompts = items.stream().map(it -> it.getString("prompt", "")).toList();
                rows.addAll(evalLogger.logSamples(samples, items, prompts));
            }
        }
        lastSamples = List.copyOf(kept);
        Map<String, Double> metrics = new LinkedHashMap<>();
        int episodes = n * generations;
        for (int t = 0; t < numTurns; t++) {
            metrics.put("eval/turn_" + (t + 1) + "/reward_mean", rewardSums[t] / episodes);
            metrics.put("eval/turn_" + (t + 1) + "/expected_return", returnSums[t] / episodes);
        }
        if (evalAggregator != null && work.isMain()) {
            evalAggregator.aggregate(rows, numTurns).forEach((k, v) -> metrics.put("eval/" + k, v));
        }
        return metrics;
    }

    /** The first items' joint samples of the latest {@link #evaluate} (none before it, and on ranks other than 0). */
    public List<EvalSamples.Sample> lastSamples() {
        return lastSamples;
    }

    /** One completion per agent per turn for each item, all items sampled together turn by turn. */
    private Batch batch(List<TaskItem> items, int firstIndex, SeedStream evalSeeds) {
        List<JointRollout.TurnState> starts = java.util.stream.IntStream.range(0, items.size())
                .mapToObj(j -> rollout.start(items.get(j), "eval item " + (firstIndex + j))).toList();
        List<List<JointRollout.Scored<double[]>>> episodes = rollout.rollout(starts, evalSeeds, 1,
                JointRollout.Scoring.jointActions(rewarder, JointMode.ALIGNED), numTurns, r -> false);
        double[][] rewards = episodes.stream().map(e -> e.stream().mapToDouble(s -> s.rewards()[0]).toArray())
                .toArray(double[][]::new);
        return new Batch(rewards, byAgent(episodes, (s, i) -> s.turn().completions().get(i).get(0).text()),
                byAgent(episodes, (s, i) -> s.turn().state().prompts().get(i)));
    }

    /** {@code [agent][item][turn]} of {@code f(turn, agent)}. */
    private List<List<List<String>>> byAgent(List<List<JointRollout.Scored<double[]>>> episodes,
            java.util.function.BiFunction<JointRollout.Scored<double[]>, Integer, String> f) {
        return java.util.stream.IntStream.range(0, rollout.numAgents()).mapToObj(i -> episodes.stream()
                .map(e -> e.stream().map(s -> f.apply(s, i)).toList()).toList()).toList();
    }
}
