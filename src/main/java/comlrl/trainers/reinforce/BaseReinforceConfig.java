package comlrl.trainers.reinforce;

import static comlrl.trainers.reinforce.ReinforceFields.SCALE_REWARDS;
import static comlrl.utils.TrainerFields.ADVANTAGE_NORMALIZATION;
import static comlrl.utils.TrainerFields.COLLABORATION_MODE;

import comlrl.utils.CollaborationMode;
import comlrl.utils.ConfigField;
import comlrl.utils.FieldTableConfig;
import java.util.function.Function;

/**
 * The one implementation of {@link MAGRPOConfig} and its variants: the algorithm and the checks across
 * fields (the field table is {@link FieldTableConfig}'s). The nested classes only bind the variant interfaces.
 *
 * @param <C> the variant's config type, which {@link #toBuilder()} builds
 */
abstract class BaseReinforceConfig<C extends MAGRPOConfig> extends FieldTableConfig implements MAGRPOConfig {
    private final ReinforceAlgorithm algorithm;
    private final Function<MAGRPOConfig.Builder<C>, C> factory;
    /** scale_rewards as set, else what advantage_normalization stands for (one source of truth). */
    private final ScaleRewards scaleRewards;

    BaseReinforceConfig(MAGRPOConfig.Builder<C> b) {
        super(b);
        this.algorithm = b.algorithm;
        this.factory = b.factory;
        ScaleRewards set = get(SCALE_REWARDS);
        boolean normalization = get(ADVANTAGE_NORMALIZATION);
        // advantage_normalization false is never a default, true is only when set on the builder
        check(set != null && (set != ScaleRewards.NONE) != normalization && (!normalization || b.advantageNormalizationSet)
                ? "scale_rewards=\"" + set + "\" contradicts advantage_normalization=" + normalization + " (which stands "
                + "for scale_rewards=\"" + ScaleRewards.of(normalization) + "\"); set only one of them" : null);
        this.scaleRewards = set != null ? set : ScaleRewards.of(normalization);
        checkAgentPlacement(false);
        check(credit() == Credit.COUNTERFACTUAL && jointMode() != comlrl.rl.JointMode.CROSS ? "credit=\"counterfactual\" "
                + "requires joint_mode=\"cross\" (got joint_mode=\"" + jointMode() + "\"): the counterfactual baseline of "
                + "an agent's completion needs every other completion scored against the same choice of the other "
                + "agents; set joint_mode: cross, or credit: shared" : null);
        check(credit() == Credit.COUNTERFACTUAL && advantageNormalizationScope() == NormalizationScope.JOINT
                ? "advantage_normalization_scope=\"joint\" pools the agents' groups of a node, which credit=\"counterfactual\" "
                + "splits by context; set advantage_normalization_scope: agent, or credit: shared" : null);
        check(b.misplacedCollaborationMode != null ? ReinforceFields.CENTRALIZED_ONLY : null);
        Double epsilonHigh = get(ReinforceFields.EPSILON_HIGH);
        check(epsilonHigh != null && epsilonHigh < epsilon() ? "epsilon_high (" + epsilonHigh + ") must be at least "
                + "epsilon (" + epsilon() + "): it widens the upper clip range only (DAPO's clip-higher); raise "
                + "epsilon_high, lower epsilon, or set epsilon_high to null to use epsilon on both sides" : null);
        if (algorithm == ReinforceAlgorithm.CENTRALIZED_MAGRPO) {
            check(get(COLLABORATION_MODE) != CollaborationMode.CENTRALIZED ? "CentralizedMAGRPOConfig requires "
                    + "collaboration_mode=\"centralized\", got \"" + get(COLLABORATION_MODE) + "\"; use MAGRPOConfig "
                    + "for decentralized agents" : null);
            check(numTurns() != 1 ? "CentralizedMAGRPOConfig requires num_turns=1, got " + numTurns() + ": the "
                    + "centralized actor writes every role's response in one joint completion" : null);
        }
        check(dynamicSamplingMaxDraws() != null && !dynamicSampling() ? "dynamic_sampling_max_draws="
                + dynamicSamplingMaxDraws() + " caps dynamic sampling, which is off; set dynamic_sampling: true or "
                + "remove dynamic_sampling_max_draws" : null);
        check(dynamicSampling() && advantageMode() == comlrl.rl.AdvantageMode.RAW && scaleRewards == ScaleRewards.NONE
                ? "dynamic_sampling drops items whose returns are all equal, but with advantage_mode=\"raw\" and "
                + "scale_rewards=\"none\" such items still have a gradient (A = R); use a group baseline "
                + "(advantage_mode mean, max or rloo), scale_rewards group or batch, or dynamic_sampling: false" : null);
    }

    @Override
    public ReinforceAlgorithm algorithm() {
        return algorithm;
    }

    @Override
    public ScaleRewards scaleRewards() {
        return scaleRewards;
    }

    /** config.json holds scale_rewards resolved and advantage_normalization consistent with it. */
    @Override
    protected Object resolved(ConfigField<?> field) {
        if (field.key.equals(SCALE_REWARDS.key)) {
            return scaleRewards;
        }
        if (field.key.equals(ADVANTAGE_NORMALIZATION.key)) {
            return advantageNormalization();
        }
        return super.resolved(field);
    }

    /** A builder of this variant holding this config's values. */
    @Override
    public final MAGRPOConfig.Builder<C> toBuilder() {
        return copyInto(new MAGRPOConfig.Builder<>(algorithm, factory));
    }

    static final class Magrpo extends BaseReinforceConfig<MAGRPOConfig> {
        Magrpo(MAGRPOConfig.Builder<MAGRPOConfig> b) {
            super(b);
        }
    }

    static final class Mareinforce extends BaseReinforceConfig<MAREINFORCEConfig> implements MAREINFORCEConfig {
        Mareinforce(MAGRPOConfig.Builder<MAREINFORCEConfig> b) {
            super(b);
        }
    }

    static final class Maremax extends BaseReinforceConfig<MAReMaxConfig> implements MAReMaxConfig {
        Maremax(MAGRPOConfig.Builder<MAReMaxConfig> b) {
            super(b);
        }
    }

    static final class Marloo extends BaseReinforceConfig<MARLOOConfig> implements MARLOOConfig {
        Marloo(MAGRPOConfig.Builder<MARLOOConfig> b) {
            super(b);
        }
    }

    static final class Centralized extends BaseReinforceConfig<CentralizedMAGRPOConfig>
            implements CentralizedMAGRPOConfig {
        Centralized(MAGRPOConfig.Builder<CentralizedMAGRPOConfig> b) {
            super(b);
        }
    }
}
