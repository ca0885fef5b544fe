package comlrl.trainers.actorcritic;

import comlrl.trainers.common.HeldAgents;
import comlrl.data.Dataset;
import comlrl.data.TaskItem;
import comlrl.data.TaskSet;
import comlrl.generation.CausalLm;
import comlrl.generation.GenerationSettings;
import comlrl.tensor.AdamW;
import comlrl.trainers.ExternalTransition;
import comlrl.trainers.common.AgentExecutor;
import comlrl.trainers.common.AgentGeneration;
import comlrl.trainers.common.AgentSet;
import comlrl.trainers.common.JointRollout;
import comlrl.trainers.common.EpochProgress;
import comlrl.trainers.common.EvalSamples;
import comlrl.trainers.common.JointRewarder;
import comlrl.trainers.common.MetricsLogger;
import comlrl.trainers.common.PromptEncoder;
import comlrl.trainers.common.RankWork;
import comlrl.trainers.common.ReferencePolicy;
import comlrl.trainers.common.SeedStream;
import comlrl.trainers.common.EpochTrainer;
import comlrl.trainers.common.TrainerBuilder;
import comlrl.trainers.common.TrainerCheckpoint;
import comlrl.trainers.common.TrainerSettings;
import comlrl.trainers.common.Transitions;
import comlrl.utils.Formatters;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The loop IAC and MAAC share (reference §5.7), top to bottom:
 * <pre>
 *   for each epoch, for each task item:
 *     rollout  (collect): per turn t, every agent samples K completions; the critic records V_old;
 *              the reward function scores the turn; r'_t = r_t − β·KL_t (reference KL, when enabled);
 *              multi-turn episodes continue through the external transition until num_turns or
 *              early termination
 *              ({@link EpisodeSamples})
 *     targets  y_t = r'_t + γ·V_old(h_{t+1})  (t &lt; T−1),   y_{T−1} = r'_{T−1}     ({@link ActorCriticLoss#episode})
 *     env_step += the joint samples (K per executed turn);  metrics_callback(rollouts) logged
 *     buffer each agent's samples; an agent whose buffer holds rollout_buffer_size samples is updated
 *              ({@link AgentUpdates}: Â per turn group, shuffled minibatches, {@link Critic#update})
 *   end of epoch: update every agent from what its buffer still holds; evaluate every eval_interval
 *              ({@link EvaluationMetrics}); checkpoint every checkpoint_interval ({@link ActorCriticCheckpoint})
 * </pre>
 * The critic is a strategy ({@link Critic}): a separate model per agent, a value head on each actor,
 * or MAAC's centralised critic. Logged per update event, per agent under {@code agent_i/} and averaged
 * over the agents updated together without it ({@link TurnMetrics}): {@code turn_t/reward_mean},
 * {@code expected_return}, {@code reference_kl_mean}, {@code reference_kl_penalty_mean},
 * {@code policy_loss}, {@code value_loss} and {@code explained_variance}
 * ({@code 1 − Var[y − V_old] / Var[y]}, absent when {@code Var[y] = 0}).
 *
 * <p>Differences from the reference, on purpose: {@code metrics_callback} values are logged once, at
 * rollout time (bug 14.15); evaluation with {@code num_generations > 1} rolls out one generation per
 * agent, for MAAC too (bug 14.8); per-agent keys {@code agent_i/turn_t/...} are logged beside the
 * aggregate {@code turn_t/...} keys, which average over the agents updated together (bug 9);
 * sampling is seeded ({@code seed}).
 */
public abstract class ActorCriticTrainerBase extends EpochTrainer {
    /** {@code metrics_callback(rollouts)}: extra scalar metrics of one item's rollouts. */
    @FunctionalInterface
    public interface MetricsCallback {
        Map<String, Double> apply(List<RolloutSample> rollouts);
    }

    /** What the builder was given besides {@code args}. */
    private final TrainerSettings settings;
    /**
     * What distinguishes the algorithms beside their critic: the name, whether logged returns are
     * discounted ({@code G_t = r'_t + γ·G_{t+1}}, IAC) or suffix sums (MAAC), and whether a run of one
     * agent saves it at the save directory itself (IAC) rather than in {@code agent_0/}.
     */
    record Algorithm(String name, boolean discountedReturns, boolean oneAgentAtRoot) {
    }

    private final ActorCriticConfig args;
    private final Algorithm algorithm;
    private final int numAgents;
    /**
     * This process's share of a ddp run ({@link RankWork}). Data split: every model on every process;
     * a minibatch's samples are divided between the processes and the gradients summed. Agents split:
     * each actor (with what is its own: IAC's critic or value head) on its owner only, which samples,
     * values and updates it; every process gets every agent's completions, prompt ids, reference KLs
     * and old values, so every process holds the same rollouts and buffers.
     */
    private final RankWork work;
    private final AgentSet actorSet;
    /** The actors this process holds, with the tokenizers they use. */
    private final HeldAgents<CausalLm> agents;
    private final HeldAgents<GenerationSettings.Resolved> generation;
    private final JointRewarder rewarder;
    private final JointRewarder evalRewarder;
    private final Dataset evalDataset;
    private final MetricsCallback metricsCallback;
    private final ReferencePolicy references; // null when reference KL is off
    private final AgentExecutor executor;
    private final SeedStream seeds;
    private final MetricsLogger logger;
    private final Critic critic;
    /** Per agent: the actor's optimizer (with a value head on the actor, the head's parameters too). */
    private HeldAgents<AdamW> actorOptimizers;
    private final AgentUpdates updates;
    /** Runs an item's joint rollout and makes its samples, with targets, returns and advantages. */
    private final EpisodeSamples episodes;
    /** Epochs done and {@code env_step} (saved in checkpoints), and the outer loop ({@link EpochProgress}). */
    private final EpochProgress progress;
    /** The task item being rolled out, for messages ("train item 3 of epoch 1", "eval item 0"). */
    private String itemLabel = "a task item";
    private long skipped;

    /**
     * Loads the actors (and their references), then the critic {@code critic} makes for them, then
     * the actors' optimizers; frees what it loaded when any of it fails.
     */
    ActorCriticTrainerBase(Builder<?> b, ActorCriticConfig args, Algorithm algorithm, ActorCriticSources.Sources sources,
            ActorCriticSources.Placement placement, RankWork work, Function<Critic.Actors, Critic> critic) {
        this.work = work;
        this.args = args;
        this.settings = b.settings();
        this.algorithm = algorithm;
        this.numAgents = args.numAgents();
        Formatters formatters = Formatters.fromArgument(b.formatters(), numAgents);
        TrainerSettings.Rewarders rewarders = settings.rewarders(numAgents, args.numGenerations(), algorithm.name(),
                args.skipNonfiniteSamples());
        this.rewarder = rewarders.training();
        this.evalRewarder = rewarders.evaluation();
        TaskSet trainDataset = b.trainDataset();
        this.evalDataset = b.evalDataset();
        ExternalTransition externalTransition = b.externalTransition();
        this.metricsCallback = b.metricsCallback();
        PromptEncoder promptEncoder = new PromptEncoder(b.chatTemplate(), b.systemPrompt());
        Path outputDir = b.outputDir();
        this.seeds = new SeedStream(args.seed());
        this.logger = b.metricsLogger(args.loggingSteps(), algorithm.name(),
                TrainerBuilder.trackedConfig(args.toMap(), sources.actors()), work.isMain());
        this.executor = AgentExecutor.create(numAgents, AgentSet.runsInParallel(args.parallelTraining(),
                placement.agents()));
        AgentSet loaded = null;
        ReferencePolicy refs = null;
        Critic made = null;
        try {
            loaded = AgentSet.loadActors(sources.actors(), settings, placement.agents(), args.seed(), work);
            agents = sources.withTokenizers(loaded.held(work));
            generation = agents.mapIndexed((i, a) -> AgentGeneration.resolve(i, a, args, args.numGenerations()));
            if (args.referenceKlEnabled()) {
                refs = new ReferencePolicy(agents.map(CausalLm::model), placement.references().isEmpty()
                        ? placement.agents() : placement.references());
            }
            loaded.requireOutside(outputDir, "output_dir");
            long[] padIds = agents.longsFromOwners(CausalLm::padId); // each from its owner (agents split)
            MinibatchSteps steps = new MinibatchSteps(work, b.observer);
            made = critic.apply(new Critic.Actors(agents, loaded, padIds, work, executor, steps));
            made.requireOutside(outputDir, "output_dir");
            actorOptimizers = AgentUpdates.actorOptimizers(agents, made, work, args.agentLearningRate());
            this.updates = new AgentUpdates(args, made, actorOptimizers, executor, work, steps);
            JointRollout rollout = JointRollout.of(agents.asList(), generation.asList(), formatters, promptEncoder, executor,
                    work).withTransitions(new Transitions(externalTransition, numAgents), args.externalPromptPassthrough())
                    .withReferences(refs);
            this.episodes = new EpisodeSamples(args, algorithm.discountedReturns(), rollout, padIds, made, work);
            TrainerCheckpoint checkpoint = ActorCriticCheckpoint.of(algorithm.name(), args, agents, actorOptimizers,
                    made, work, settings.statefulParts(TrainerSettings.TRAIN_DATASET, TrainerSettings.EVAL_DATASET,
                            TrainerSettings.REWARD_FUNC, TrainerSettings.REWARD_PROCESSOR,
                            TrainerSettings.EXTERNAL_TRANSITION, ActorCriticBuilder.METRICS_CALLBACK),
                    seeds, logger, b.checkpointExtension());
            this.progress = new EpochProgress(new EpochProgress.Loop(trainDataset, evalDataset != null,
                    args.evalInterval(), b.console(), logger, b.verbose() && work.isMain()), checkpoint, loaded,
                    this::evaluate, this::trainItem, () -> drain(updates.nonEmpty()));
        } catch (RuntimeException | Error e) {
            freeModels(made, refs, loaded);
            executor.close();
            logger.close();
            throw e;
        }
        this.actorSet = loaded;
        this.references = refs;
        this.critic = made;
    }

    /** The builder's settings as this trainer received them. */
    public final TrainerSettings settings() {
        return settings;
    }

    // ------------------------------------------------------------------ public API

    public ActorCriticConfig args() {
        return args;
    }

    public String algorithmName() {
        return algorithm.name();
    }

    public int numAgents() {
        return numAgents;
    }

    @Override
    protected final EpochProgress progress() {
        return progress;
    }

    /**
     * Each actor's causal LM (a shared value head, if any, is not part of it); in a ddp run with the
     * agents split, null for the agents other processes hold.
     */
    @Override
    public List<CausalLm> policies() {
        return agents.asList();
    }

    /**
     * The actors, each with the value head on it (IAC with {@code use_separate_critic: false}; null
     * otherwise); in a ddp run with the agents split, null for the agents other processes hold.
     */
    public List<CausalLmWithValueHead> agents() {
        return agents.mapIndexed((i, a) -> new CausalLmWithValueHead(a, critic.headOnActor(i))).asList();
    }

    /**
     * The critic models with their value heads ({@link Critic#views}): IAC's separate critics (empty
     * with value heads on the actors; null for other processes' agents in the agents split), or MAAC's
     * one centralised critic.
     */
    public List<CausalLmWithValueHead> critics() {
        return critic.views();
    }

    /** Each agent's generate settings with the source of every value. */
    @Override
    public List<GenerationSettings.Resolved> generationSettings() {
        return generation.asList();
    }

    /** Samples left out of updates because a value was not finite ({@code skip_nonfinite_samples}). */
    public long skippedSamples() {
        return skipped;
    }

    /** One task item: its rollouts, {@code env_step}, the callback's metrics, the buffers and the updates they fill. */
    private void trainItem(TaskItem item, String label) {
        itemLabel = label;
        List<RolloutSample> rollouts = collect(item, false);
        long envStep = progress.advance(rollouts.size() / numAgents);
        if (metricsCallback != null && work.isMain()) {
            Map<String, Double> extra = callback(rollouts);
            if (!extra.isEmpty()) {
                logger.log(envStep, extra); // once, unprefixed, at rollout time
            }
        }
        List<Integer> full = new ArrayList<>();
        for (RolloutSample s : rollouts) {
            if (!Double.isFinite(s.reward())) {
                skipped++; // only reached with skip_nonfinite_samples (JointRewarder stops the run otherwise)
                continue;
            }
            if (updates.add(s) && !full.contains(s.agentIdx())) {
                full.add(s.agentIdx());
            }
        }
        drain(full);
    }

    /** Updates {@code agentIds} from their buffers and logs their metrics as one event. */
    private void drain(List<Integer> agentIds) {
        if (!agentIds.isEmpty()) {
            logger.logTrain(progress.envStep(), updates.drain(agentIds, seeds));
        }
    }

    private Map<String, Double> callback(List<RolloutSample> rollouts) {
        Map<String, Double> values = metricsCallback.apply(List.copyOf(rollouts));
        return values == null ? Map.of() : values;
    }

    /**
     * One item's rollouts, in (turn, agent, generation) order. Per turn: every agent samples K
     * responses (K = {@code num_generations} in training, 1 in evaluation), the critic records its
     * values, the reward function scores the turn once; multi-turn episodes continue through the
     * external transition until {@code num_turns} or until the turn's mean reward exceeds
     * {@code early_termination_threshold}. Targets and returns follow {@link ActorCriticLoss}.
     */
    protected final List<RolloutSample> collect(TaskItem item, boolean eval) {
        return eval ? episodes.collect(item, itemLabel, evalSeeds, evalRewarder, 1)
                : episodes.collect(item, itemLabel, seeds, rewarder, args.numGenerations());
    }

    /** The seeds of the evaluation under way ({@link SeedStream#evaluation()}: none of training's). */
    private SeedStream evalSeeds;

    // ------------------------------------------------------------------ evaluation, saving

    /**
     * Evaluates on the first {@code eval_num_samples} evaluation items (reference {@code evaluate()}:
     * no argument): one generation per agent per turn, no updates. Returns
     * {@code eval/turn_t/reward_mean} (raw rewards), {@code eval/turn_t/expected_return},
     * {@code eval/turn_t/reference_kl_mean}, {@code eval/turn_t/reference_kl_penalty_mean} and
     * {@code eval/<key>}, the mean over items of {@code metrics_callback}; {@code {}} without an
     * evaluation set. Logged at the current {@code env_step}.
     */
    @Override
    public Map<String, Double> evaluate() {
        if (evalDataset == null) {
            return Map.of();
        }
        int n = Math.min(args.evalNumSamples(), evalDataset.size());
        evalSeeds = seeds.evaluation();
        EvaluationMetrics gathered = new EvaluationMetrics();
        List<EvalSamples.Sample> kept = new ArrayList<>();
        for (int j = 0; j < n; j++) {
            itemLabel = "eval item " + j;
            List<RolloutSample> rollouts = collect(evalDataset.get(j), true);
            gathered.addRollouts(rollouts);
            if (j < EvalSamples.KEPT && work.isMain()) {
                kept.add(sample(j, rollouts));
            }
            if (metricsCallback != null && work.isMain()) { // user callbacks run on rank 0 of a ddp run
                gathered.addCallback(callback(rollouts));
            }
        }
        Map<String, Double> metrics = gathered.metrics();
        logger.log(progress.envStep(), metrics);
        logger.samples(progress.envStep(), kept);
        return metrics;
    }

    /** An evaluation item's rollouts as {@link EvalSamples} show them; a turn's reward is the mean over the agents. */
    private EvalSamples.Sample sample(int index, List<RolloutSample> rollouts) {
        int turns = rollouts.stream().mapToInt(RolloutSample::turnIdx).max().orElse(-1) + 1;
        List<List<String>> prompts = new ArrayList<>();
        List<List<String>> completions = new ArrayList<>();
        for (int i = 0; i < numAgents; i++) {
            int agent = i;
            List<RolloutSample> own = rollouts.stream().filter(r -> r.agentIdx() == agent)
                    .sorted(java.util.Comparator.comparingInt(RolloutSample::turnIdx)).toList();
            prompts.add(own.stream().map(RolloutSample::prompt).toList());
            completions.add(own.stream().map(RolloutSample::completion).toList());
        }
        List<Double> rewards = new ArrayList<>();
        for (int t = 0; t < turns; t++) {
            int turn = t;
            rewards.add(rollouts.stream().filter(r -> r.turnIdx() == turn).mapToDouble(RolloutSample::reward).average()
                    .orElse(Double.NaN));
        }
        return new EvalSamples.Sample(index, prompts, completions, rewards);
    }

    /**
     * Saves the actors, critics and value heads in the reference's layout (§11): agent i in
     * {@code dir/agent_i/} (IAC with one agent: {@code dir} itself), its critic or head beside it
     * ({@link Critic#save}). In a ddp run rank 0 writes every agent (data split), or each process its
     * own (agents split).
     */
    @Override
    public void saveModel(Path dir) {
        actorSet.requireOutside(dir, "the save directory");
        critic.requireOutside(dir, "the save directory");
        boolean writes = work.isMain() || !work.splitsRows();
        for (int i : writes ? agents.indices() : List.<Integer>of()) {
            agents.get(i).save(actorDir(dir, i));
        }
        critic.save(dir, i -> actorDir(dir, i), writes);
        work.barrier();
        logger.summary(Map.of("final_model_saved", true)); // W&B's run summary, as the reference logs it
    }

    /**
     * Restores the value heads {@link #saveModel} wrote under {@code savedDir} into this trainer's heads
     * (the reference's {@code value_head.load_state_dict(torch.load(...))} step before {@code train()}):
     * IAC's {@code agent_i/value_head.*} or {@code agent_i/critic/value_head.*} (with one agent, without
     * {@code agent_0/}), MAAC's {@code critic/value_head.*}. Fails, naming the file, when a head's width
     * or input size differs from this run's ({@code value_head_hidden_dim} /
     * {@code critic_value_head_hidden_dim}), or when the saved run used another {@code critic_type}
     * ({@link Critic#loadValueHeads}).
     */
    public void loadValueHeads(Path savedDir) {
        critic.loadValueHeads(savedDir, i -> actorDir(savedDir, i));
    }

    private Path actorDir(Path dir, int agent) {
        return algorithm.oneAgentAtRoot() && numAgents == 1 ? dir : dir.resolve("agent_" + agent);
    }

    @Override
    public void close() {
        executor.close();
        try {
            logger.close(); // throws when a sink could not write (after the models are freed below)
        } finally {
            freeModels(critic, references, actorSet);
            work.close();
        }
    }

    /** Frees the actors' optimizers, then the critic, the references and the actors (each when made). */
    private void freeModels(Critic madeCritic, ReferencePolicy refs, AgentSet actors) {
        if (actorOptimizers != null) {
            actorOptimizers.values().forEach(AdamW::close);
        }
        if (madeCritic != null) {
            madeCritic.close();
        }
        if (refs != null) {
            refs.close();
        }
        if (actors != null) {
            actors.close();
        }
    }

    /**
     * Builds an IAC or MAAC trainer ({@link ActorCriticBuilder}: the setters, named after the reference's
     * constructor keywords, and the checks).
     */
    public static final class Builder<T extends ActorCriticTrainerBase> extends ActorCriticBuilder<T> {
        Builder(Function<Builder<T>, T> factory) {
            super(factory);
        }
    }
}
