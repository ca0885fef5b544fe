package comlrl.trainers.preference;

import comlrl.reward.RewardFunction;
import comlrl.trainers.actorcritic.ActorCriticTrainerBase;
import comlrl.trainers.actorcritic.IACConfig;
import comlrl.trainers.actorcritic.IACTrainer;
import comlrl.trainers.actorcritic.MAACConfig;
import comlrl.trainers.actorcritic.MAACTrainer;
import comlrl.logging.MetricsLogger;
import comlrl.distributed.RankWork;
import comlrl.trainers.common.Trainer;
import comlrl.checkpoint.TrainerCheckpoint;
import comlrl.trainers.common.TrainerSettings;
import comlrl.trainers.reinforce.MAGRPOTrainer;
import comlrl.trainers.reinforce.ReinforceAlgorithm;
import comlrl.utils.Formatters;
import comlrl.utils.ParallelTraining;
import comlrl.utils.RewardProcessor;
import comlrl.utils.RewardProcessors;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The policy-learning stage of {@link MARLHFTrainer} (reference §7.3): the {@code rl_algorithm}
 * trainer (MAGRPO, MA-REINFORCE, MAReMax, MARLOO, IAC or MAAC) on the same agents and data, its
 * config mapped from the MARLHF config's fields, trained on the learned reward (raw) and evaluated
 * on the task reward (processed).
 */
final class MARLHFBackend {
    private MARLHFBackend() {
    }

    /** What the stage trains and evaluates with: the learned reward, the task reward and processor, the prompts. */
    record Rewards(RewardFunction learned, RewardFunction task, RewardProcessor processor, Formatters formatters) {
    }

    /**
     * The RL stage: the {@code rl_algorithm} trainer built from the builder's settings, with the stage's
     * prompts and agent count, the learned reward (raw) for training, the task reward (processed) for
     * evaluation, this run's processes, logger and checkpoint extension, and (IAC/MAAC) the critics' model.
     */
    static Trainer build(MARLHFConfig args, MARLHFTrainer.Builder b, int numAgents, RankWork work, MetricsLogger logger,
            Rewards backend, TrainerCheckpoint.Extension extension) {
        RlAlgorithm algorithm = args.rlAlgorithm();
        TrainerSettings stage = b.settings().with(TrainerSettings.FORMATTERS, backend.formatters().asList())
                .with(TrainerSettings.NUM_AGENTS, numAgents)
                .with(TrainerSettings.REWARD_FUNC, backend.learned())
                .with(TrainerSettings.REWARD_PROCESSOR, RewardProcessors.identity())
                .with(TrainerSettings.EVAL_REWARD_FUNC, backend.task())
                .with(TrainerSettings.EVAL_REWARD_PROCESSOR, backend.processor())
                .with(TrainerSettings.DISTRIBUTED, work.context()) // the RL stage's trainer joins the same processes
                .with(TrainerSettings.SHARED_LOGGER, logger)
                .with(TrainerSettings.CHECKPOINT_EXTENSION, extension);
        if (!algorithm.isActorCritic()) {
            stage.refuse(MARLHFTrainer.ALGORITHM_NAME + " with rl_algorithm " + algorithm.configName(), "only the IAC/MAAC "
                    + "backends take it", ActorCriticTrainerBase.Builder.METRICS_CALLBACK);
            ReinforceAlgorithm reinforce = ReinforceAlgorithm.parse(algorithm.configName());
            Map<String, Object> fields = fields(args, reinforce.fromMap(Map.of()).toMap().keySet());
            fields.put("num_agents", numAgents);
            fields.put("num_iterations", args.rlNumIterations()); // num_iterations of MARLHFIter counts its iterations
            if (fields.get("scale_rewards") != null && Boolean.TRUE.equals(fields.get("advantage_normalization"))) {
                fields.remove("advantage_normalization"); // true may be MARLHF's default: a set scale_rewards decides
            }
            return MAGRPOTrainer.builderFor(reinforce).settings(stage).args(reinforce.fromMap(fields)).build();
        }
        Map<String, Object> fields = fields(args, algorithm == RlAlgorithm.IAC ? IACConfig.keys() : MAACConfig.keys());
        fields.put("critic_learning_rate", args.criticLearningRate());
        if (args.criticDevices() == null && args.parallelTraining() == ParallelTraining.MP) {
            fields.put("critic_devices", args.agentDevices());
        }
        fields.put("num_agents", numAgents);
        // critics: the builder's, else critic_model_name, else the first actor's model (reference §7.3)
        if (stage.get(TrainerSettings.CRITIC_MODEL) == null && stage.get(TrainerSettings.CRITICS) == null) {
            Object criticModel = args.criticModelName() != null ? args.criticModelName()
                    : firstActorSource(b.agentSource(), b.get(TrainerSettings.AGENTS));
            stage = stage.with(TrainerSettings.CRITIC_MODEL, criticModel);
        }
        ActorCriticTrainerBase.Builder<? extends ActorCriticTrainerBase> inner = algorithm == RlAlgorithm.IAC
                ? IACTrainer.builder().args(IACConfig.fromMap(fields)) : MAACTrainer.builder().args(MAACConfig.fromMap(fields));
        return inner.settings(stage).build();
    }

    /** {@code args}' values of the backend config's {@code keys} (the reference runs the backend on the MARLHF config). */
    private static Map<String, Object> fields(MARLHFConfig args, java.util.Collection<String> keys) {
        return new LinkedHashMap<>(args.valuesOf(keys, java.util.Set.of()));
    }

    /**
     * Centralized collaboration's metrics callback (§7.5 {@code wrap_metrics_callback}): each rollout
     * of the one actor becomes one sample per role, with the role's prompt and part of the completion.
     */
    static ActorCriticTrainerBase.MetricsCallback perRole(ActorCriticTrainerBase.MetricsCallback callback,
            comlrl.trainers.reinforce.Centralization centralized) {
        Formatters perRole = centralized.roleFormatters();
        int roles = centralized.roles();
        return rollouts -> {
            List<comlrl.trainers.actorcritic.RolloutSample> expanded = new ArrayList<>();
            for (comlrl.trainers.actorcritic.RolloutSample r : rollouts) {
                List<String> parts = centralized.splitRoles(r.completion(), r.item());
                for (int role = 0; role < roles; role++) {
                    expanded.add(new comlrl.trainers.actorcritic.RolloutSample(role, perRole.format(role, r.item()),
                            parts.get(role), r.fullInputIds(), r.promptLen(), r.responseLen(),
                            r.oldLogprob(), r.oldValue(), r.reward(), r.returns(), r.advantage(), r.normalizedAdvantage(),
                            r.turnIdx(), r.referenceKl(), r.referenceKlPenalty(), r.valueTarget(), r.generationIdx(),
                            r.jointInputIds(), r.item()));
                }
            }
            return callback.apply(expanded);
        };
    }

    /** The first actor's model id or directory, or null when the actors are model objects. */
    static String firstActorSource(String agentModel, List<?> agents) {
        if (agentModel != null) {
            return agentModel;
        }
        return agents != null && !agents.isEmpty() && agents.get(0) instanceof String first ? first : null;
    }
}
