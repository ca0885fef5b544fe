package comlrl.trainers.common;

import comlrl.data.Dataset;
import comlrl.data.TaskItem;
import comlrl.distributed.RankWork;
import comlrl.generation.SeedStream;
import comlrl.logging.EvalSamples;
import comlrl.logging.MetricsLogger;
import comlrl.reward.JointRewarder;
import comlrl.rl.JointMode;
import comlrl.rl.Returns;
import comlrl.trainers.EvalAggregator;
import comlrl.trainers.EvalLogger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Predicate;
import java.util.stream.IntStream;

/**
 * The evaluation of every trainer (reference §3.5, §5.7): for each of the first n evaluation items, one
 * completion per agent per turn, the external transition between turns, each turn scored; the per-turn
 * and custom means its {@link Family} takes from each item's episode ({@link #team} for MA-REINFORCE and
 * preference), and the custom metrics of {@code eval_logger} + {@code eval_aggregator}. Evaluations draw
 * seeds from their own stream ({@link SeedStream#evaluation()}).
 *
 * <p>With {@code eval_num_generations} g > 1 each batch of items is rolled out g times in turn, each
 * rollout drawing its own seeds; the reward means run over items and samples
 * ({@code Σ_items Σ_samples r / (n · g)}) and the {@code eval_logger} gets every sample
 * ({@link EvalLogger#logSamples}, pass@k).
 */
public final class JointEvaluator {
    /**
     * What a trainer family makes of its evaluation episodes: how a turn is scored, whether an episode
     * ends after a turn with these rewards, what one item's episode adds to the {@link Means}, and whether
     * a per-turn mean that is NaN is left out of the metrics (else logged as NaN).
     */
    public record Family<R>(JointRollout.Scoring<R> scoring, Predicate<R> terminates, Recorder<R> recorder,
            boolean omitsNaNTurnMeans) {
    }

    /** One item's episode added to {@code means}; returns each turn's reward as {@link EvalSamples} show it. */
    @FunctionalInterface
    public interface Recorder<R> {
        double[] record(TaskItem item, List<JointRollout.Scored<R>> episode, Means means);
    }

    /**
     * The MA-REINFORCE and preference trainers' family: one joint reward per turn (aligned), every turn
     * run; per turn {@code reward_mean} and {@code expected_return} (the undiscounted suffix sum).
     */
    public static Family<double[]> team(JointRewarder rewarder) {
        JointRollout.Scoring<double[]> scoring = JointRollout.Scoring.jointActions(rewarder, JointMode.ALIGNED);
        return new Family<>(scoring, r -> false, (item, e, means) -> {
            double[] rewards = e.stream().mapToDouble(s -> s.rewards()[0]).toArray();
            double[] suffix = Returns.suffixSums(rewards);
            for (int t = 0; t < rewards.length; t++) {
                means.turn(t, "reward_mean", rewards[t]);
                means.turn(t, "expected_return", suffix[t]);
            }
            return rewards;
        }, false);
    }

    /** The means of one evaluation, per turn ({@code eval/turn_t/<key>}) and then custom ({@code eval/<key>}). */
    public static final class Means {
        private final Map<String, double[]> turns = new LinkedHashMap<>(); // {sum, count}; turn t+1's keys after t's
        private final Map<String, double[]> custom = new LinkedHashMap<>();

        /** Adds {@code value} to the mean of {@code key} at turn {@code turn} (0-based). */
        public void turn(int turn, String key, double value) {
            add(turns, "eval/turn_" + (turn + 1) + "/" + key, value);
        }

        /** Adds {@code value} to the mean of the custom metric {@code key}. */
        public void custom(String key, double value) {
            add(custom, "eval/" + key, value);
        }

        private static void add(Map<String, double[]> sums, String key, double value) {
            double[] s = sums.computeIfAbsent(key, k -> new double[2]);
            s[0] += value;
            s[1]++;
        }

        private void putInto(Map<String, Double> metrics, boolean omitNaNTurnMeans) {
            turns.forEach((key, s) -> {
                if (!(omitNaNTurnMeans && Double.isNaN(s[0] / s[1]))) {
                    metrics.put(key, s[0] / s[1]);
                }
            });
            custom.forEach((key, s) -> metrics.put(key, s[0] / s[1]));
        }
    }

    private final Dataset evalDataset;
    private final Family<?> family;
    private final SeedStream seeds;
    private final EvalLogger evalLogger;
    private final EvalAggregator evalAggregator;
    private final int numTurns;
    private final int batchSize;
    private int generations = 1;
    private final JointRollout rollout;

    /** Rewards {@code [item][turn]}; completions and the prompts they answered {@code [agent][item][turn]}. */
    private record Batch(double[][] rewards, List<List<List<String>>> completions, List<List<List<String>>> prompts) {
        EvalSamples.Sample sample(int item, int index) {
            List<Double> turnRewards = Arrays.stream(rewards[item]).boxed().toList();
            return new EvalSamples.Sample(index, prompts.stream().map(a -> a.get(item)).toList(),
                    completions.stream().map(a -> a.get(item)).toList(), turnRewards);
        }
    }

    /**
     * {@code family}'s evaluation of the settings' {@code eval_dataset} with {@code rollout};
     * {@code batchSize} items sampled together (a turn draws one seed per agent, so it decides an item's seeds).
     */
    public JointEvaluator(TrainerSettings settings, JointRollout rollout, Family<?> family, SeedStream seeds,
            int numTurns, int batchSize) {
        this.evalLogger = settings.get(TrainerSettings.EVAL_LOGGER);
        this.evalAggregator = settings.get(TrainerSettings.EVAL_AGGREGATOR);
        if ((evalLogger == null) != (evalAggregator == null)) {
            throw new IllegalArgumentException("eval_logger and eval_aggregator must be given together");
        }
        this.evalDataset = settings.get(TrainerSettings.EVAL_DATASET);
        this.family = family;
        this.seeds = seeds;
        this.numTurns = numTurns;
        this.batchSize = batchSize;
        this.rollout = rollout;
    }

    /** Evaluates {@code g} joint samples of each item ({@code eval_num_generations}, default 1; ≥ 1). */
    public JointEvaluator generations(int g) {
        if (g < 1) {
            throw new IllegalArgumentException("eval_num_generations must be >= 1, got " + g);
        }
        this.generations = g;
        return this;
    }

    /**
     * The metrics of the first {@code numEvalSamples} items, logged with the first items' samples
     * ({@link EvalSamples}, rank 0) at {@code envStep} by {@code logger}; {@code {}} without an evaluation set.
     */
    public Map<String, Double> evaluate(int numEvalSamples, MetricsLogger logger, long envStep) {
        if (evalDataset == null) {
            return Map.of();
        }
        if (numEvalSamples < 1) {
            throw new IllegalArgumentException("num_eval_samples must be >= 1, got " + numEvalSamples);
        }
        int n = Math.min(numEvalSamples, evalDataset.size());
        SeedStream evalSeeds = seeds.evaluation();
        RankWork work = rollout.work();
        Means means = new Means();
        List<Map<String, Double>> rows = new ArrayList<>();
        List<EvalSamples.Sample> kept = new ArrayList<>();
        for (int start = 0; start < n; start += batchSize) {
            List<TaskItem> items = IntStream.range(start, Math.min(n, start + batchSize))
                    .mapToObj(evalDataset::get).toList();
            List<List<List<List<String>>>> samples = new ArrayList<>(); // [sample][agent][item][turn]
            for (int g = 0; g < generations; g++) {
                Batch batch = batch(family, items, start, evalSeeds, means);
                for (int j = 0; g == 0 && work.isMain() && j < items.size() && start + j < EvalSamples.KEPT; j++) {
                    kept.add(batch.sample(j, start + j));
                }
                samples.add(batch.completions);
            }
            if (evalLogger != null && work.isMain()) {
                List<String> prompts = items.stream().map(it -> it.getString("prompt", "")).toList();
                rows.addAll(evalLogger.logSamples(samples, items, prompts));
            }
        }
        Map<String, Double> metrics = new LinkedHashMap<>();
        means.putInto(metrics, family.omitsNaNTurnMeans());
        if (evalAggregator != null && work.isMain()) {
            evalAggregator.aggregate(rows, numTurns).forEach((k, v) -> metrics.put("eval/" + k, v));
        }
        if (!metrics.isEmpty()) {
            logger.log(envStep, metrics);
            logger.samples(envStep, kept);
        }
        return metrics;
    }

    /** One completion per agent per turn for each item, the items sampled together, recorded in {@code means}. */
    private <R> Batch batch(Family<R> family, List<TaskItem> items, int firstIndex, SeedStream evalSeeds, Means means) {
        List<JointRollout.TurnState> starts = IntStream.range(0, items.size())
                .mapToObj(j -> rollout.start(items.get(j), "eval item " + (firstIndex + j))).toList();
        List<List<JointRollout.Scored<R>>> episodes = rollout.rollout(starts, evalSeeds, 1, family.scoring(), numTurns,
                family.terminates());
        double[][] rewards = IntStream.range(0, items.size())
                .mapToObj(j -> family.recorder().record(items.get(j), episodes.get(j), means)).toArray(double[][]::new);
        return new Batch(rewards, byAgent(episodes, (s, i) -> s.turn().completions().get(i).get(0).text()),
                byAgent(episodes, (s, i) -> s.turn().state().prompts().get(i)));
    }

    /** {@code [agent][item][turn]} of {@code f(turn, agent)}. */
    private <R> List<List<List<String>>> byAgent(List<List<JointRollout.Scored<R>>> episodes,
            BiFunction<JointRollout.Scored<R>, Integer, String> f) {
        return IntStream.range(0, rollout.agents().size()).mapToObj(i -> episodes.stream()
                .map(e -> e.stream().map(s -> f.apply(s, i)).toList()).toList()).toList();
    }
}
