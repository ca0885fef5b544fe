package comlrl.learning;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.data.BuiltinTasks;
import comlrl.data.Dataset;
import comlrl.reward.RewardFunction;
import comlrl.trainers.reinforce.Credit;
import comlrl.trainers.reinforce.MAGRPOConfig;
import comlrl.trainers.reinforce.MAGRPOTrainer;
import comlrl.utils.Formatter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Counterfactual against shared credit on a two-agent coordination task: the team is rewarded only
 * when both agents answer briefly, {@code r = [len(y_0) ≤ T] · [len(y_1) ≤ T]} (code points), so one
 * agent's short answer is worth nothing while the other's is long. Both credits, joint_mode cross,
 * G = 4 (K = 16 joint actions, C = 4 contexts), seeds 42, 1, 2 on the built-in tiny model; the
 * evaluation reward (mean over the evaluation items and {@value #EVAL_GENERATIONS} joint samples each) is
 * recorded at the start and every {@value #EVAL_INTERVAL} training items, and written to
 * {@code target/counterfactual-credit-curves.json}. Tagged slow: run it with
 * {@code mvn -B test -Dgroups=slow -Dtest.excludedGroups=none -Dtest=CounterfactualCreditLearningTest}.
 */
@Tag("slow")
class CounterfactualCreditLearningTest {
    /** The tiny model's untrained answers (16 new tokens) have 19 to 58 code points, a quarter of them ≤ 32. */
    static final int THRESHOLD = 32;
    static final int EPOCHS = 10;
    static final int EVAL_INTERVAL = 8;
    static final int EVAL_GENERATIONS = 8;
    static final long[] SEEDS = {42, 1, 2};

    /** Both agents short: 1, else 0. */
    static final RewardFunction BOTH_BRIEF = RewardFunction.ignoringItems(completions -> {
        List<Double> r = new ArrayList<>();
        for (int j = 0; j < completions.get(0).size(); j++) {
            String a = completions.get(0).get(j);
            String b = completions.get(1).get(j);
            boolean both = a.codePointCount(0, a.length()) <= THRESHOLD && b.codePointCount(0, b.length()) <= THRESHOLD;
            r.add(both ? 1.0 : 0.0);
        }
        return r;
    });

    /** The evaluation reward curve of one run: at the start, then after every EVAL_INTERVAL training items. */
    static List<Double> curve(Credit credit, long seed) {
        Dataset.Split split = BuiltinTasks.load("builtin:length-ratio").trainTestSplit(0.2, 42);
        Formatter ask = item -> "Answer briefly:\n" + item.getString("prompt");
        MAGRPOConfig config = MAGRPOConfig.builder().numTurns(1).numTrainEpochs(EPOCHS).numGenerations(4)
                .jointMode("cross").credit(credit).maxNewTokens(16).temperature(1.0).topP(1.0).topK(null)
                .agentLearningRate(3e-3).rolloutBufferSize(2).evalInterval(EVAL_INTERVAL).evalNumSamples(2)
                .set("eval_num_generations", EVAL_GENERATIONS).loggingSteps(1 << 20).seed(seed).build();
        List<Double> curve = new ArrayList<>();
        try (MAGRPOTrainer trainer = MAGRPOTrainer.builder().agentModel("builtin:tiny").numAgents(2)
                .formatters(List.of(ask, ask)).rewardFunc(BOTH_BRIEF).trainDataset(split.train())
                .evalDataset(split.test()).args(config).verbose(false)
                .metricSink((step, metrics) -> {
                    Double r = metrics.get("eval/turn_1/reward_mean");
                    if (r != null) {
                        curve.add(r);
                    }
                }).build()) {
            trainer.evaluate();
            trainer.train();
        }
        return curve;
    }

    /** The mean of a curve's points after the start (the area under it per evaluation). */
    static double area(double[] curve) {
        return java.util.Arrays.stream(curve, 1, curve.length).average().orElseThrow();
    }

    /** The mean of the last half of a curve. */
    static double late(double[] curve) {
        return java.util.Arrays.stream(curve, curve.length / 2 + 1, curve.length).average().orElseThrow();
    }

    /**
     * Both credits learn the task: from the chance rate at the start (about 0.25² ≈ 0.06) to a late
     * reward above 0.5, over the mean of three seeds. Counterfactual credit is not worse than shared by
     * more than the evaluations' own noise: each point is the mean of 2 items × 8 joint samples of a
     * 0/1 reward (variance ≤ 1/(4·16)), the area averages 10 points × 3 seeds, so an area's standard
     * error is at most sqrt(1 / (4·16·30)) ≈ 0.023 and a difference of two areas' sqrt(2)·0.023 ≈ 0.032;
     * the margin is two of those, 0.065. (Measured, 2 cores: shared 0.73, counterfactual 0.80; with
     * THRESHOLD 30 both reach about 0.61.)
     */
    @Test
    void counterfactualAgainstSharedCreditOnAJointReward() throws IOException {
        Map<String, Map<String, List<Double>>> curves = new LinkedHashMap<>();
        Map<String, double[]> mean = new LinkedHashMap<>();
        for (Credit credit : Credit.values()) {
            Map<String, List<Double>> bySeed = new LinkedHashMap<>();
            for (long seed : SEEDS) {
                long t0 = System.nanoTime();
                List<Double> c = curve(credit, seed);
                bySeed.put(Long.toString(seed), c);
                System.out.printf(Locale.ROOT, "%s seed %d (%.0f s): %s%n", credit, seed, (System.nanoTime() - t0) / 1e9, c);
            }
            curves.put(credit.configName(), bySeed);
            int n = bySeed.values().iterator().next().size();
            double[] m = new double[n];
            for (List<Double> c : bySeed.values()) {
                assertThat(c).as("%s: evaluations per seed", credit).hasSize(n);
                for (int e = 0; e < n; e++) {
                    m[e] += c.get(e) / SEEDS.length;
                }
            }
            mean.put(credit.configName(), m);
            System.out.printf(Locale.ROOT, "%s mean: %s, area %.3f, late %.3f%n", credit, java.util.Arrays.toString(m),
                    area(m), late(m));
        }
        write(curves, mean);
        double[] shared = mean.get("shared");
        double[] counterfactual = mean.get("counterfactual");
        for (double[] m : List.of(shared, counterfactual)) {
            assertThat(m).hasSize(EPOCHS + 1);
            assertThat(m[0]).isLessThan(0.25);
            assertThat(late(m)).isGreaterThan(0.5);
        }
        assertThat(area(counterfactual)).as("counterfactual's area against shared's %.3f", area(shared))
                .isGreaterThanOrEqualTo(area(shared) - 0.065);
    }

    private static void write(Map<String, Map<String, List<Double>>> curves, Map<String, double[]> mean) throws IOException {
        StringBuilder json = new StringBuilder("{\n  \"task\": \"reward 1 when both completions have <= " + THRESHOLD
                + " code points\",\n  \"eval_interval_items\": " + EVAL_INTERVAL + ",\n  \"curves\": {");
        String sep = "\n";
        for (var byCredit : curves.entrySet()) {
            json.append(sep).append("    \"").append(byCredit.getKey()).append("\": {");
            String s2 = "\n";
            for (var bySeed : byCredit.getValue().entrySet()) {
                json.append(s2).append("      \"").append(bySeed.getKey()).append("\": ").append(bySeed.getValue());
                s2 = ",\n";
            }
            double[] m = mean.get(byCredit.getKey());
            json.append(",\n      \"mean\": ").append(java.util.Arrays.toString(m)).append(",\n      \"area\": ")
                    .append(area(m)).append("\n    }");
            sep = ",\n";
        }
        json.append("\n  }\n}\n");
        Path out = Path.of("target", "counterfactual-credit-curves.json");
        Files.createDirectories(out.getParent());
        Files.writeString(out, json);
    }
}
