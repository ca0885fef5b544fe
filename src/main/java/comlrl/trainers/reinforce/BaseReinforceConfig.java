package comlrl.trainers.reinforce;

import static comlrl.utils.TrainerFields.COLLABORATION_MODE;

import comlrl.utils.CollaborationMode;
import comlrl.utils.FieldTableConfig;
import comlrl.utils.ParallelTraining;

/**
 * The one implementation of {@link MAGRPOConfig} and its variants: the field table is
 * {@link FieldTableConfig}'s, the fields {@code ReinforceFields}'; here are the algorithm and the
 * checks across fields. The nested classes only bind the variant interfaces (and their builders'
 * types).
 */
abstract class BaseReinforceConfig extends FieldTableConfig implements MAGRPOConfig {
    private final ReinforceAlgorithm algorithm;

    BaseReinforceConfig(MAGRPOConfig.Builder<?> b) {
        super(b);
        this.algorithm = b.algorithm;
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

    /** {@link #toBuilder()} of each variant: a builder of its type holding this config's values. */
    final <C extends MAGRPOConfig> MAGRPOConfig.Builder<C> copyTo(MAGRPOConfig.Builder<C> b) {
        copyInto(b);
        return b;
    }

    static final class Magrpo extends BaseReinforceConfig {
        Magrpo(MAGRPOConfig.Builder<?> b) {
            super(b);
        }

        @Override
        public MAGRPOConfig.Builder<MAGRPOConfig> toBuilder() {
            return copyTo(MAGRPOConfig.builder());
        }
    }

    static final class Mareinforce extends BaseReinforceConfig implements MAREINFORCEConfig {
        Mareinforce(MAGRPOConfig.Builder<?> b) {
            super(b);
        }

        @Override
        public MAGRPOConfig.Builder<MAREINFORCEConfig> toBuilder() {
            return copyTo(MAREINFORCEConfig.builder());
        }
    }

    static final class Maremax extends BaseReinforceConfig implements MAReMaxConfig {
        Maremax(MAGRPOConfig.Builder<?> b) {
            super(b);
        }

        @Override
        public MAGRPOConfig.Builder<MAReMaxConfig> toBuilder() {
            return copyTo(MAReMaxConfig.builder());
        }
    }

    static final class Marloo extends BaseReinforceConfig implements MARLOOConfig {
        Marloo(MAGRPOConfig.Builder<?> b) {
            super(b);
        }

        @Override
        public MAGRPOConfig.Builder<MARLOOConfig> toBuilder() {
            return copyTo(MARLOOConfig.builder());
        }
    }

    static final class Centralized extends BaseReinforceConfig implements CentralizedMAGRPOConfig {
        Centralized(MAGRPOConfig.Builder<?> b) {
            super(b);
        }

        @Override
        public MAGRPOConfig.Builder<CentralizedMAGRPOConfig> toBuilder() {
            return copyTo(CentralizedMAGRPOConfig.builder());
        }
    }
}
