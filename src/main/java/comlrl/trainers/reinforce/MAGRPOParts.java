package comlrl.trainers.reinforce;

import comlrl.generation.CausalLm;
import comlrl.generation.GenerationSettings;
import comlrl.model.DecoderLm;
import comlrl.tensor.AdamW;
import comlrl.tensor.Device;
import comlrl.trainers.AgentSources;
import comlrl.trainers.Devices;
import comlrl.trainers.common.AgentExecutor;
import comlrl.trainers.common.AgentGeneration;
import comlrl.trainers.common.AgentSet;
import comlrl.trainers.common.EpochProgress;
import comlrl.trainers.common.HeldAgents;
import comlrl.trainers.common.JointEvaluator;
import comlrl.trainers.common.JointRewarder;
import comlrl.trainers.common.JointRollout;
import comlrl.trainers.common.MetricsLogger;
import comlrl.trainers.common.PromptEncoder;
import comlrl.trainers.common.RankWork;
import comlrl.trainers.common.ReferencePolicy;
import comlrl.trainers.common.SeedStream;
import comlrl.trainers.common.TrainerBuilder;
import comlrl.trainers.common.TrainerCheckpoint;
import comlrl.trainers.common.TrainerSettings;
import comlrl.trainers.common.Transitions;
import comlrl.utils.Formatters;
import comlrl.utils.TrainerFields;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * What a MAGRPO-family trainer runs on, assembled from its builder: the checks that need no model,
 * then (after joining the other processes of a ddp run) the agents, their optimizers and reference
 * policies, the metrics logger, the rollout engine, the evaluator and the checkpoint. Owns the native
 * memory it loaded ({@link #close()}); what fails half way is freed before the error leaves.
 */
final class MAGRPOParts implements AutoCloseable {
    final MAGRPOConfig args;
    /** What the builder was given besides {@code args} (as the trainer took it). */
    final TrainerSettings settings;
    final AgentSet actors;
    /** The agents this process holds (all but in the agents split). */
    final HeldAgents<CausalLm> agents;
    /** Frozen references for reference-KL shaping, or null when it is off. */
    final ReferencePolicy references;
    final HeldAgents<AdamW> optimizers;
    /** Per agent: the generate settings of rollouts, resolved against the agent's generation config. */
    final HeldAgents<GenerationSettings.Resolved> generation;
    final JointRewarder rewarder;
    /** The epoch loop's task data, console and logger. */
    final EpochProgress.Loop loop;
    final PromptEncoder promptEncoder;
    final PrintStream console;
    final AgentExecutor executor;
    /** This process's share of a ddp run ({@link RankWork}); one process does everything otherwise. */
    final RankWork work;
    final SeedStream seeds;
    final MetricsLogger logger;
    final JointEvaluator evaluator;
    /** The rollout engine: each tree node expanded by it. */
    final JointRollout rollout;
    final TrainerCheckpoint checkpoint;
    /** Sees each agent's accumulated gradients before its optimizer step (tests only). */
    final BiConsumer<Integer, DecoderLm> gradientObserver;

    MAGRPOParts(ReinforceBuilder<?> b, String algorithmName) {
        if (b.args() == null) {
            throw new IllegalArgumentException("args (an MAGRPOConfig) must be provided");
        }
        b.requireCommon(algorithmName, b.args().numTurns());
        this.args = b.args();
        this.settings = b.settings();
        // the constructor's num_agents wins; without it the agents list's length, else the config's num_agents
        int count = b.resolvedNumAgents(args.numAgents());
        if (count < 1) {
            throw new IllegalArgumentException("num_agents must be >= 1, got " + count);
        }
        if ((b.evalLogger() == null) != (b.evalAggregator() == null)) {
            throw new IllegalArgumentException("eval_logger and eval_aggregator must be given together");
        }
        Formatters formatters = Formatters.fromArgument(b.formatters(), count);
        List<Object> sources = AgentSources.resolve("agents", b.agentModel(), b.agents(), count, "num_agents");
        TrainerSettings.Rewarders rewarders = settings.rewarders(count, args.numGenerations(), algorithmName,
                args.skipNonfiniteSamples());
        this.rewarder = rewarders.training();
        Transitions transitions = new Transitions(b.externalTransition(), count);
        this.promptEncoder = new PromptEncoder(b.chatTemplate(), b.systemPrompt());
        this.console = b.console();
        this.gradientObserver = b.gradientObserver;
        this.seeds = new SeedStream(args.seed());
        // every check that can fail without a model has run; join the other processes (ddp), then load
        // (and free what was loaded on failure)
        b.requireTaskData();
        this.work = RankWork.forRun(args.parallelTraining(), args.ddpSplit(), count, b.distributed());
        List<Device> devices = AgentSet.placement(args.agentDevices(), count, "agent_devices", args.parallelTraining(),
                work.device());
        List<Device> refDevices = !args.referenceKlEnabled() || args.referenceDevices() == null || work.device() != null
                ? devices : Devices.resolve(args.referenceDevices(), count, "reference_devices");
        this.actors = AgentSet.loadActors(sources, settings, devices, args.seed(), work);
        this.agents = actors.held(work);
        this.executor = AgentExecutor.create(count, AgentSet.runsInParallel(args.parallelTraining(), devices));
        ReferencePolicy refs = null;
        HeldAgents<AdamW> opts = null;
        MetricsLogger metrics = null;
        try {
            if (args.referenceKlEnabled()) {
                refs = new ReferencePolicy(agents.map(CausalLm::model), refDevices);
            }
            this.generation = agents.mapIndexed((i, a) -> AgentGeneration.resolve(i, a, args, args.numGenerations()));
            opts = agents.open((i, a) -> work.adamW(a.model().parameters(), args.agentLearningRate(), 0.01));
            actors.requireOutside(b.outputDir(), "output_dir");
            List<Object> described = new ArrayList<>(sources);
            agents.indices().forEach(i -> described.set(i, agents.get(i)));
            metrics = b.metricsLogger(args.loggingSteps(), algorithmName, TrainerBuilder.trackedConfig(args.toMap(),
                    described), work.isMain());
        } catch (RuntimeException | Error e) {
            closeModels(refs, opts);
            throw e;
        }
        this.references = refs;
        this.optimizers = opts;
        this.logger = metrics;
        logger.recordGeneration(generation.asList());
        TrainerCheckpoint.ShapeGroup shapes = TrainerCheckpoint.ShapeGroup.of("model_shapes", "agent",
                agents.map(CausalLm::model));
        this.loop = new EpochProgress.Loop(b.trainDataset(), b.evalDataset() != null, args.evalInterval(), console,
                logger, b.verbose() && work.isMain());
        this.evaluator = new JointEvaluator(b.evalDataset(), agents.asList(), generation.asList(), formatters, promptEncoder,
                rewarders.evaluation().averagingAgentRewards(), // per-agent rewards: evaluation logs their team mean
                transitions, executor, work, seeds, b.evalLogger(), b.evalAggregator(),
                args.numTurns(), args.evalBatchSize(), args.externalPromptPassthrough()).generations(args.get(TrainerFields.EVAL_NUM_GENERATIONS));
        this.rollout = JointRollout.of(agents.asList(), generation.asList(), formatters, promptEncoder, executor, work)
                .withTransitions(transitions, args.externalPromptPassthrough()).withReferences(references);
        this.checkpoint = new TrainerCheckpoint(algorithmName, count, args.numTrainEpochs(), args.saveTotalLimit(),
                List.of(shapes), TrainerCheckpoint.agentParts(agents, optimizers), settings.statefulParts(
                        TrainerSettings.TRAIN_DATASET, TrainerSettings.EVAL_DATASET, TrainerSettings.REWARD_FUNC,
                        TrainerSettings.REWARD_PROCESSOR, TrainerSettings.EXTERNAL_TRANSITION,
                        TrainerSettings.EVAL_LOGGER, TrainerSettings.EVAL_AGGREGATOR),
                seeds, logger, work).extendedBy(b.checkpointExtension());
    }

    /** Frees the models, optimizers and references loaded here (not the logger: the trainer closes it first). */
    @Override
    public void close() {
        closeModels(references, optimizers);
    }

    private void closeModels(ReferencePolicy refs, HeldAgents<AdamW> opts) {
        executor.close();
        if (opts != null) {
            opts.values().forEach(AdamW::close);
        }
        if (refs != null) {
            refs.close();
        }
        actors.close(); // the models loaded here; models passed in belong to the caller
        work.close();
    }
}
