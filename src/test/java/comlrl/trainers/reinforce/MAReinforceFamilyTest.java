package comlrl.trainers.reinforce;

import static comlrl.trainers.reinforce.ReinforceFixtures.fast;
import static comlrl.trainers.reinforce.ReinforceFixtures.ownLength;
import static comlrl.trainers.reinforce.ReinforceFixtures.tasks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import comlrl.reward.RewardFunction;
import comlrl.rl.AdvantageMode;
import comlrl.rl.Stats;
import comlrl.trainers.TinyAgents;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * MAREINFORCE, MAReMax and MARLOO are MAGRPO with another baseline (reference §3.4): for the same
 * rollouts their gradients differ without advantage normalisation (RLOO's by exactly G/(G−1)) and
 * coincide with it.
 */
class MAReinforceFamilyTest {
    @TempDir
    static Path models;
    static Path agent;

    @BeforeAll
    static void writeAgent() {
        agent = TinyAgents.create(models.resolve("agent"), 21);
    }

    /** What one single-item run of an algorithm produced. */
    record Run(String algorithm, AdvantageMode mode, List<String> texts, List<Double> rewards, double policyLoss,
            Map<String, float[]> gradient) {
    }

    private static Run run(ReinforceAlgorithm algorithm, boolean normalize) {
        List<String> texts = new ArrayList<>();
        List<Double> rewards = new ArrayList<>();
        RewardFunction reward = (completions, items) -> {
            List<Double> r = ownLength().score(completions, items);
            texts.addAll(completions.get(0));
            rewards.addAll(r);
            return r;
        };
        MAGRPOConfig config = fast(algorithm.builder()).numGenerations(4).rolloutBufferSize(1)
                .advantageNormalization(normalize).build();
        MAGRPOUpdateTest.GradientRecorder gradients = new MAGRPOUpdateTest.GradientRecorder();
        try (ReinforceTrainer trainer = MAGRPOTrainer.builderFor(algorithm).agentModel(agent.toString()).numAgents(1)
                .rewardFunc(reward).trainDataset(tasks(1)).args(config).verbose(false).gradientObserver(gradients)
                .build()) {
            trainer.train();
            assertThat(trainer.logHistory()).hasSize(1);
            assertThat(gradients.steps).hasSize(1);
            return new Run(trainer.algorithmName(), config.advantageMode(), texts, rewards,
                    trainer.logHistory().get(0).get("turn_1/policy_loss"), gradients.steps.get(0));
        }
    }

    private static List<Run> runAll(boolean normalize) {
        List<Run> runs = new ArrayList<>();
        for (ReinforceAlgorithm a : List.of(ReinforceAlgorithm.MAGRPO, ReinforceAlgorithm.MAREINFORCE,
                ReinforceAlgorithm.MAREMAX, ReinforceAlgorithm.MARLOO)) {
            runs.add(run(a, normalize));
        }
        // the same rollouts for all: same seed, same initial weights
        for (Run r : runs) {
            assertThat(r.texts()).isEqualTo(runs.get(0).texts());
        }
        double[] rewards = runs.get(0).rewards().stream().mapToDouble(Double::doubleValue).toArray();
        assertThat(Stats.populationStd(rewards)).as("rewards vary within the group").isGreaterThan(0.05);
        assertThat(Stats.mean(rewards)).as("a non-zero mean separates raw from mean").isGreaterThan(0.05);
        return runs;
    }

    private static double maxAbsDiff(Map<String, float[]> a, Map<String, float[]> b) {
        double d = 0;
        for (String name : a.keySet()) {
            float[] x = a.get(name);
            float[] y = b.get(name);
            for (int j = 0; j < x.length; j++) {
                d = Math.max(d, Math.abs(x[j] - y[j]));
            }
        }
        return d;
    }

    @Test
    void eachVariantHasItsNameAndBaseline() {
        List<Run> runs = runAll(false);
        assertThat(runs.stream().map(Run::algorithm)).containsExactly("MAGRPO", "MAREINFORCE", "MAReMax", "MARLOO");
        assertThat(runs.stream().map(Run::mode))
                .containsExactly(AdvantageMode.MEAN, AdvantageMode.RAW, AdvantageMode.MAX, AdvantageMode.RLOO);
    }

    @Test
    void withoutNormalisationTheBaselinesGiveDifferentUpdates() {
        List<Run> runs = runAll(false);
        double mean = runs.get(0).policyLoss();
        double raw = runs.get(1).policyLoss();
        double max = runs.get(2).policyLoss();
        double rloo = runs.get(3).policyLoss();
        assertThat(List.of(mean, raw, max, rloo)).doesNotHaveDuplicates();
        // raw and max shift the advantages, so the gradient changes direction; rloo scales it by G/(G−1)
        for (int i = 1; i < 3; i++) {
            assertThat(maxAbsDiff(runs.get(0).gradient(), runs.get(i).gradient())).as(runs.get(i).algorithm())
                    .isGreaterThan(1e-3);
        }
        int groupSize = runs.get(0).rewards().size();
        Map<String, float[]> scaled = new java.util.LinkedHashMap<>();
        runs.get(0).gradient().forEach((name, g) -> {
            float[] out = new float[g.length];
            for (int j = 0; j < g.length; j++) {
                out[j] = (float) (g[j] * groupSize / (groupSize - 1.0));
            }
            scaled.put(name, out);
        });
        MAGRPOUpdateTest.assertSameGradients(runs.get(3).gradient(), scaled);
        // With S = (1/G) Σ_k log π(y_k) and L_mode = −(1/G) Σ_k A_k log π(y_k):
        //   raw:  A = R            → L_raw  = L_mean − mean(R)·S
        //   max:  A = R − max R    → L_max  = L_mean + (max R − mean R)·S
        //   rloo: A = G/(G−1)·(R − mean R) → L_rloo = G/(G−1)·L_mean
        double[] r = runs.get(0).rewards().stream().mapToDouble(Double::doubleValue).toArray();
        int g = r.length;
        double s = (mean - raw) / Stats.mean(r);
        assertThat(s).as("mean log-probability of a completion").isNegative();
        assertThat(max).isCloseTo(mean + (Stats.max(r) - Stats.mean(r)) * s, within(1e-4));
        assertThat(rloo).isCloseTo(g / (g - 1.0) * mean, within(1e-5));
    }

    @Test
    void withNormalisationTheyCoincide() {
        List<Run> runs = runAll(true);
        for (Run r : runs.subList(1, 4)) {
            assertThat(r.policyLoss()).as(r.algorithm()).isCloseTo(runs.get(0).policyLoss(), within(1e-5));
            MAGRPOUpdateTest.assertSameGradients(r.gradient(), runs.get(0).gradient());
        }
    }

    @Test
    void eachVariantRequiresItsConfigType() {
        MAGRPOConfig magrpo = fast(MAGRPOConfig.builder()).build();
        assertThatThrownBy(() -> MAREINFORCETrainer.builder().agentModel("/nonexistent").numAgents(1)
                .rewardFunc(ownLength()).trainDataset(tasks(1)).args(magrpo).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("MAREINFORCETrainer requires a MAREINFORCEConfig")
                .hasMessageContaining("MAREINFORCEConfig.builder()");
        assertThatThrownBy(() -> MAReMaxTrainer.builder().agentModel("/nonexistent").rewardFunc(ownLength())
                .trainDataset(tasks(1)).args(fast(MARLOOConfig.builder()).build()).build())
                .hasMessageContaining("MAReMaxTrainer requires a MAReMaxConfig");
        assertThatThrownBy(() -> MARLOOTrainer.builder().agentModel("/nonexistent").rewardFunc(ownLength())
                .trainDataset(tasks(1)).args(magrpo).build())
                .hasMessageContaining("MARLOOTrainer requires a MARLOOConfig");
        // the variants' multi-turn message names them
        assertThatThrownBy(() -> MARLOOTrainer.builder().agentModel("/nonexistent").rewardFunc(ownLength())
                .trainDataset(tasks(1)).args(MARLOOConfig.builder().numTurns(2).build()).build())
                .hasMessage("Multi-turn MARLOO requires an external_transition.");
        // centralized runs get the tagged adapter unless another is set
        assertThat(MAGRPOTrainer.builderFor(ReinforceAlgorithm.CENTRALIZED_MAGRPO))
                .isInstanceOf(CentralizedMAGRPOTrainer.Builder.class);
    }
}
