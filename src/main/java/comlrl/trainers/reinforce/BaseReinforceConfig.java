package comlrl.trainers.reinforce;

import static comlrl.utils.TrainerFields.COLLABORATION_MODE;

import comlrl.utils.CollaborationMode;
import comlrl.utils.FieldTableConfig;
import comlrl.utils.ParallelTraining;
import java.util.function.Function;

/**
 * The one implementation of {@link MAGRPOConfig} and its variants: the field table is
 * {@link FieldTableConfig}'s, the fields {@code ReinforceFields}'; here are the algorithm and the
 * checks across fields. The nested classes only bind the variant interfaces.
 *
 * @param <C> the variant's config type, which {@link #toBuilder()} builds
 */
abstract class BaseReinforceConfig<C extends MAGRPOConfig> extends FieldTableConfig implements MAGRPOConfig {
    private final ReinforceAlgorithm algorithm;
    private final Function<MAGRPOConfig.Builder<C>, C> factory;

    BaseReinforceConfig(MAGRPOConfig.Builder<C> b) {
        super(b);
        this.algorithm = b.algorithm;
        this.factory = b.factory;
        check(parallelTraining() == ParallelTraining.MP && agentDevices() == null ? "parallel_training=\"mp\" requires "
                + "agent_devices (one device per agent, e.g. [\"cuda:0\", \"cuda:1\"]); set agent_devices or use "
                + "parallel_training=\"none\"" : null);
        check(parallelTraining() == ParallelTraining.DDP && agentDevices() != null ? "parallel_training=\"ddp\" puts "
                + "every model of a process on that process's device (cuda:LOCAL_RANK, or the cpu); remove "
                + "agent_devices (got " + agentDevices() + ")" : null);
        check(b.misplacedCollaborationMode != null ? ReinforceFields.CENTRALIZED_ONLY : null);
        if (algorithm == ReinforceAlgorithm.CENTRALIZED_MAGRPO) {
            check(get(COLLABORATION_MODE) != CollaborationMode.CENTRALIZED ? "CentralizedMAGRPOConfig requires "
                    + "collaboration_mode=\"centralized\", got \"" + get(COLLABORATION_MODE) + "\"; use MAGRPOConfig "
                    + "for decentralized agents" : null);
            check(numTurns() != 1 ? "CentralizedMAGRPOConfig requires num_turns=1, got " + numTurns() + ": the "
                    + "centralized actor writes every role's response in one joint completion" : null);
        }
    }

    @Override
    public ReinforceAlgorithm algorithm() {
        return algorithm;
    }

    /** A builder of this variant holding this config's values. */
    @Override
    public final MAGRPOConfig.Builder<C> toBuilder() {
        MAGRPOConfig.Builder<C> b = new MAGRPOConfig.Builder<>(algorithm, factory);
        copyInto(b);
        return b;
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
