package comlrl.trainers.actorcritic;

import comlrl.data.Dataset;
import comlrl.data.TaskItem;
import comlrl.data.TaskSet;
import comlrl.generation.CausalLm;
import comlrl.generation.Completion;
import comlrl.generation.GenerationSettings;
import comlrl.logging.MetricSink;
import comlrl.model.DecoderLm;
import comlrl.reward.RewardFunction;
import comlrl.rl.ReferenceKl;
import comlrl.tensor.DType;
import comlrl.tokenizer.Tokenizer;
import comlrl.trainers.ExternalTransition;
import comlrl.trainers.common.AgentExecutor;
import comlrl.trainers.common.AgentGeneration;
import comlrl.trainers.common.AgentSet;
import comlrl.trainers.common.JointRollout;
import comlrl.trainers.common.EpochLoop;
import comlrl.trainers.common.JointRewarder;
import comlrl.trainers.common.MetricsLogger;
import comlrl.trainers.common.PromptEncoder;
import comlrl.trainers.common.RankWork;
import comlrl.trainers.common.ReferencePolicy;
import comlrl.trainers.common.SeedStream;
import comlrl.trainers.common.Trainer;
import comlrl.trainers.common.TrainerBuilder;
import comlrl.trainers.common.TrainerCheckpoint;
import comlrl.trainers.common.Transitions;
import comlrl.utils.Formatter;
import comlrl.utils.Formatters;
import comlrl.utils.RewardProcessor;
import comlrl.utils.RewardProcessors;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * The loop IAC and MAAC share (reference §5.7): per task item, roll every agent out (one turn, or
 * up to {@code num_turns} with the external transition and early termination), score, record the
 * critic's old values, compute targets; advance {@code env_step} by the joint samples; log the
 * {@code metrics_callback} values; buffer each agent's samples and update an agent whose buffer holds
 * {@code rollout_buffer_size} of them (per turn group: normalised advantages, shuffled minibatches
 * of {@code train_batch_size}, one actor and one critic step each). The subclasses give the critic:
 * its old values ({@link #criticValues}), the update ({@link #update}), saving and checkpoint parts.
 *
 * <p>Differences from the reference, on purpose: {@code metrics_callback} values are logged once, at
 * rollout time (bug 14.15); evaluation with {@code num_generations > 1} rolls out one generation per
 * agent, for MAAC too (bug 14.8); per-agent keys {@code agent_i/turn_t/...} are logged beside the
 * aggregate {@code turn_t/...} keys, which average over the agents updated together (bug 9);
 * sampling is seeded ({@code seed}).
 */
public abstract class ActorCriticTrainerBase implements Trainer {
    /** {@code metrics_callback(rollouts)}: extra scalar metrics of one item's rollouts. */
    @FunctionalInterface
    public interface MetricsCallback {
        Map<String, Double> apply(List<RolloutSample> rollouts);
    }

    /** The old values of one turn and, for a joint critic, its input ids per joint action. */
    protected record CriticValues(double[][] values, List<long[]> jointIds) {
    }

    /** The losses of one minibatch update. */
    protected record UpdateResult(double policyLoss, double valueLoss) {
    }

    protected final ActorCriticConfig args;
    protected final String algorithmName;
    protected final int numAgents;
    private final AgentSet actorSet;

    /**
     * Loads the separate critics (LoRA critics, {@code criticLora}, on the actors' shared base when they
     * name the same model on the same device), those {@code include} accepts (null for the others).
     */
    protected AgentSet loadCritics(Builder<?> b, List<Object> sources, List<comlrl.tensor.Device> devices,
            java.util.function.IntPredicate include) {
        return AgentSet.load("critic", sources, b.dtype(), devices, b.criticLoraAgents(), args.seed() ^ 0xC0FFEEL,
                actorSet, include);
    }

    /** The actors, with the tokenizers they use; in the agents split null for the agents other processes hold. */
    protected final List<CausalLm> agents = new ArrayList<>();
    protected final List<GenerationSettings.Resolved> generation = new ArrayList<>();
    /** Each agent's pad id (given by its owner in the agents split). */
    private final long[] padIds;
    protected final Formatters formatters;
    protected final RewardFunction rewardFunc;
    protected final RewardProcessor rewardProcessor;
    private final JointRewarder rewarder;
    private final JointRewarder evalRewarder;
    protected final TaskSet trainDataset;
    protected final Dataset evalDataset;
    private final ExternalTransition externalTransition;
    private final Transitions transitions;
    private final MetricsCallback metricsCallback;
    protected final PromptEncoder promptEncoder;
    protected final ReferencePolicy references; // null when reference KL is off
    protected final AgentExecutor executor;
    protected final SeedStream seeds;
    protected final MetricsLogger logger;
    protected final Path outputDir;
    private final boolean verbose;
    protected final PrintStream console;
    private TrainerCheckpoint checkpoint;
    private final TrainerCheckpoint.Extension checkpointExtension;
    private final UpdateObserver observer;
    /**
     * This process's share of a ddp run ({@link RankWork}). Data split: every model on every process;
     * a minibatch's samples are divided between the processes and the gradients summed. Agents split:
     * each actor (with what is its own: IAC's critic or value head) on its owner only, which samples,
     * values and updates it; every process gets every agent's completions, prompt ids, reference KLs
     * and old values, so every process holds the same rollouts and buffers.
     */
    protected final RankWork work;

    private long envStep;
    private int epochsDone;
    private String itemLabel = "a task item";
    private final List<List<RolloutSample>> buffers = new ArrayList<>();
    private long skipped;

    /**
     * Loads the actors and everything that is not the critic; subclasses then load their critics and
     * call {@link #initCheckpoint}. On a failure the subclass calls {@link #close()}.
     */
    protected ActorCriticTrainerBase(Builder<?> b, ActorCriticConfig args, String algorithmName,
            ActorCriticSources.Sources sources, ActorCriticSources.Placement placement, RankWork work) {
        this.work = work;
        this.args = args;
        this.algorithmName = algorithmName;
        this.numAgents = args.numAgents();
        this.formatters = Formatters.fromArgument(b.formatters(), numAgents);
        this.rewardFunc = b.rewardFunc();
        this.rewardProcessor = b.rewardProcessor() == null ? RewardProcessors.identity() : b.rewardProcessor();
        this.rewarder = new JointRewarder(rewardFunc, rewardProcessor, numAgents, args.numGenerations(), algorithmName,
                args.skipNonfiniteSamples());
        this.evalRewarder = b.evalRewardFunc() == null && b.evalRewardProcessor() == null ? rewarder
                : new JointRewarder(b.evalRewardFunc() == null ? rewardFunc : b.evalRewardFunc(),
                b.evalRewardProcessor() == null ? rewardProcessor : b.evalRewardProcessor(), numAgents, args.numGenerations(), algorithmName, args.skipNonfiniteSamples());
        this.trainDataset = b.trainDataset();
        this.evalDataset = b.evalDataset();
        this.externalTransition = b.externalTransition;
        this.transitions = new Transitions(externalTransition, numAgents);
        this.metricsCallback = b.metricsCallback;
        this.promptEncoder = new PromptEncoder(b.chatTemplate(), b.systemPrompt());
        this.outputDir = b.outputDir();
        this.verbose = b.verbose();
        this.console = b.console();
        this.observer = b.observer;
        this.checkpointExtension = b.checkpointExtension();
        this.seeds = new SeedStream(args.seed());
        this.logger = b.metricsLogger(args.loggingSteps(), algorithmName,
                TrainerBuilder.trackedConfig(args.toMap(), sources.actors()), work.isMain());
        this.executor = AgentExecutor.create(numAgents, AgentSet.runsInParallel(args.parallelTraining(),
                placement.agents()));
        AgentSet loaded = null;
        ReferencePolicy refs = null;
        try {
            loaded = AgentSet.load("agent", sources.actors(), b.dtype(), placement.agents(), b.loraAgents(), args.seed(),
                    null, work::ownsAgent);
            for (int i = 0; i < numAgents; i++) {
                CausalLm lm = loaded.get(i);
                Tokenizer tok = sources.tokenizers().get(i);
                agents.add(lm == null || tok == null || tok == lm.tokenizer() ? lm : lm.withTokenizer(tok));
                buffers.add(new ArrayList<>());
            }
            for (int i = 0; i < numAgents; i++) {
                generation.add(agents.get(i) == null ? null : AgentGeneration.resolve(i, agents.get(i),
                        args.generationKwargs(), args.temperature(), args.topP(), args.topK(), args.maxNewTokens(),
                        args.numGenerations()));
            }
            if (args.referenceKlEnabled()) {
                refs = new ReferencePolicy(actorModels(), placement.references().isEmpty()
                        ? placement.agents() : placement.references());
            }
            loaded.requireOutside(outputDir, "output_dir");
        } catch (RuntimeException | Error e) {
            if (refs != null) {
                refs.close();
            }
            if (loaded != null) {
                loaded.close();
            }
            executor.close();
            logger.close();
            throw e;
        }
        this.actorSet = loaded;
        this.references = refs;
        this.padIds = fromOwners(agents, CausalLm::padId);
    }

    /**
     * {@code f} of each of {@code models}, every process getting every model's value from the process
     * that holds it (in the agents split {@code models} holds nulls for the others' models).
     */
    protected final long[] fromOwners(List<CausalLm> models, java.util.function.ToLongFunction<CausalLm> f) {
        return work.longsFromOwners(models, f);
    }

    /** Agent {@code i}'s pad id, known to every process. */
    protected final long padId(int i) {
        return padIds[i];
    }

    /** Checks a builder's common arguments before any model loads. */
    static void requireCommon(Builder<?> b, String algorithmName) {
        if (b.rewardFunc() == null) {
            throw new IllegalArgumentException("reward_func must be provided (a RewardFunction)");
        }
        if (b.trainDataset() == null) {
            throw new IllegalArgumentException("train_dataset must be provided");
        }
        if (b.args.numTurns() > 1 && b.externalTransition == null) {
            throw new IllegalArgumentException("Multi-turn " + algorithmName + " requires an external_transition.");
        }
        if (b.logHistoryLimit() < 0) {
            throw new IllegalArgumentException("log_history_limit must be >= 0, got " + b.logHistoryLimit());
        }
    }

    /** Call once at the end of the subclass constructor: the checkpoint contract of the whole trainer. */
    protected final void initCheckpoint(List<TrainerCheckpoint.ShapeGroup> shapes, Map<String, TrainerCheckpoint.Part> parts) {
        this.checkpoint = new TrainerCheckpoint(algorithmName, numAgents, args.numTrainEpochs(), args.saveTotalLimit(),
                shapes, parts, TrainerCheckpoint.statefulParts("train_dataset", trainDataset, "eval_dataset", evalDataset,
                        "reward_func", rewardFunc, "reward_processor", rewardProcessor, "external_transition",
                        externalTransition, "metrics_callback", metricsCallback), seeds, logger)
                .in(work).extendedBy(checkpointExtension);
    }

    // ------------------------------------------------------------------ what the critic does

    /**
     * The critic's values of one turn without gradients: {@code values[i][k]} for agent i's
     * generation k, from the prompts and the responses (cut at their first pad id).
     */
    protected abstract CriticValues criticValues(int turn, List<String> prompts, List<long[]> promptIds,
            List<List<long[]>> responses, List<List<String>> texts);

    /** One minibatch update of agent {@code agent} (actor and critic steps); samples carry {@code Â}. */
    protected abstract UpdateResult update(int agent, List<RolloutSample> minibatch);

    /** Whether different agents' buffers may be updated at the same time (their models are disjoint). */
    protected abstract boolean parallelUpdates();

    /**
     * Whether, in the agents split, every process runs every agent's minibatch updates (a critic every
     * process holds takes its steps on every agent's samples; only an actor's owner steps the actor)
     * rather than only its own agents'.
     */
    protected boolean updatesEveryAgent() {
        return false;
    }

    /** Whether logged returns are discounted ({@code G_t = r'_t + γ G_{t+1}}) or suffix sums. */
    protected abstract boolean discountedReturns();

    // ------------------------------------------------------------------ public API

    public ActorCriticConfig args() {
        return args;
    }

    public String algorithmName() {
        return algorithmName;
    }

    public int numAgents() {
        return numAgents;
    }

    @Override
    public long envStep() {
        return envStep;
    }

    /**
     * Each actor's causal LM (a shared value head, if any, is not part of it); in a ddp run with the
     * agents split, null for the agents other processes hold.
     */
    @Override
    public List<CausalLm> policies() {
        return Collections.unmodifiableList(agents);
    }

    @Override
    public Path saveCheckpoint(Path root) {
        return checkpoint.save(root, new TrainerCheckpoint.Progress(epochsDone, envStep));
    }

    /** Each agent's generate settings with the source of every value. */
    @Override
    public List<GenerationSettings.Resolved> generationSettings() {
        return Collections.unmodifiableList(generation);
    }

    /** The latest metric events logged, oldest first (see {@link MetricsLogger#history()}). */
    public List<Map<String, Double>> logHistory() {
        return logger.history();
    }

    /** Samples left out of updates because a value was not finite ({@code skip_nonfinite_samples}). */
    public long skippedSamples() {
        return skipped;
    }

    /**
     * Trains, optionally resuming from a {@code checkpoint-N} directory; {@code num_train_epochs}
     * counts the whole run. Checkpoints hold actors, critics, value heads, both optimizers, progress,
     * seeds and stateful parts; a resumed run continues exactly as the uninterrupted one.
     */
    @Override
    public void train(Path checkpointDir, int checkpointInterval, Path resumeFromCheckpoint) {
        if (resumeFromCheckpoint != null) {
            resumeFrom(resumeFromCheckpoint);
        }
        trainUntil(args.numTrainEpochs(), checkpointDir, checkpointInterval);
    }

    /**
     * Trains epochs {@code done+1 .. epochs} (a trainer that runs this one in stages, such as an
     * iterative one, passes its own total), with checkpoints as {@link #train(Path, int, Path)}.
     */
    @Override
    public void trainUntil(int epochs, Path checkpointDir, int checkpointInterval) {
        java.util.function.IntConsumer epochDone = EpochLoop.checkpointing(done -> epochsDone = done, checkpointDir,
                checkpointInterval, epochs, checkpoint, () -> envStep);
        requireOutsideModels(checkpointDir, "checkpoint directory");
        EpochLoop.run(trainDataset, evalDataset != null, args.evalInterval(), epochsDone, epochs, console,
                logger, verbose && work.isMain(), EpochLoop.Body.of(this::evaluate, (item, label) -> {
                    itemLabel = label;
                    trainItem(item);
                }, this::flushAll, epochDone));
    }

    /** Updates every agent from what its buffer still holds (end of an epoch). */
    private void flushAll() {
        List<Integer> all = new ArrayList<>();
        for (int i = 0; i < numAgents; i++) {
            if (!buffers.get(i).isEmpty()) {
                all.add(i);
            }
        }
        drain(all);
    }

    /** Restores a checkpoint written by this kind of trainer (see {@link TrainerCheckpoint#restore}). */
    @Override
    public void resumeFrom(Path checkpointPath) {
        TrainerCheckpoint.Progress p = checkpoint.restore(checkpointPath);
        epochsDone = p.epochsDone();
        envStep = p.envStep();
    }

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
        Map<Integer, double[]> perTurn = new TreeMap<>(); // turn -> [reward, return, kl, penalty, count]
        Map<String, double[]> custom = new LinkedHashMap<>(); // key -> [sum, count]
        for (int j = 0; j < n; j++) {
            itemLabel = "eval item " + j;
            List<RolloutSample> rollouts = collect(evalDataset.get(j), true);
            for (RolloutSample s : rollouts) {
                double[] acc = perTurn.computeIfAbsent(s.turnIdx(), t -> new double[5]);
                acc[0] += s.reward();
                acc[1] += s.returns();
                acc[2] += s.referenceKl();
                acc[3] += s.referenceKlPenalty();
                acc[4] += 1;
            }
            if (metricsCallback != null && work.isMain()) { // user callbacks run on rank 0 of a ddp run
                callback(rollouts).forEach((k, v) -> {
                    double[] acc = custom.computeIfAbsent(k, x -> new double[2]);
                    acc[0] += v;
                    acc[1] += 1;
                });
            }
        }
        Map<String, Double> metrics = new LinkedHashMap<>();
        perTurn.forEach((t, acc) -> {
            String p = "eval/turn_" + (t + 1) + "/";
            metrics.put(p + "reward_mean", acc[0] / acc[4]);
            metrics.put(p + "expected_return", acc[1] / acc[4]);
            metrics.put(p + "reference_kl_mean", acc[2] / acc[4]);
            metrics.put(p + "reference_kl_penalty_mean", acc[3] / acc[4]);
        });
        custom.forEach((k, acc) -> metrics.put("eval/" + k, acc[0] / acc[1]));
        logger.log(envStep, metrics);
        return metrics;
    }

    /** Saves the actors, critics and value heads in the reference's layout (reference §11). */
    @Override
    public abstract void saveModel(Path dir);

    /** Fails when {@code dir} is, or lies inside, a directory a model was loaded from. */
    protected void requireOutsideModels(Path dir, String what) {
        actorSet.requireOutside(dir, what);
    }

    @Override
    public void close() {
        executor.close();
        try {
            logger.close(); // throws when a sink could not write (after the models are freed below)
        } finally {
            if (references != null) {
                references.close();
            }
            if (actorSet != null) {
                actorSet.close();
            }
            work.close();
        }
    }

    // ------------------------------------------------------------------ rollouts

    private void trainItem(TaskItem item) {
        List<RolloutSample> rollouts = collect(item, false);
        envStep += rollouts.size() / numAgents;
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
            List<RolloutSample> buffer = buffers.get(s.agentIdx());
            buffer.add(s);
            if (buffer.size() >= args.rolloutBufferSize() && !full.contains(s.agentIdx())) {
                full.add(s.agentIdx());
            }
        }
        drain(full);
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
        int k = eval ? 1 : args.numGenerations();
        Double threshold = args.earlyTerminationThreshold();
        List<JointRollout.Scored<double[][]>> episode = rollout().rollout(List.of(rollout().start(item, itemLabel)),
                eval ? evalSeeds : seeds, k, JointRollout.Scoring.perAgent(eval ? evalRewarder : rewarder), args.numTurns(),
                rewards -> threshold != null && mean(rewards) > threshold).get(0);
        List<Turn> turns = new ArrayList<>();
        for (JointRollout.Scored<double[][]> scored : episode) {
            turns.add(withCritic(scored.turn(), scored.rewards()));
        }
        return samples(item, turns, k);
    }

    /** The rollout engine of this trainer's actors (built on first use, once every part is loaded). */
    private JointRollout rollout() {
        if (rollout == null) {
            rollout = JointRollout.of(agents, generation, formatters, promptEncoder, executor)
                    .withTransitions(transitions, args.externalPromptPassthrough()).withReferences(references).in(work);
        }
        return rollout;
    }

    private JointRollout rollout;
    /** The seeds of the evaluation under way ({@link SeedStream#evaluation()}: none of training's). */
    private SeedStream evalSeeds;

    /** What one turn produced: per agent i and generation g, responses cut at the agent's first pad id. */
    private record Turn(List<String> prompts, List<long[]> promptIds, List<List<long[]>> responses,
            List<List<String>> texts, double[][] logprobs, double[][] kls, CriticValues critic, double[][] rewards) {
    }

    /**
     * A sampled turn with the critic's old values: responses cut at the first pad id
     * ({@code Σ_t log π(y_t)} of the sampling over the same tokens), KLs 0 when shaping is off; in the
     * agents split every agent's values from its owner.
     */
    private Turn withCritic(JointRollout.Turn turn, double[][] rewards) {
        int k = turn.completions().get(0).size();
        List<List<long[]>> responses = new ArrayList<>();
        double[][] logprobs = new double[numAgents][k];
        for (int i = 0; i < numAgents; i++) {
            List<long[]> ys = new ArrayList<>();
            for (int g = 0; g < k; g++) {
                Completion c = turn.completions().get(i).get(g);
                int len = ReferenceKl.responseLength(c.tokenIds(), padIds[i]);
                ys.add(Arrays.copyOf(c.tokenIds(), len));
                double sum = 0;
                for (int j = 0; j < len; j++) {
                    sum += c.logprobs()[j];
                }
                logprobs[i][g] = sum;
            }
            responses.add(ys);
        }
        List<String> prompts = turn.state().prompts();
        List<List<String>> texts = turn.texts();
        CriticValues critic = criticValues(turn.state().turn(), prompts, turn.promptIds(), responses, texts);
        List<double[]> values = work.fromOwners(Arrays.asList(critic.values()), RankWork.DOUBLES);
        double[][] kls = turn.referenceKls() != null ? turn.referenceKls() : new double[numAgents][k];
        return new Turn(prompts, turn.promptIds(), responses, texts, logprobs, kls,
                new CriticValues(values.toArray(new double[0][]), critic.jointIds()), rewards);
    }

    /** Samples of an episode with targets {@code y_t}, returns and advantages ({@link ActorCriticLoss}). */
    private List<RolloutSample> samples(TaskItem item, List<Turn> turns, int k) {
        double beta = args.referenceKlEnabled() ? args.referenceKlCoef() : 0;
        int n = turns.size();
        RolloutSample[][][] out = new RolloutSample[n][numAgents][k];
        for (int i = 0; i < numAgents; i++) {
            for (int g = 0; g < k; g++) {
                double[] shaped = new double[n];
                double[] old = new double[n];
                for (int t = 0; t < n; t++) {
                    Turn turn = turns.get(t);
                    shaped[t] = turn.rewards[i][g] - beta * turn.kls[i][g];
                    old[t] = turn.critic.values()[i][g];
                }
                double[] y = ActorCriticLoss.tdTargets(shaped, old, args.discount());
                double[] returns = ActorCriticLoss.discountedReturns(shaped, discountedReturns() ? args.discount() : 1.0);
                for (int t = 0; t < n; t++) {
                    Turn turn = turns.get(t);
                    long[] p = turn.promptIds.get(i);
                    long[] r = turn.responses.get(i).get(g);
                    long[] full = new long[p.length + r.length];
                    System.arraycopy(p, 0, full, 0, p.length);
                    System.arraycopy(r, 0, full, p.length, r.length);
                    double a = y[t] - old[t];
                    List<long[]> joint = turn.critic.jointIds();
                    out[t][i][g] = new RolloutSample(i, turn.prompts.get(i), turn.texts.get(i).get(g), full, p.length,
                            r.length, turn.logprobs[i][g], old[t], turn.rewards[i][g], returns[t], a, a, t,
                            turn.kls[i][g], beta * turn.kls[i][g], y[t], g, joint == null ? null : joint.get(g), item);
                }
            }
        }
        List<RolloutSample> flat = new ArrayList<>();
        for (RolloutSample[][] turn : out) {
            for (RolloutSample[] agent : turn) {
                flat.addAll(Arrays.asList(agent));
            }
        }
        return flat;
    }

    private static double mean(double[][] values) {
        double sum = 0;
        int count = 0;
        for (double[] row : values) {
            for (double v : row) {
                sum += v;
                count++;
            }
        }
        return sum / Math.max(count, 1);
    }

    // ------------------------------------------------------------------ updates

    /** Per turn: sums of what an agent's drained samples logged. */
    private static final class TurnStats {
        double reward;
        double returns;
        double kl;
        double penalty;
        double policyLoss;
        double valueLoss;
        int samples;
        int minibatches;

        void put(Map<String, Double> m, String prefix, int turn) {
            String p = prefix + "turn_" + (turn + 1) + "/";
            m.put(p + "reward_mean", reward / samples);
            m.put(p + "expected_return", returns / samples);
            m.put(p + "reference_kl_mean", kl / samples);
            m.put(p + "reference_kl_penalty_mean", penalty / samples);
            m.put(p + "policy_loss", policyLoss / Math.max(minibatches, 1));
            m.put(p + "value_loss", valueLoss / Math.max(minibatches, 1));
        }
    }

    /** An agent's drain statistics by turn. */
    private static final RankWork.Codec<Map<Integer, TurnStats>> TURN_STATS = new RankWork.Codec<>() {
        @Override
        public void write(java.io.DataOutputStream out, Map<Integer, TurnStats> byTurn) throws java.io.IOException {
            out.writeInt(byTurn.size());
            for (Map.Entry<Integer, TurnStats> e : byTurn.entrySet()) {
                TurnStats st = e.getValue();
                out.writeInt(e.getKey());
                RankWork.DOUBLES.write(out, new double[] {st.reward, st.returns, st.kl, st.penalty, st.policyLoss,
                    st.valueLoss});
                out.writeInt(st.samples);
                out.writeInt(st.minibatches);
            }
        }

        @Override
        public Map<Integer, TurnStats> read(java.io.DataInputStream in) throws java.io.IOException {
            Map<Integer, TurnStats> byTurn = new TreeMap<>();
            for (int n = in.readInt(); n > 0; n--) {
                TurnStats st = new TurnStats();
                int turn = in.readInt();
                double[] v = RankWork.DOUBLES.read(in);
                st.reward = v[0];
                st.returns = v[1];
                st.kl = v[2];
                st.penalty = v[3];
                st.policyLoss = v[4];
                st.valueLoss = v[5];
                st.samples = in.readInt();
                st.minibatches = in.readInt();
                byTurn.put(turn, st);
            }
            return byTurn;
        }
    };

    /**
     * Updates the given agents from their buffers (concurrently on their own threads when the
     * subclass allows it and agents run in parallel), then logs one event: per-agent keys and their
     * mean over the agents as the aggregate keys.
     */
    private void drain(List<Integer> agentIds) {
        if (agentIds.isEmpty()) {
            return;
        }
        Map<Integer, List<RolloutSample>> taken = new TreeMap<>();
        Map<Integer, Long> shuffleSeeds = new TreeMap<>();
        for (int i : agentIds.stream().sorted().toList()) {
            taken.put(i, new ArrayList<>(buffers.get(i)));
            buffers.get(i).clear();
            shuffleSeeds.put(i, seeds.next());
        }
        List<Integer> order = new ArrayList<>(taken.keySet());
        // the agents split: each process updates its agents (and MAAC's every process its critic copy)
        List<Integer> here = updatesEveryAgent() ? order : order.stream().filter(work::ownsAgent).toList();
        Function<Integer, Map<Integer, TurnStats>> update = i -> updateAgent(i, taken.get(i), shuffleSeeds.get(i));
        List<Map<Integer, TurnStats>> computed = parallelUpdates() && executor.parallel()
                ? executor.map(here, update::apply) : here.stream().map(update).toList();
        List<Map<Integer, TurnStats>> mine = new ArrayList<>(Collections.nCopies(numAgents, null));
        for (int j = 0; j < here.size(); j++) {
            mine.set(here.get(j), computed.get(j));
        }
        List<Map<Integer, TurnStats>> byAgent = work.fromOwners(mine, TURN_STATS); // the owners' statistics
        List<Map<Integer, TurnStats>> results = order.stream().map(byAgent::get).toList();
        Map<String, Double> perAgent = new LinkedHashMap<>();
        Map<String, List<Double>> aggregate = new LinkedHashMap<>();
        for (int j = 0; j < order.size(); j++) {
            int agent = order.get(j);
            for (Map.Entry<Integer, TurnStats> e : results.get(j).entrySet()) {
                Map<String, Double> own = new LinkedHashMap<>();
                e.getValue().put(own, "", e.getKey());
                own.forEach((key, v) -> {
                    perAgent.put("agent_" + agent + "/" + key, v);
                    aggregate.computeIfAbsent(key, x -> new ArrayList<>()).add(v);
                });
            }
        }
        Map<String, Double> metrics = new LinkedHashMap<>();
        aggregate.forEach((key, vs) -> metrics.put(key, vs.stream().mapToDouble(Double::doubleValue).average().orElse(0)));
        metrics.putAll(perAgent);
        logger.logTrain(envStep, metrics);
    }

    /** One agent's buffer: per turn group, {@code Â}, a seeded shuffle, minibatch updates. */
    private Map<Integer, TurnStats> updateAgent(int agent, List<RolloutSample> buffer, long shuffleSeed) {
        Map<Integer, List<RolloutSample>> byTurn = new TreeMap<>();
        for (RolloutSample s : buffer) {
            byTurn.computeIfAbsent(s.turnIdx(), t -> new ArrayList<>()).add(s);
        }
        Random shuffle = new Random(shuffleSeed);
        Map<Integer, TurnStats> stats = new TreeMap<>();
        for (Map.Entry<Integer, List<RolloutSample>> e : byTurn.entrySet()) {
            List<RolloutSample> group = e.getValue();
            double[] targets = group.stream().mapToDouble(RolloutSample::valueTarget).toArray();
            double[] old = group.stream().mapToDouble(RolloutSample::oldValue).toArray();
            double[] a = ActorCriticLoss.advantages(targets, old, args.advantageNormalization());
            List<RolloutSample> normalized = new ArrayList<>();
            TurnStats st = new TurnStats();
            for (int j = 0; j < group.size(); j++) {
                RolloutSample s = group.get(j);
                normalized.add(s.withNormalizedAdvantage(a[j]));
                st.reward += s.reward();
                st.returns += s.returns();
                st.kl += s.referenceKl();
                st.penalty += s.referenceKlPenalty();
                st.samples++;
            }
            Collections.shuffle(normalized, shuffle);
            int mb = args.trainBatchSize();
            for (int start = 0; start < normalized.size(); start += mb) {
                UpdateResult r = update(agent, normalized.subList(start, Math.min(normalized.size(), start + mb)));
                st.policyLoss += r.policyLoss();
                st.valueLoss += r.valueLoss();
                st.minibatches++;
            }
            stats.put(e.getKey(), st);
        }
        return stats;
    }

    /**
     * The actor's step of agent {@code agent} on {@code actor_loss = (1/|B|) Σ_j −Â_j · log π_j}
     * (each completion's Σ_t log π weighted by {@code −Â_j/|B|}); returns actor_loss.
     */
    protected final double actorStep(int agent, List<RolloutSample> mb, comlrl.tensor.AdamW opt) {
        int n = mb.size();
        List<RolloutSample> mine = local(mb);
        double[] w = new double[mine.size()];
        for (int j = 0; j < w.length; j++) {
            w[j] = -mine.get(j).normalizedAdvantage() / n;
        }
        opt.zeroGrad();
        double loss = 0;
        try (comlrl.tensor.Scope s = comlrl.tensor.Scope.open()) {
            if (!mine.isEmpty()) {
                loss = comlrl.generation.Scorer.backwardWeighted(agents.get(agent).model(),
                        mine.stream().map(RolloutSample::promptIds).toList(),
                        mine.stream().map(RolloutSample::responseIds).toList(), agents.get(agent).padId(), w,
                        args.gradientCheckpointing());
            }
            loss = sumOverRanks(loss);
            requireFinite(loss, "the actor loss", mb, opt);
        }
        step(agent, "actor", opt, mb);
        return loss;
    }

    /**
     * The samples of minibatch {@code mb} this process computes: all in one process; in a ddp run,
     * those at positions {@code j ≡ rank (mod W)}. A loss over the minibatch is a sum over its samples
     * (each divided by |mb|), so each process adds its samples' gradients and the processes' sums
     * ({@link #sumOverRanks}, and the gradients in {@link #step}) are the one-process values.
     */
    protected final List<RolloutSample> local(List<RolloutSample> mb) {
        return work.splitsRows() ? Arrays.stream(work.localRows(mb.size())).mapToObj(mb::get).toList() : mb;
    }

    /** {@code value} summed over the processes of a ddp run (itself in one process). */
    protected final double sumOverRanks(double value) {
        return sumOverRanks(new double[] {value})[0];
    }

    /** Each of {@code values} summed over the processes of a ddp run. */
    protected final double[] sumOverRanks(double[] values) {
        return work.splitsRows() ? work.sum(values) : values;
    }

    /** {@code (1/n) Σ_rows perRow}: the mean over the whole minibatch of n samples when the rows are this process's share. */
    protected final comlrl.tensor.Tensor meanOverMinibatch(comlrl.tensor.Tensor perRow, int n) {
        return work.splitsRows() ? perRow.sum().div(n) : perRow.mean();
    }

    /** Fails, dropping the gradients, when a minibatch's loss is not finite. */
    protected static void requireFinite(double loss, String what, List<RolloutSample> mb, comlrl.tensor.AdamW opt) {
        if (!Double.isFinite(loss)) {
            opt.zeroGrad();
            throw nonFinite(what + " is " + loss + " for " + describe(mb));
        }
    }

    /**
     * One optimizer step after its gradients were checked to be finite (the observer of the tests sees
     * them first); the gradients are freed afterwards.
     */
    protected final void step(int agent, String which, comlrl.tensor.AdamW opt, List<RolloutSample> mb) {
        if (work.splitsRows()) {
            work.sumGradients(opt.parameters()); // the whole minibatch's gradient on every process
        }
        if (!opt.gradientsFinite()) {
            opt.zeroGrad();
            throw nonFinite("the " + which + " gradient of agent " + agent + " is not finite for " + describe(mb));
        }
        if (observer != null) {
            observer.beforeStep(agent, which, opt.parameters());
        }
        work.step(opt); // (a ZeRO shard: its parameters' updates, sent to the other processes)
        opt.zeroGrad();
    }

    /** Sees the gradients just before each optimizer step (tests). */
    interface UpdateObserver {
        void beforeStep(int agent, String which, List<comlrl.tensor.Tensor> parameters);
    }

    /** The error that stops training when a loss or gradient is not finite, before any step uses it. */
    protected static IllegalStateException nonFinite(String detail) {
        return new IllegalStateException("Training stopped: " + detail + ". No optimizer step used it, so the weights "
                + "and the last checkpoint are intact; check the rewards (and their scale), the learning rates and "
                + "value_loss_coef.");
    }

    /** A description of a minibatch for messages. */
    protected static String describe(List<RolloutSample> minibatch) {
        RolloutSample s = minibatch.get(0);
        return minibatch.size() + " samples of agent " + s.agentIdx() + ", turn " + (s.turnIdx() + 1);
    }

    /** The position of each sample's critic value: the last prompt token (V) or the last token (Q). */
    protected static long[] valuePositions(List<RolloutSample> samples, long rowLength, boolean q, boolean withResponses) {
        long[] pos = new long[samples.size()];
        for (int j = 0; j < pos.length; j++) {
            int len = withResponses ? samples.get(j).responseLen() : 0;
            pos[j] = q ? rowLength - 1 : rowLength - 1 - len;
        }
        return pos;
    }

    // ------------------------------------------------------------------ builder

    /**
     * Builds an IAC or MAAC trainer; names follow the reference's constructor keywords
     * ({@code agent_model}, {@code agents}, {@code critic_model}, {@code critics}, {@code tokenizer},
     * {@code reward_func}, {@code reward_processor}, {@code formatters}, {@code args},
     * {@code train_dataset}, {@code eval_dataset}, {@code model_config}, {@code wandb_config},
     * {@code metrics_callback}, {@code external_transition}).
     */
    public static final class Builder<T extends ActorCriticTrainerBase> extends TrainerBuilder<Builder<T>> {
        private final Function<Builder<T>, T> factory;
        Object agentModel;
        Object criticModel;
        List<?> critics;
        List<Tokenizer> tokenizers;
        ExternalTransition externalTransition;
        MetricsCallback metricsCallback;
        ActorCriticConfig args;
        Integer criticValueHeadHiddenDim;
        /** Sees gradients before each optimizer step (tests). */
        UpdateObserver observer;

        Builder(Function<Builder<T>, T> factory) {
            this.factory = factory;
        }

        @Override
        protected Builder<T> self() {
            return this;
        }

        /** Homogeneous actors: one model id or directory (a loaded {@link CausalLm} for one agent). */
        public Builder<T> agentModel(Object agentModel) {
            this.agentModel = agentModel;
            return this;
        }

        /** The critic: a model id or directory (IAC: one copy per agent; MAAC: the shared critic). */
        public Builder<T> criticModel(Object criticModel) {
            this.criticModel = criticModel;
            return this;
        }

        /** Critics: IAC one per agent; MAAC a one-element list. */
        public Builder<T> critics(List<?> critics) {
            this.critics = critics;
            return this;
        }

        /** One tokenizer for every agent (replacing the agents' own). */
        public Builder<T> tokenizer(Tokenizer tokenizer) {
            this.tokenizers = tokenizer == null ? null : List.of(tokenizer);
            return this;
        }

        /** One tokenizer per agent. */
        public Builder<T> tokenizers(List<Tokenizer> tokenizers) {
            this.tokenizers = tokenizers;
            return this;
        }

        public Builder<T> externalTransition(ExternalTransition externalTransition) {
            this.externalTransition = externalTransition;
            return this;
        }

        /** {@code metrics_callback(rollouts)}: logged at rollout time in training, averaged under {@code eval/}. */
        public Builder<T> metricsCallback(MetricsCallback metricsCallback) {
            this.metricsCallback = metricsCallback;
            return this;
        }

        public Builder<T> args(ActorCriticConfig args) {
            this.args = args;
            return this;
        }

        /**
         * The reference's {@code model_config}: {@code torch_dtype}/{@code dtype} (top level or in
         * {@code model_kwargs}), and MAAC's {@code critic_value_head_hidden_dim}.
         */
        public Builder<T> modelConfig(Map<String, ?> modelConfig) {
            if (modelConfig == null) {
                return this;
            }
            Object dt = modelConfig.get("torch_dtype") != null ? modelConfig.get("torch_dtype") : modelConfig.get("dtype");
            if (dt == null && modelConfig.get("model_kwargs") instanceof Map<?, ?> kw) {
                dt = kw.get("torch_dtype") != null ? kw.get("torch_dtype") : kw.get("dtype");
            }
            if (dt != null) {
                dtype(DType.fromTorchName(String.valueOf(dt).replace("torch.", "")));
            }
            Object hd = modelConfig.get("critic_value_head_hidden_dim");
            if (hd instanceof Number num) {
                this.criticValueHeadHiddenDim = num.intValue();
            } else if (hd != null) {
                throw new IllegalArgumentException("model_config.critic_value_head_hidden_dim must be an integer, got " + hd);
            }
            return this;
        }

        Builder<T> observer(UpdateObserver observer) {
            this.observer = observer;
            return this;
        }

        public T build() {
            if (args == null) {
                throw new IllegalArgumentException("args must be provided (an IACConfig or MAACConfig)");
            }
            return factory.apply(this);
        }
    }

    /** Each actor's model (null for the agents other processes hold). */
    protected final List<DecoderLm> actorModels() {
        return modelsOf(agents);
    }

    /** Each of {@code lms}' models, null for a null. */
    protected static List<DecoderLm> modelsOf(List<CausalLm> lms) {
        return lms.stream().map(a -> a == null ? null : a.model()).toList();
    }
}
