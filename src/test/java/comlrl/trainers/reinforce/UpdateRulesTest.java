package comlrl.trainers.reinforce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import comlrl.generation.CausalLm;
import comlrl.generation.Scorer;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import comlrl.trainers.TinyAgents;
import comlrl.distributed.RankWork;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The GRPO-family update rules of the MAGRPO loss ({@code loss_type}, {@code scale_rewards},
 * {@code mask_truncated_completions}): weights and advantages worked by hand, and the gradient of the
 * real loss equal to the hand-weighted sum of per-completion log-likelihood gradients.
 */
class UpdateRulesTest {
    @TempDir
    static Path models;
    static CausalLm lm;

    @BeforeAll
    static void load() {
        lm = TinyAgents.load(TinyAgents.create(models.resolve("a"), 23));
    }

    @AfterAll
    static void close() {
        lm.close();
    }

    private static NodeSample sample(long[] prompt, List<long[]> completions, double[] returns, boolean[] truncated) {
        return new NodeSample(0, 0, prompt, completions, returns, null, 0, 0, 0, "test item", truncated, null, null);
    }

    private static final boolean[] NONE_CUT = {false, false, false};

    /**
     * B = {s1: lengths 1, 2, 3, A = [1, −2, 0.5], the third cut at max_new_tokens; s2: lengths 4, 0,
     * A = [2, 1]}, L = 8, |B| = 2. The empty completion is never in the loss.
     */
    private static double[][] weights(LossType type, boolean mask) {
        List<NodeSample> b = List.of(
                sample(new long[] {1}, List.of(new long[1], new long[2], new long[3]), new double[3], new boolean[] {false, false, true}),
                sample(new long[] {1}, List.of(new long[4], new long[0]), new double[2], new boolean[2]));
        return MAGRPOLoss.weights(b, new double[][] {{1, -2, 0.5}, {2, 1}}, type, mask, 8);
    }

    @Test
    void eachLossTypeWeighsCompletionsAsWorkedByHand() {
        // unmasked: M_1 = 3, T_1 = 6; M_2 = 1, T_2 = 4; T_B = 10
        assertWeights(weights(LossType.SEQUENCE_SUM, false), new double[][] {{-1.0 / 6, 2.0 / 6, -0.5 / 6}, {-2.0 / 2, 0}});
        assertWeights(weights(LossType.GRPO, false), new double[][] {{-1.0 / 6, 2.0 / 12, -0.5 / 18}, {-2.0 / 8, 0}});
        assertWeights(weights(LossType.DR_GRPO, false), new double[][] {{-1.0 / 48, 2.0 / 48, -0.5 / 48}, {-2.0 / 16, 0}});
        assertWeights(weights(LossType.DAPO, false), new double[][] {{-0.1, 0.2, -0.05}, {-0.2, 0}});
        assertWeights(weights(LossType.BNPO, false), new double[][] {{-1.0 / 12, 2.0 / 12, -0.5 / 12}, {-2.0 / 8, 0}});
        // masked: the cut completion leaves the loss and the counts: M_1 = 2, T_1 = 3, T_B = 7
        assertWeights(weights(LossType.SEQUENCE_SUM, true), new double[][] {{-1.0 / 4, 2.0 / 4, 0}, {-1, 0}});
        assertWeights(weights(LossType.GRPO, true), new double[][] {{-1.0 / 4, 2.0 / 8, 0}, {-2.0 / 8, 0}});
        assertWeights(weights(LossType.DR_GRPO, true), new double[][] {{-1.0 / 32, 2.0 / 32, 0}, {-2.0 / 16, 0}});
        assertWeights(weights(LossType.DAPO, true), new double[][] {{-1.0 / 7, 2.0 / 7, 0}, {-2.0 / 7, 0}});
        assertWeights(weights(LossType.BNPO, true), new double[][] {{-1.0 / 6, 2.0 / 6, 0}, {-2.0 / 8, 0}});
    }

    /** One or two divisions of numbers below 100: within a few ulps of 1. */
    private static void assertWeights(double[][] got, double[][] want) {
        assertThat(got).hasSameDimensionsAs(want);
        for (int j = 0; j < want.length; j++) {
            assertThat(got[j]).containsExactly(want[j], within(1e-15));
        }
    }

    @Test
    void scaleRewardsDividesByTheGroupsTheBatchsOrNoStd() {
        // R_1 = [1, 2, 3], R_2 = [5, 5, 5]; mean baseline: A_1 = [−1, 0, 1], A_2 = [0, 0, 0]
        // group: std_pop A_1 = sqrt(2/3); A_2 / 1e-6 = 0
        // batch: std_pop {1, 2, 3, 5, 5, 5} = sqrt(15.5 / 6) (mean 3.5, squares 6.25 + 2.25 + 0.25 + 3·2.25)
        List<NodeSample> b = List.of(sample(new long[] {1}, List.of(new long[1], new long[1], new long[1]),
                new double[] {1, 2, 3}, NONE_CUT), sample(new long[] {1}, List.of(new long[1], new long[1], new long[1]),
                new double[] {5, 5, 5}, NONE_CUT));
        double g = Math.sqrt(2.0 / 3);
        double bs = Math.sqrt(15.5 / 6);
        double[][] group = MAGRPOLoss.advantages(b, MAGRPOConfig.builder().build());
        assertThat(group[0]).containsExactly(new double[] {-1 / g, 0, 1 / g}, within(1e-15));
        assertThat(group[1]).containsExactly(0, 0, 0);
        double[][] batch = MAGRPOLoss.advantages(b, MAGRPOConfig.builder().scaleRewards("batch").build());
        assertThat(batch[0]).containsExactly(new double[] {-1 / bs, 0, 1 / bs}, within(1e-15));
        assertThat(batch[1]).containsExactly(0, 0, 0);
        double[][] none = MAGRPOLoss.advantages(b, MAGRPOConfig.builder().scaleRewards("none").build());
        assertThat(none[0]).containsExactly(-1, 0, 1);
        // with raw returns (no baseline) batch still subtracts the group mean, as TRL does
        double[][] raw = MAGRPOLoss.advantages(b, MAREINFORCEConfig.builder().scaleRewards("batch").build());
        assertThat(raw[0]).containsExactly(new double[] {-1 / bs, 0, 1 / bs}, within(1e-15));
    }

    @Test
    void scaleRewardsAndAdvantageNormalizationAreOneSetting() {
        assertThat(MAGRPOConfig.builder().build().scaleRewards()).isEqualTo(ScaleRewards.GROUP);
        MAGRPOConfig off = MAGRPOConfig.builder().advantageNormalization(false).build();
        assertThat(off.scaleRewards()).isEqualTo(ScaleRewards.NONE);
        MAGRPOConfig none = MAGRPOConfig.builder().scaleRewards("none").build();
        assertThat(none.advantageNormalization()).isFalse();
        assertThat(none.toMap()).containsEntry("scale_rewards", "none").containsEntry("advantage_normalization", false);
        // what a run writes reads back the same, and a copy keeps the setting
        assertThat(MAGRPOConfig.fromMap(none.toMap())).isEqualTo(none);
        assertThat(none.toBuilder().build().scaleRewards()).isEqualTo(ScaleRewards.NONE);
        MAGRPOConfig batch = MAGRPOConfig.fromMap(Map.of("scale_rewards", "batch", "advantage_normalization", true));
        assertThat(batch.scaleRewards()).isEqualTo(ScaleRewards.BATCH);
        assertThat(MAGRPOConfig.fromMap(Map.of("advantage_normalization", false, "scale_rewards", "none"))
                .scaleRewards()).isEqualTo(ScaleRewards.NONE);
        // "none" alone (a YAML args: section) is the value none, not a null-like string
        assertThat(MAGRPOConfig.fromMap(Map.of("scale_rewards", "none")).scaleRewards()).isEqualTo(ScaleRewards.NONE);
        assertThat(MAGRPOConfig.fromMap(Map.of("scale_rewards", "null")).scaleRewards()).isEqualTo(ScaleRewards.GROUP);
        assertThatThrownBy(() -> MAGRPOConfig.fromMap(Map.of("scale_rewards", "group", "advantage_normalization", false)))
                .hasMessageContaining("scale_rewards=\"group\"").hasMessageContaining("advantage_normalization=false");
        assertThatThrownBy(() -> MAGRPOConfig.builder().advantageNormalization(true).scaleRewards("none").build())
                .hasMessageContaining("scale_rewards=\"none\"").hasMessageContaining("advantage_normalization=true");
        assertThatThrownBy(() -> MAGRPOConfig.fromMap(Map.of("loss_type", "token")))
                .hasMessageContaining("loss_type must be one of: sequence_sum, grpo, dr_grpo, dapo, bnpo (got \"token\")");
    }

    /** Every parameter's gradient, by name (zeros where none). */
    private static Map<String, float[]> gradients() {
        Map<String, float[]> out = new LinkedHashMap<>();
        for (Map.Entry<String, Tensor> e : lm.model().namedParameters().entrySet()) {
            Tensor g = e.getValue().grad();
            out.put(e.getKey(), g == null ? new float[(int) e.getValue().numel()] : g.toFloatArray());
        }
        return out;
    }

    private static void zeroGrad() {
        lm.model().parameters().forEach(Tensor::zeroGrad);
    }

    private static List<long[]> group(int seed) {
        long eos = lm.padId();
        List<long[]> out = new ArrayList<>();
        out.add(new long[] {40 + seed, 41, eos});
        out.add(new long[] {eos});
        out.add(new long[] {50 + seed, 51, 52, 53, 54}); // no EOS: cut at max_new_tokens = 5
        out.add(new long[] {60 + seed, eos});
        return out;
    }

    /**
     * Two samples of lengths [3, 1, 5, 2], L = 5, |B| = 2, scale_rewards none, mean baseline:
     * s1 R = [1, 0, 2.5, −0.5] → A = [0.25, −0.75, 1.75, −1.25], its 5-token completion cut and masked
     * (M_1 = 3, T_1 = 6); s2 R = [2, 2, 0, 0] → A = [1, 1, −1, −1], none cut (M_2 = 4, T_2 = 11); T_B = 17.
     */
    private static final Map<LossType, double[][]> BY_HAND = Map.of(
            LossType.SEQUENCE_SUM, new double[][] {{-0.25 / 6, 0.75 / 6, 0, 1.25 / 6}, {-1.0 / 8, -1.0 / 8, 1.0 / 8, 1.0 / 8}},
            LossType.GRPO, new double[][] {{-0.25 / 18, 0.75 / 6, 0, 1.25 / 12}, {-1.0 / 24, -1.0 / 8, 1.0 / 40, 1.0 / 16}},
            LossType.DR_GRPO, new double[][] {{-0.25 / 30, 0.75 / 30, 0, 1.25 / 30}, {-1.0 / 40, -1.0 / 40, 1.0 / 40, 1.0 / 40}},
            LossType.DAPO, new double[][] {{-0.25 / 17, 0.75 / 17, 0, 1.25 / 17}, {-1.0 / 17, -1.0 / 17, 1.0 / 17, 1.0 / 17}},
            LossType.BNPO, new double[][] {{-0.25 / 12, 0.75 / 12, 0, 1.25 / 12}, {-1.0 / 22, -1.0 / 22, 1.0 / 22, 1.0 / 22}});

    @Test
    void theGradientOfEachLossTypeIsTheHandWeightedSumOfLogLikelihoodGradients() {
        List<NodeSample> b = List.of(
                sample(lm.encode("Say hello."), group(0), new double[] {1, 0, 2.5, -0.5}, new boolean[] {false, false, true, false}),
                sample(lm.encode("Why?"), group(1), new double[] {2, 2, 0, 0}, new boolean[4]));
        for (LossType type : LossType.values()) {
            MAGRPOConfig args = MAGRPOConfig.builder().maxNewTokens(5).scaleRewards("none").lossType(type)
                    .maskTruncatedCompletions(true).build();
            zeroGrad();
            MAGRPOLoss.accumulate(lm.model(), b, args, lm.padId(), RankWork.single(1));
            Map<String, float[]> got = gradients();
            zeroGrad();
            try (Scope scope = Scope.open()) {
                for (int j = 0; j < 2; j++) {
                    for (int k = 0; k < 4; k++) {
                        Scorer.score(lm.model(), List.of(b.get(j).promptIds()), List.of(b.get(j).completionIds().get(k)),
                                lm.padId()).sequenceLogprobs().sum().mul(BY_HAND.get(type)[j][k]).backward();
                    }
                }
            }
            // 2 samples × 4 completions × (the longer prompt + 5 completion tokens) positions
            int prompt = Math.max(b.get(0).promptIds().length, b.get(1).promptIds().length);
            comlrl.tensor.Rounding.assertSameGradients(got, gradients(), 2 * 4 * (prompt + 5));
            zeroGrad();
        }
    }

    /** Whether the first update of a run with max_new_tokens 1 has any non-zero gradient. */
    private static boolean firstUpdateHasAGradient(Path a, Path b, boolean mask) {
        MAGRPOConfig config = ReinforceFixtures.fast(MAGRPOConfig.builder()).maxNewTokens(1)
                .maskTruncatedCompletions(mask).build();
        // rewards that differ with the sampled token, so that the advantages are not all 0
        comlrl.reward.RewardFunction byContent = (completions, items) -> {
            List<Double> r = new ArrayList<>();
            for (int k = 0; k < completions.get(0).size(); k++) {
                r.add((double) ((completions.get(0).get(k) + completions.get(1).get(k)).chars().sum() % 7));
            }
            return r;
        };
        MAGRPOUpdateTest.GradientRecorder recorder = new MAGRPOUpdateTest.GradientRecorder();
        try (MAGRPOTrainer t = MAGRPOTrainer.builder().agents(List.of(a.toString(), b.toString()))
                .rewardFunc(byContent).trainDataset(ReinforceFixtures.tasks(2)).args(config).verbose(false)
                .gradientObserver(recorder).build()) {
            t.train();
        }
        return recorder.steps.get(0).values().stream().anyMatch(g -> {
            for (float x : g) {
                if (x != 0) {
                    return true;
                }
            }
            return false;
        });
    }

    /**
     * The truncation a rollout sees reaches the loss: with max_new_tokens 1 every completion of these
     * seeds is one non-EOS token, cut; masked, the update has no gradient at all.
     */
    @Test
    void completionsCutByTheRolloutLeaveTheLossWhenMasked(@TempDir Path tmp) {
        Path a = TinyAgents.create(tmp.resolve("ra"), 1);
        Path b = TinyAgents.create(tmp.resolve("rb"), 2);
        assertThat(firstUpdateHasAGradient(a, b, false)).as("unmasked").isTrue();
        assertThat(firstUpdateHasAGradient(a, b, true)).as("masked").isFalse();
    }
}
