package comlrl.trainers.actorcritic;

import comlrl.data.TaskItem;
import comlrl.distributed.HeldAgents;
import comlrl.distributed.RankWork;
import comlrl.generation.CausalLm;
import comlrl.generation.CausalLmWithValueHead;
import comlrl.generation.SeedStream;
import comlrl.logging.MetricsLogger;
import comlrl.tensor.AdamW;
import comlrl.trainers.common.EpochProgress;
import comlrl.trainers.common.EpochTrainer;
import comlrl.trainers.common.JointEvaluator;
import comlrl.reward.JointRewarder;
import comlrl.trainers.common.JointRollout;
import comlrl.trainers.common.TrainerBuilder;
import comlrl.checkpoint.TrainerCheckpoint;
import comlrl.trainers.common.TrainerParts;
import comlrl.trainers.common.TrainerSettings;
import comlrl.trainers.common.Transitions;
import comlrl.utils.Formatters;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The loop IAC and MAAC share (reference §5.7), top to bottom:
 * <pre>
 *   for each epoch, for each task item:
 *     rollout  per turn t, every agent samples K completions; the critic records V_old; the reward
 *              function scores the turn; r'_t = r_t − β·KL_t (reference KL, when enabled); multi-turn
 *              episodes continue until num_turns or early termination    ({@link EpisodeSamples})
 *     targets  y_t = r'_t + γ·V_old(h_{t+1})  (t &lt; T−1),   y_{T−1} = r'_{T−1}     ({@link ActorCriticLoss#episode})
 *     env_step += the joint samples (K per executed turn);  metrics_callback(rollouts) logged
 *     buffer each agent's samples; an agent whose buffer holds rollout_buffer_size samples is updated
 *              ({@link AgentUpdates}: Â per turn group, shuffled minibatches, {@link Critic#update})
 *   end of epoch: update every agent from what its buffer still holds; evaluate every eval_interval
 *              ({@link #evaluate}); checkpoint every checkpoint_interval ({@link #checkpoint})
 * </pre>
 * The critic is a strategy ({@link Critic}): a separate model per agent, a value head on each actor,
 * or MAAC's centralised critic.
 *
 * <p>Differences from the reference, on purpose: {@code metrics_callback} values are logged once, at
 * rollout time (bug 14.15); evaluation with {@code num_generations > 1} rolls out one generation per
 * agent, for MAAC too (bug 14.8); {@link TurnMetrics}' keys are logged per agent under {@code agent_i/}
 * beside their mean over the agents updated together (bug 9); sampling is seeded ({@code seed}).
 */
public abstract class ActorCriticTrainerBase extends EpochTrainer {
    /** {@code metrics_callback(rollouts)}: extra scalar metrics of one item's rollouts. */
    @FunctionalInterface
    public interface MetricsCallback {
        Map<String, Double> apply(List<RolloutSample> rollouts);
    }

    /**
     * What distinguishes the algorithms beside their critic: whether logged returns are discounted (IAC)
     * or suffix sums (MAAC), and whether one agent is saved at the save directory itself (IAC), not in
     * {@code agent_0/}.
     */
    record Algorithm(String name, boolean discountedReturns, boolean oneAgentAtRoot) {
    }

    private final ActorCriticConfig args;
    private final Algorithm algorithm;
    /**
     * The actors, references, executor and logger, and (owned by them) the critic and optimizers; {@code
     * parts.work} is this process's share of a ddp run. Data split: a minibatch's samples are divided between
     * the processes, the gradients summed. Agents split: each actor (with IAC's critic or value head) on its
     * owner only; every process gets every agent's rollouts and old values, so all hold the same buffers.
     */
    private final TrainerParts parts;
    private final HeldAgents<CausalLm> agents;
    private final JointRewarder rewarder;
    private final MetricsCallback metricsCallback;
    private final SeedStream seeds;
    private final MetricsLogger logger;
    private final Critic critic;
    /** Per agent: the actor's optimizer (with a value head on the actor, the head's parameters too). */
    private final HeldAgents<AdamW> actorOptimizers;
    private final AgentUpdates updates;
    private final EpisodeSamples episodes;
    private final JointEvaluator evaluator;
    private final EpochProgress progress;

    /** Loads the actors and references, then {@code critic}, then the actors' optimizers; frees them on failure. */
    ActorCriticTrainerBase(Builder<?> b, ActorCriticConfig args, Algorithm algorithm, ActorCriticSources.Sources sources,
            ActorCriticSources.Placement placement, RankWork work, Function<Critic.Actors, Critic> critic) {
        this.args = args;
        TrainerSettings settings = b.settings();
        this.algorithm = algorithm;
        int numAgents = args.numAgents();
        Formatters formatters = Formatters.fromArgument(settings.get(TrainerSettings.FORMATTERS), numAgents);
        TrainerSettings.Rewarders rewarders = settings.rewarders(numAgents, args.numGenerations(), algorithm.name(),
                args.skipNonfiniteSamples());
        this.rewarder = rewarders.training();
        this.metricsCallback = b.get(ActorCriticBuilder.METRICS_CALLBACK);
        this.seeds = new SeedStream(args.seed());
        this.parts = new TrainerParts(settings, work, new TrainerParts.Load(sources.actors(), placement.agents(),
                !args.referenceKlEnabled() ? null : placement.references().isEmpty() ? placement.agents()
                        : placement.references(), args.seed(), args.parallelTraining(), args, args.numGenerations()),
                sources::withTokenizers);
        this.agents = parts.agents;
        try {
            long[] padIds = agents.longsFromOwners(CausalLm::padId); // each from its owner (agents split)
            Critic.Actors actors = new Critic.Actors(agents, parts.actors, padIds, work, parts.executor,
                    new MinibatchSteps(work, b.observer));
            this.critic = parts.own(critic.apply(actors), Critic::close);
            this.critic.requireOutside(settings.get(TrainerSettings.OUTPUT_DIR), "output_dir");
            this.actorOptimizers = parts.own(agents.open((i, agent) -> ValueHeads.adamW(work, agent.model(),
                    this.critic.headOnActor(i), args.agentLearningRate())), o -> o.values().forEach(AdamW::close));
            this.logger = parts.openLogger(settings.metricsLogger(args.loggingSteps(), algorithm.name(),
                    TrainerBuilder.trackedConfig(args.toMap(), sources.actors()), work.isMain()));
            this.updates = new AgentUpdates(args, this.critic, actorOptimizers, actors);
            JointRollout rollout = JointRollout.of(agents.asList(), parts.generation.asList(), formatters,
                    settings.promptEncoder(), parts.executor, work)
                    .withTransitions(new Transitions(settings.get(TrainerSettings.EXTERNAL_TRANSITION), numAgents),
                            args.externalPromptPassthrough())
                    .withReferences(parts.references);
            this.episodes = new EpisodeSamples(args, algorithm.discountedReturns(), rollout, padIds, this.critic);
            this.evaluator = new JointEvaluator(settings, rollout, new JointEvaluator.Family<>(JointRollout.Scoring
                    .perAgent(rewarders.evaluation()), episodes::terminates, this::recordEvaluation, true), seeds,
                    args.numTurns(), args.evalBatchSize());
            this.progress = new EpochProgress(parts.loop(args.evalInterval()),
                    checkpoint(settings.get(TrainerSettings.CHECKPOINT_EXTENSION)), parts.actors,
                    this::evaluate, this::trainItem, () -> drain(updates.nonEmpty()));
        } catch (RuntimeException | Error e) {
            parts.closeAfter(e);
            throw e;
        }
    }

    public ActorCriticConfig args() {
        return args;
    }

    public String algorithmName() {
        return algorithm.name();
    }

    public int numAgents() {
        return args.numAgents();
    }

    @Override
    protected final EpochProgress progress() {
        return progress;
    }

    @Override
    protected final TrainerParts parts() {
        return parts;
    }

    /** The actors, each with the value head on it (IAC with {@code use_separate_critic: false}; else null). */
    public List<CausalLmWithValueHead> agents() {
        return agents.mapIndexed((i, a) -> new CausalLmWithValueHead(a, critic.headOnActor(i))).asList();
    }

    /** The critic models with their value heads ({@link Critic#views}). */
    public List<CausalLmWithValueHead> critics() {
        return critic.views();
    }

    /** One task item: its rollouts, {@code env_step}, the callback's metrics, the buffers and the updates they fill. */
    private void trainItem(TaskItem item, String label) {
        List<RolloutSample> rollouts = episodes.collect(item, label, seeds, rewarder, args.numGenerations());
        long envStep = progress.advance(rollouts.size() / args.numAgents());
        Map<String, Double> extra = callback(rollouts);
        if (!extra.isEmpty()) {
            logger.log(envStep, extra); // once, unprefixed, at rollout time
        }
        List<Integer> full = new ArrayList<>();
        for (RolloutSample s : rollouts) {
            // a non-finite reward only reaches here with skip_nonfinite_samples (JointRewarder stops the run otherwise)
            if (Double.isFinite(s.reward()) && updates.add(s) && !full.contains(s.agentIdx())) {
                full.add(s.agentIdx());
            }
        }
        drain(full);
    }

    private void drain(List<Integer> agentIds) {
        if (!agentIds.isEmpty()) {
            logger.logTrain(progress.envStep(), updates.drain(agentIds, seeds));
        }
    }

    /** {@code metrics_callback}'s values ({@code {}} without one); user callbacks run on rank 0 of a ddp run. */
    private Map<String, Double> callback(List<RolloutSample> rollouts) {
        Map<String, Double> values = metricsCallback == null || !parts.work.isMain() ? null
                : metricsCallback.apply(List.copyOf(rollouts));
        return values == null ? Map.of() : values;
    }

    /**
     * The checkpoint: per agent {@code agent_i} (weights), {@code optimizer_i.safetensors} and the critic's
     * parts of that agent, then the critic's shared parts; the actors' and critics' shapes; progress, seeds
     * and the stateful parts. In the agents split each process writes and restores the agents it owns.
     */
    private TrainerCheckpoint checkpoint(TrainerCheckpoint.Extension extension) {
        List<TrainerCheckpoint.ShapeGroup> shapes = new ArrayList<>();
        shapes.add(TrainerCheckpoint.ShapeGroup.of("model_shapes", "agent", agents.map(CausalLm::model)));
        shapes.addAll(critic.shapes());
        Map<String, TrainerCheckpoint.Part> parts = new LinkedHashMap<>(TrainerCheckpoint.agentParts(agents,
                actorOptimizers));
        agents.indices().forEach(i -> parts.putAll(critic.agentParts(i)));
        parts.putAll(critic.sharedParts());
        return new TrainerCheckpoint(algorithm.name(), agents.size(), args.numTrainEpochs(), args.saveTotalLimit(),
                shapes, parts, settings().statefulParts(TrainerSettings.TRAIN_DATASET, TrainerSettings.EVAL_DATASET,
                        TrainerSettings.REWARD_FUNC, TrainerSettings.REWARD_PROCESSOR,
                        TrainerSettings.EXTERNAL_TRANSITION, ActorCriticBuilder.METRICS_CALLBACK),
                seeds, logger, this.parts.work).extendedBy(extension);
    }

    /**
     * Evaluates on the first {@code eval_num_samples} evaluation items ({@link JointEvaluator}): one
     * generation per agent per turn, {@code eval_batch_size} items sampled together (each its own episode;
     * the batch draws one seed per agent per turn from {@link SeedStream#evaluation()}, so the batch size
     * decides which seeds an item gets), no updates. Returns per turn the means of {@link TurnMetrics}'
     * rollout keys under {@code eval/}, then {@code eval/<key>}, the mean over the items of
     * {@code metrics_callback}; {@code {}} without an evaluation set. Logged at the current {@code env_step}.
     */
    @Override
    public Map<String, Double> evaluate() {
        return evaluator.evaluate(args.evalNumSamples(), logger, progress.envStep());
    }

    /** Records an evaluation episode's {@link TurnMetrics} and callback values; returns each turn's mean reward. */
    private double[] recordEvaluation(TaskItem item, List<JointRollout.Scored<double[][]>> episode,
            JointEvaluator.Means means) {
        List<RolloutSample> rollouts = episodes.samples(item, episode, 1);
        rollouts.forEach(r -> TurnMetrics.add(means, r));
        callback(rollouts).forEach(means::custom);
        return AgentUpdates.byTurn(rollouts).values().stream().mapToDouble(turn -> turn.stream()
                .mapToDouble(RolloutSample::reward).average().orElse(Double.NaN)).toArray();
    }

    /**
     * Saves the actors, critics and value heads in the reference's layout (§11): agent i in
     * {@code dir/agent_i/} (IAC with one agent: {@code dir} itself), its critic or head beside it.
     */
    @Override
    public void saveModel(Path dir) {
        critic.requireOutside(dir, "the save directory");
        parts.actors.saveAgents(agents, parts.work, dir, i -> actorDir(dir, i),
                writes -> critic.save(dir, i -> actorDir(dir, i), writes));
        logger.summary(Map.of("final_model_saved", true)); // W&B's run summary, as the reference logs it
    }

    /**
     * Restores the value heads {@link #saveModel} wrote under {@code savedDir} (the reference's
     * {@code value_head.load_state_dict(...)} before {@code train()}): IAC's {@code agent_i/value_head.*}
     * or {@code agent_i/critic/value_head.*}, MAAC's {@code critic/value_head.*}. Fails, naming the file,
     * when a head's width or input size differs from this run's, or the saved run used another
     * {@code critic_type}.
     */
    public void loadValueHeads(Path savedDir) {
        critic.loadValueHeads(savedDir, i -> actorDir(savedDir, i));
    }

    private Path actorDir(Path dir, int agent) {
        return algorithm.oneAgentAtRoot() && args.numAgents() == 1 ? dir : dir.resolve("agent_" + agent);
    }

    /** Builds an IAC or MAAC trainer (the setters and checks: {@link ActorCriticBuilder}). */
    public static final class Builder<T extends ActorCriticTrainerBase> extends ActorCriticBuilder<T> {
        Builder(Function<Builder<T>, T> factory) {
            super(factory);
        }
    }
}
