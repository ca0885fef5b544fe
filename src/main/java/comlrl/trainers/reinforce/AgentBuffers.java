package comlrl.trainers.reinforce;

import comlrl.distributed.Codec;
import comlrl.distributed.Codecs;
import comlrl.distributed.AgentExecutor;
import comlrl.distributed.HeldAgents;
import comlrl.generation.SeedStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The agents' rollout buffers and their drains into updates. A buffer holding {@code rollout_buffer_size}
 * samples (or any at an epoch's end) is drained: per turn, its samples shuffled (with the drain's seed
 * from the run's {@link SeedStream}, drawn when the buffer is emptied) and cut into minibatches of
 * {@code train_batch_size}, each one optimizer step ({@link MinibatchStep}).
 *
 * <p>With {@code num_iterations} μ &gt; 1 a drain makes μ passes over the same minibatches in the same
 * order (pass 1 steps every minibatch of every turn, then pass 2, ...), as TRL reuses one generation
 * batch μ times. {@link #add} records log π_old of the held agents' samples before it drains anything,
 * so every sample is scored by the weights that sampled it, also one that waits in the buffer across
 * an update of its agent.
 *
 * <p>Different agents' drains run concurrently in "mp" mode; each agent's in order. In the agents split
 * of a ddp run every process receives every agent's stats, in agent order, so all log the same events.
 */
final class AgentBuffers {
    /** One optimizer step of agent {@code agent} on a minibatch, its samples' stats added to {@code stats}. */
    interface MinibatchStep {
        /** {@code oldLogprobs}: per sample, log π_old per completion and token (μ &gt; 1), or null (μ = 1). */
        void step(int agent, List<NodeSample> minibatch, List<float[][]> oldLogprobs, TurnStats stats);
    }

    /** log π_old of sample {@code s}'s completions, per token, under agent {@code agent}'s current weights. */
    interface BehaviourLogprobs {
        float[][] of(int agent, NodeSample s);
    }

    private final List<List<NodeSample>> buffers = new ArrayList<>();
    private final int bufferSize;
    private final int batchSize;
    private final SeedStream seeds;
    private final AgentExecutor executor;
    private final HeldAgents<?> agents;
    private final MinibatchStep step;
    /** Runs with the agents a set of drains updates, before the first of their updates. */
    private final Consumer<Set<Integer>> beforeUpdates;
    private final UpdateMetrics metrics;
    /** μ, the passes of each drain over its minibatches. */
    private final int passes;
    /** null when μ = 1. */
    private final BehaviourLogprobs behaviour;
    /** log π_old of the held agents' buffered samples (μ &gt; 1), by sample identity. */
    private final Map<NodeSample, float[][]> oldLogprobs = new IdentityHashMap<>();

    /**
     * Drains the buffers of the {@code agents} this process holds; {@code behaviour} is required when μ &gt; 1;
     * {@code beforeUpdates} sees the agents of each set of drains before any of them is updated.
     */
    AgentBuffers(HeldAgents<?> agents, int bufferSize, int batchSize, SeedStream seeds, AgentExecutor executor,
            MinibatchStep step, Consumer<Set<Integer>> beforeUpdates, UpdateMetrics metrics, int passes,
            BehaviourLogprobs behaviour) {
        if (passes < 1 || (passes > 1 && behaviour == null)) {
            throw new IllegalArgumentException(passes + " passes" + (behaviour == null ? " without old log-probabilities" : ""));
        }
        this.passes = passes;
        this.behaviour = passes > 1 ? behaviour : null;
        this.agents = agents;
        this.beforeUpdates = beforeUpdates;
        for (int i = 0; i < agents.size(); i++) {
            buffers.add(new ArrayList<>());
        }
        this.bufferSize = bufferSize;
        this.batchSize = batchSize;
        this.seeds = seeds;
        this.executor = executor;
        this.step = step;
        this.metrics = metrics;
    }

    /** Buffers {@code samples} in order, draining each agent's buffer as it fills; whether any buffer was drained. */
    boolean add(List<NodeSample> samples) {
        recordBehaviour(samples);
        List<Drain> drains = new ArrayList<>();
        for (NodeSample s : samples) {
            buffers.get(s.agent()).add(s);
            if (buffers.get(s.agent()).size() >= bufferSize) {
                drains.add(takeDrain(s.agent()));
            }
        }
        runDrains(drains);
        return !drains.isEmpty();
    }

    /** μ &gt; 1: log π_old of the held agents' samples under the weights that sampled them. */
    private void recordBehaviour(List<NodeSample> samples) {
        if (behaviour == null) {
            return;
        }
        agents.mapIndexed(executor, (i, agent) -> {
            Map<NodeSample, float[][]> out = new IdentityHashMap<>();
            for (NodeSample s : samples) {
                if (s.agent() == i) {
                    out.put(s, behaviour.of(i, s));
                }
            }
            return out;
        }).values().forEach(oldLogprobs::putAll);
    }

    /** Drains what every agent's buffer still holds (end of an epoch). */
    void drainAll() {
        runDrains(IntStream.range(0, buffers.size()).filter(i -> !buffers.get(i).isEmpty()).mapToObj(this::takeDrain)
                .toList());
    }

    /** One buffer drain of one agent: its samples and the seed of its minibatch shuffle. */
    private record Drain(int agent, List<NodeSample> samples, long shuffleSeed) {
    }

    /** Per turn: the stats of the drain's samples. */
    private record DrainResult(int agent, Map<Integer, TurnStats> stats, long maxEnvStep) {
    }

    private static final Codec<DrainResult> DRAIN_RESULT = Codecs.fields(Codecs.INT, DrainResult::agent,
            Codecs.mapOf(Codecs.INT, TurnStats.CODEC), DrainResult::stats, Codecs.LONG, DrainResult::maxEnvStep,
            DrainResult::new);

    /** Empties agent {@code agent}'s buffer into a drain (seeds drawn here, in sample order). */
    private Drain takeDrain(int agent) {
        List<NodeSample> buffer = buffers.get(agent);
        Drain d = new Drain(agent, new ArrayList<>(buffer), seeds.next());
        buffer.clear();
        return d;
    }

    /** Runs drains, then records their stats in agent order. */
    private void runDrains(List<Drain> drains) {
        if (drains.isEmpty()) {
            return;
        }
        Map<Integer, List<Drain>> byAgent = drains.stream().collect(Collectors.groupingBy(Drain::agent));
        beforeUpdates.accept(Set.copyOf(byAgent.keySet()));
        agents.mapIndexed(executor, (i, agent) -> byAgent.getOrDefault(i, List.of()).stream().map(this::drain).toList())
                .fromOwners(Codecs.listOf(DRAIN_RESULT)) // the agents split: every agent's stats from its owner
                .forEach(results -> results.forEach(r -> metrics.record(r.agent(), r.stats(), r.maxEnvStep())));
        drains.forEach(d -> d.samples().forEach(oldLogprobs::remove));
    }

    /** One minibatch of a drain and the stats of its turn. */
    private record Minibatch(List<NodeSample> samples, TurnStats stats) {
    }

    /** Updates the drain's agent: per turn, its samples shuffled and cut into minibatches; then μ passes over them. */
    private DrainResult drain(Drain d) {
        Map<Integer, List<NodeSample>> byTurn = d.samples().stream()
                .collect(Collectors.groupingBy(NodeSample::turn, TreeMap::new, Collectors.toList()));
        Random shuffle = new Random(d.shuffleSeed());
        Map<Integer, TurnStats> stats = new TreeMap<>();
        List<Minibatch> minibatches = new ArrayList<>();
        long maxStep = 0;
        for (Map.Entry<Integer, List<NodeSample>> e : byTurn.entrySet()) {
            List<NodeSample> group = new ArrayList<>(e.getValue());
            Collections.shuffle(group, shuffle);
            TurnStats st = new TurnStats();
            for (int start = 0; start < group.size(); start += batchSize) {
                minibatches.add(new Minibatch(group.subList(start, Math.min(group.size(), start + batchSize)), st));
            }
            stats.put(e.getKey(), st);
            maxStep = Math.max(maxStep, group.stream().mapToLong(NodeSample::envStep).max().orElse(0));
        }
        for (int pass = 0; pass < passes; pass++) {
            for (Minibatch mb : minibatches) {
                step.step(d.agent(), mb.samples(), behaviour == null ? null
                        : mb.samples().stream().map(oldLogprobs::get).toList(), mb.stats());
            }
        }
        return new DrainResult(d.agent(), stats, maxStep);
    }
}
