package comlrl.trainers.reinforce;

import static comlrl.trainers.reinforce.ReinforceFixtures.fast;
import static comlrl.trainers.reinforce.ReinforceFixtures.ownLength;
import static comlrl.trainers.reinforce.ReinforceFixtures.snapshot;
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
 * rollouts their updates differ without advantage normalisation and coincide with it.
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
            Map<String, float[]> weights) {
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
        try (MAGRPOTrainer trainer = MAGRPOTrainer.builderFor(algorithm).agentModel(agent.toString()).numAgents(1)
                .rewardFunc(reward).trainDataset(tasks(1)).args(config).verbose(false).build()) {
            trainer.train();
            assertThat(trainer.logHistory()).hasSize(1);
            return new Run(trainer.algorithmName(), config.advantageMode(), texts, rewards,
                    trainer.logHistory().get(0).get("turn_1/policy_loss"), snapshot(trainer.agents().get(0)));
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
        // raw and max shift the advantages, so the gradient's direction changes; rloo only scales them
        // (by G/(G−1)), which AdamW's first step does not see (it moves by lr·g/|g|)
        for (int i = 1; i < 3; i++) {
            assertThat(maxAbsDiff(runs.get(0).weights(), runs.get(i).weights())).as(runs.get(i).algorithm())
                    .isGreaterThan(1e-4);
        }
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
            // same gradient up to float rounding: AdamW's first step moves each element by about lr, so any
            // real difference would show at 1e-3; rounding can only flip elements whose gradient is ~0
            Map<String, float[]> a = runs.get(0).weights();
            Map<String, float[]> b = r.weights();
            long differ = 0;
            long total = 0;
            for (String name : a.keySet()) {
                for (int j = 0; j < a.get(name).length; j++) {
                    total++;
                    differ += Math.abs(a.get(name)[j] - b.get(name)[j]) > 1e-6 ? 1 : 0;
                }
            }
            assertThat(differ).as("%s: elements that differ from MAGRPO", r.algorithm()).isLessThan(total / 1000 + 1);
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
