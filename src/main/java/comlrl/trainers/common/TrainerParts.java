package comlrl.trainers.common;

import comlrl.distributed.AgentExecutor;
import comlrl.distributed.HeldAgents;
import comlrl.distributed.RankWork;
import comlrl.generation.CausalLm;
import comlrl.generation.GenerationSettings;
import comlrl.logging.MetricsLogger;
import comlrl.tensor.AdamW;
import comlrl.tensor.Device;
import comlrl.utils.ParallelTraining;
import comlrl.utils.TrainerConfig;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

/**
 * What every trainer of agents assembles alike once its process joined the run ({@link RankWork}): the
 * actors ({@link AgentSet#load}), the executor of per-agent work, each agent's generate settings,
 * the frozen references when asked for, and the check that {@code output_dir} lies outside every model.
 * The trainer adds its own parts ({@link #own}) and its logger ({@link #openLogger}). All is freed in
 * {@link #close()}; a trainer constructor failing after these parts exist calls {@link #closeAfter}.
 */
public final class TrainerParts implements AutoCloseable {
    /**
     * Where and how the actors load: {@code sources} per agent (a model id or directory, or a loaded model),
     * {@code referenceDevices} null for no references, {@code args} the config the generate settings
     * resolve against, {@code generations} the samples each agent draws per prompt (K).
     */
    public record Load(List<Object> sources, List<Device> devices, List<Device> referenceDevices, long seed,
            ParallelTraining parallel, TrainerConfig args, int generations) {
    }

    public final TrainerSettings settings;
    public final RankWork work;
    public final AgentSet actors;
    /** The agents this process holds (all but in the agents split), with the tokenizers they use. */
    public final HeldAgents<CausalLm> agents;
    public final AgentExecutor executor;
    /** Per agent: the generate settings of rollouts, resolved against the agent's generation config. */
    public final HeldAgents<GenerationSettings.Resolved> generation;
    /** Frozen copies of the agents as loaded, or null when none were asked for. */
    public final ReferencePolicy references;
    private final List<Object> sources;
    private MetricsLogger logger;
    private final Deque<AutoCloseable> frees = new ArrayDeque<>(); // what {@link #own} registered, newest first
    private boolean closed;

    /**
     * Loads the actors of {@code load} ({@code tokenizers} giving the agents the tokenizers they use), then
     * the rest; frees what it loaded, and leaves the processes of {@code work}, when any of it fails.
     */
    public TrainerParts(TrainerSettings settings, RankWork work, Load load,
            UnaryOperator<HeldAgents<CausalLm>> tokenizers) {
        this.settings = settings;
        this.work = work;
        this.sources = load.sources();
        try { // A of fresh adapters from the seed; only the agents this process holds
            this.actors = AgentSet.load("agent", load.sources(), settings.get(TrainerSettings.DTYPE), load.devices(),
                    settings.loraAgents(), load.seed(), null, work::ownsAgent);
        } catch (RuntimeException | Error e) {
            work.close();
            throw e;
        }
        this.executor = AgentExecutor.create(load.sources().size(), AgentSet.runsInParallel(load.parallel(),
                load.devices()));
        try {
            this.agents = tokenizers.apply(actors.held(work));
            this.generation = agents.mapIndexed((i, a) -> AgentGeneration.resolve(i, a, load.args(),
                    load.generations()));
            this.references = load.referenceDevices() == null ? null : own(new ReferencePolicy(
                    agents.map(CausalLm::model), load.referenceDevices()), ReferencePolicy::close);
            actors.requireOutside(settings.get(TrainerSettings.OUTPUT_DIR), "output_dir");
        } catch (RuntimeException | Error e) {
            closeAfter(e);
            throw e;
        }
    }

    /**
     * Checks the task data, joins the run's processes ({@link RankWork#forRun}), places one agent per source
     * ({@code agent_devices}) and loads them ({@code references} gives the reference devices from the process
     * joined and the agents' devices, null for none; {@code generations} as {@link Load} says). A failure after
     * the join leaves the processes.
     */
    public static TrainerParts join(TrainerSettings settings, TrainerConfig args, List<Object> sources, int generations,
            BiFunction<RankWork, List<Device>, List<Device>> references) {
        settings.requireTaskData();
        int count = sources.size();
        RankWork work = RankWork.forRun(args.parallelTraining(), args.ddpSplit(), count,
                settings.get(TrainerSettings.DISTRIBUTED));
        Load load;
        try { // a bad agent_devices or reference_devices leaves the processes joined above
            List<Device> devices = AgentSet.placement(args.agentDevices(), count, "agent_devices",
                    args.parallelTraining(), work.device());
            load = new Load(sources, devices, references.apply(work, devices), args.seed(), args.parallelTraining(),
                    args, generations);
        } catch (RuntimeException | Error e) {
            work.close();
            throw e;
        }
        return new TrainerParts(settings, work, load, UnaryOperator.identity());
    }

    /** Per held agent, an AdamW (weight decay 0.01) over its model's parameters, freed with these parts. */
    public HeldAgents<AdamW> adamW(double learningRate) {
        return own(agents.open((i, a) -> work.adamW(a.model().parameters(), learningRate, 0.01)),
                opts -> opts.values().forEach(AdamW::close));
    }

    /** Registers {@code resource}, freed by {@code free} when these parts close (newest first); returns it. */
    public <T> T own(T resource, Consumer<? super T> free) {
        frees.push(() -> free.accept(resource));
        return resource;
    }

    /** Takes {@code opened} as the trainer's logger (closed with these parts), recording the generate settings. */
    public MetricsLogger openLogger(MetricsLogger opened) {
        this.logger = opened;
        opened.recordGeneration(generation.asList());
        return opened;
    }

    /** A tracker run's config ({@link TrainerBuilder#trackedConfig}), loaded agents named by their source. */
    public Map<String, Object> trackedConfig(Map<String, Object> args) {
        List<Object> described = new ArrayList<>(sources);
        agents.indices().forEach(i -> described.set(i, agents.get(i)));
        return TrainerBuilder.trackedConfig(args, described);
    }

    /** The epoch loop over {@code train_dataset}, logging into {@link #openLogger}'s; a progress bar if verbose. */
    public EpochProgress.Loop loop(int evalInterval) {
        return new EpochProgress.Loop(settings.get(TrainerSettings.TRAIN_DATASET),
                settings.get(TrainerSettings.EVAL_DATASET) != null, evalInterval, settings.console(), logger,
                settings.get(TrainerSettings.VERBOSE) && work.isMain());
    }

    /** Frees everything, as {@link #close()}, after {@code failure} (what freeing throws is suppressed in it). */
    public void closeAfter(Throwable failure) {
        free(failure, this);
    }

    /**
     * Stops the executor, closes the logger (which throws when a sink could not write, after the models
     * are freed), frees what was owned, newest first, then the actors and the process group ({@link #free}).
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        free(null, Stream.of(Stream.<AutoCloseable>of(executor, logger), frees.stream(), Stream.of(actors, work))
                .flatMap(s -> s).toArray(AutoCloseable[]::new)); // the owned newest first
    }

    /**
     * An agent's own generation (a rollout's, a comparator's); beside other agents that this process samples
     * ({@code several}), its packed decoding copy ({@link comlrl.model.DecoderLm#decodeWeights}, about its
     * weights' size for a full model) is freed after it. Kept, the N agents' copies would all be held at
     * once, on top of their weights and optimizer states: MAGRPO with 3 float32 agents of the Qwen2.5-0.5B
     * shape peaked at 22.7 GB so, and was killed for memory at 24.4 GB without it (docs/PERFORMANCE.md).
     * The price: the agent's next generation packs its weights again where it could have reused them
     * (evaluation, later turns, buffered items, frozen comparators); packing costs about 13 decoding steps'
     * saving, and generations that may run fewer than 24 steps do not pack. A LoRA agent holds no copy
     * (its shared base's stays).
     */
    public static <T> T ownGeneration(CausalLm agent, boolean several, java.util.function.Function<CausalLm, T> generate) {
        T out = generate.apply(agent);
        if (several) {
            agent.model().releaseDecodeWeights();
        }
        return out;
    }

    /**
     * Frees the packed decoding copies ({@link comlrl.model.DecoderLm#decodeWeights}) of the agents in
     * {@code updated} that this process holds, before the first of their updates begins. A full agent's copy is
     * about its weights' size (2 GB at the Qwen2.5-0.5B shape in float32) and stale once the agent is updated;
     * an agent's own backward frees only its own, so without this the agents updated later would keep theirs
     * through the earlier ones' updates (N − 1 copies more at the peak). A rollout of several agents frees
     * each one's copy itself ({@link #ownGeneration}); this frees those made elsewhere (a reward that
     * samples from the agents). LoRA agents hold none (their frozen base's copy serves the next
     * rollout).
     */
    public static void releaseDecodeWeights(HeldAgents<? extends CausalLm> agents, java.util.Collection<Integer> updated) {
        for (int i : updated) {
            if (agents.indices().contains(i)) {
                agents.get(i).model().releaseDecodeWeights();
            }
        }
    }

    /**
     * One step of {@code opt} once its gradients (summed over the processes of a ddp run that splits the rows)
     * are finite, {@code beforeStep} (the tests' observer, or null) seeing them first; the gradients are zeroed
     * after it, or instead of it when they are not finite: then nothing stepped and this returns false.
     */
    public static boolean stepIfFinite(RankWork work, AdamW opt, Runnable beforeStep) {
        if (work.splitsRows()) {
            work.sumGradients(opt.parameters()); // the whole minibatch's gradient on every process
        }
        if (!opt.gradientsFinite()) {
            opt.zeroGrad();
            return false;
        }
        if (beforeStep != null) {
            beforeStep.run();
        }
        work.step(opt); // (a ZeRO shard: its parameters' updates, sent to the other processes)
        opt.zeroGrad(); // free the gradients now: the next agent's step does not hold them too
        return true;
    }

    /**
     * Frees {@code resources} in order (a null, never made, is passed over), each even when an earlier
     * one's freeing throws. What freeing throws is added to {@code failure} as suppressed; without a
     * failure, the first thing thrown is rethrown once all are freed, the later ones suppressed in it.
     */
    public static void free(Throwable failure, AutoCloseable... resources) {
        Throwable first = failure;
        for (AutoCloseable resource : resources) {
            try {
                if (resource != null) {
                    resource.close();
                }
            } catch (Exception | Error e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (failure == null && first instanceof Error e) {
            throw e;
        } else if (failure == null && first != null) {
            throw first instanceof RuntimeException e ? e : new IllegalStateException(first.getMessage(), first);
        }
    }
}
