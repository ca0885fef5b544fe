package comlrl.trainers.reinforce;

import comlrl.generation.CausalLm;
import comlrl.model.DecoderLm;
import comlrl.tensor.AdamW;
import comlrl.tensor.Device;
import comlrl.trainers.AgentSources;
import comlrl.trainers.Devices;
import comlrl.trainers.common.AgentSet;
import comlrl.trainers.common.EpochProgress;
import comlrl.distributed.HeldAgents;
import comlrl.trainers.common.JointEvaluator;
import comlrl.trainers.common.JointRewarder;
import comlrl.trainers.common.JointRollout;
import comlrl.logging.MetricsLogger;
import comlrl.distributed.RankWork;
import comlrl.generation.SeedStream;
import comlrl.checkpoint.TrainerCheckpoint;
import comlrl.trainers.common.TrainerParts;
import comlrl.trainers.common.TrainerSettings;
import comlrl.trainers.common.Transitions;
import comlrl.utils.Formatters;
import comlrl.utils.TrainerFields;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.UnaryOperator;

/**
 * What a MAGRPO-family trainer runs on, assembled from its builder: the checks that need no model, then
 * (after joining the other processes of a ddp run) the agents, optimizers, references, logger, rollout
 * engine, evaluator and checkpoint. Its {@link TrainerParts} own the native memory it loaded; what fails
 * half way is freed.
 */
final class MAGRPOParts {
    final MAGRPOConfig args;
    final HeldAgents<AdamW> optimizers;
    final JointRewarder rewarder;
    /** The epoch loop's task data, console and logger. */
    final EpochProgress.Loop loop;
    final SeedStream seeds;
    final MetricsLogger logger;
    final JointEvaluator evaluator;
    final JointRollout rollout;
    final TrainerCheckpoint checkpoint;
    /** The agents, their generate settings, references, executor and share of the run ({@link TrainerParts}). */
    final TrainerParts parts;
    /** Sees each agent's accumulated gradients before its optimizer step (tests only). */
    final BiConsumer<Integer, DecoderLm> gradientObserver;

    MAGRPOParts(ReinforceBuilder<?> b, String algorithmName) {
        if (b.args() == null) {
            throw new IllegalArgumentException("args (an MAGRPOConfig) must be provided");
        }
        b.requireCommon(algorithmName, b.args().numTurns());
        this.args = b.args();
        TrainerSettings settings = b.settings();
        // the constructor's num_agents wins; without it the agents list's length, else the config's num_agents
        int count = b.resolvedNumAgents(args.numAgents());
        if (count < 1) {
            throw new IllegalArgumentException("num_agents must be >= 1, got " + count);
        }
        if ((settings.get(TrainerSettings.EVAL_LOGGER) == null) != (settings.get(TrainerSettings.EVAL_AGGREGATOR) == null)) {
            throw new IllegalArgumentException("eval_logger and eval_aggregator must be given together");
        }
        Formatters formatters = Formatters.fromArgument(settings.get(TrainerSettings.FORMATTERS), count);
        List<Object> sources = AgentSources.resolve("agents", settings.get(TrainerSettings.AGENT_MODEL),
                settings.get(TrainerSettings.AGENTS), count, "num_agents");
        TrainerSettings.Rewarders rewarders = settings.rewarders(count, args.numGenerations(), algorithmName,
                args.skipNonfiniteSamples());
        this.rewarder = rewarders.training();
        Transitions transitions = new Transitions(settings.get(TrainerSettings.EXTERNAL_TRANSITION), count);
        this.gradientObserver = b.gradientObserver;
        this.seeds = new SeedStream(args.seed());
        // every check that can fail without a model has run; join the other processes (ddp), then load
        // (and free what was loaded on failure)
        settings.requireTaskData();
        RankWork joined = RankWork.forRun(args.parallelTraining(), args.ddpSplit(), count,
                settings.get(TrainerSettings.DISTRIBUTED));
        List<Device> devices = AgentSet.placement(args.agentDevices(), count, "agent_devices", args.parallelTraining(),
                joined.device());
        List<Device> refDevices = !args.referenceKlEnabled() ? null : args.referenceDevices() == null
                || joined.device() != null ? devices : Devices.resolve(args.referenceDevices(), count, "reference_devices");
        this.parts = new TrainerParts(settings, joined, new TrainerParts.Load(sources, devices, refDevices, args.seed(),
                args.parallelTraining(), args, args.numGenerations()), UnaryOperator.identity());
        try {
            this.optimizers = parts.own(parts.agents.open((i, a) -> parts.work.adamW(a.model().parameters(),
                    args.agentLearningRate(), 0.01)), opts -> opts.values().forEach(AdamW::close));
            this.logger = parts.openLogger(settings.metricsLogger(args.loggingSteps(), algorithmName,
                    parts.trackedConfig(args.toMap()), parts.work.isMain()));
            this.loop = parts.loop(args.evalInterval());
            JointRollout evalRollout = JointRollout.of(parts.agents.asList(), parts.generation.asList(), formatters,
                    settings.promptEncoder(), parts.executor, parts.work)
                    .withTransitions(transitions, args.externalPromptPassthrough());
            this.evaluator = new JointEvaluator(settings, evalRollout, JointEvaluator.team(
                    rewarders.evaluation().averagingAgentRewards()), // per-agent rewards: evaluation logs their team mean
                    seeds, args.numTurns(), args.evalBatchSize()).generations(args.get(TrainerFields.EVAL_NUM_GENERATIONS));
            this.rollout = evalRollout.withReferences(parts.references);
            this.checkpoint = new TrainerCheckpoint(algorithmName, count, args.numTrainEpochs(), args.saveTotalLimit(),
                    List.of(TrainerCheckpoint.ShapeGroup.of("model_shapes", "agent", parts.agents.map(CausalLm::model))),
                    TrainerCheckpoint.agentParts(parts.agents, optimizers), settings.statefulParts(
                            TrainerSettings.TRAIN_DATASET, TrainerSettings.EVAL_DATASET, TrainerSettings.REWARD_FUNC,
                            TrainerSettings.REWARD_PROCESSOR, TrainerSettings.EXTERNAL_TRANSITION,
                            TrainerSettings.EVAL_LOGGER, TrainerSettings.EVAL_AGGREGATOR),
                    seeds, logger, parts.work).extendedBy(settings.get(TrainerSettings.CHECKPOINT_EXTENSION));
        } catch (RuntimeException | Error e) {
            parts.closeAfter(e);
            throw e;
        }
    }
}
