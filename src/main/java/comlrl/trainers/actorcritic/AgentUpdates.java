package comlrl.trainers.actorcritic;

import comlrl.trainers.common.HeldAgents;
import comlrl.generation.CausalLm;
import comlrl.model.ValueHead;
import comlrl.tensor.AdamW;
import comlrl.tensor.Tensor;
import comlrl.trainers.common.AgentExecutor;
import comlrl.trainers.common.RankWork;
import comlrl.trainers.common.SeedStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * Each agent's buffer of samples and its updates (reference §5.7). An agent whose buffer holds
 * {@code rollout_buffer_size} samples (or any, at the end of an epoch) is drained: per turn index t
 * of its samples (an update group),
 * <pre>
 *   A_j = y_j − V_old_j,   Â = (A − mean A) / max(std_pop A, 1e-6)     ({@link ActorCriticLoss#advantages})
 *   shuffle (a seeded Random per drained agent), minibatches B of train_batch_size:
 *       one actor and one critic step each ({@link Critic#update}: actor_loss, value_loss)
 *   explained_variance = 1 − Var[y − V_old] / Var[y]                   ({@link ActorCriticLoss#explainedVariance})
 * </pre>
 * Agents drained together are updated on their own threads when their models are disjoint and the
 * agents run in parallel; their metrics are logged as one event ({@link TurnMetrics}).
 */
final class AgentUpdates {
    private final ActorCriticConfig args;
    private final Critic critic;
    private final HeldAgents<AdamW> actorOptimizers;
    private final AgentExecutor executor;
    private final RankWork work;
    private final MinibatchSteps steps;
    private final List<List<RolloutSample>> buffers = new ArrayList<>();

    /**
     * Per held agent, the actor's optimizer (AdamW, weight decay 0.01) over its model's parameters and
     * those of the value head on it, if any.
     */
    static HeldAgents<AdamW> actorOptimizers(HeldAgents<CausalLm> agents, Critic critic, RankWork work,
            double learningRate) {
        return agents.open((i, agent) -> {
            ValueHead head = critic.headOnActor(i);
            List<Tensor> params = new ArrayList<>(agent.model().parameters());
            params.addAll(head == null ? List.of() : head.parameters());
            return work.adamW(params, learningRate, 0.01);
        });
    }

    AgentUpdates(ActorCriticConfig args, Critic critic, HeldAgents<AdamW> actorOptimizers, AgentExecutor executor,
            RankWork work, MinibatchSteps steps) {
        this.args = args;
        this.critic = critic;
        this.actorOptimizers = actorOptimizers;
        this.executor = executor;
        this.work = work;
        this.steps = steps;
        for (int i = 0; i < args.numAgents(); i++) {
            buffers.add(new ArrayList<>());
        }
    }

    /** Buffers {@code sample}; true when its agent's buffer now holds {@code rollout_buffer_size} samples or more. */
    boolean add(RolloutSample sample) {
        List<RolloutSample> buffer = buffers.get(sample.agentIdx());
        buffer.add(sample);
        return buffer.size() >= args.rolloutBufferSize();
    }

    /** The agents whose buffers hold samples (to drain at the end of an epoch). */
    List<Integer> nonEmpty() {
        List<Integer> agents = new ArrayList<>();
        for (int i = 0; i < buffers.size(); i++) {
            if (!buffers.get(i).isEmpty()) {
                agents.add(i);
            }
        }
        return agents;
    }

    /**
     * Updates {@code agentIds} from their buffers (one shuffle seed each from {@code seeds}, in agent
     * order) and returns the event to log: per-agent keys {@code agent_i/turn_t/...} and, under
     * {@code turn_t/...}, their mean over the agents; for a critic every agent shares, the aggregate
     * explained variance is that of all the drained samples of the turn (the critic's whole batch).
     */
    Map<String, Double> drain(List<Integer> agentIds, SeedStream seeds) {
        Map<Integer, List<RolloutSample>> taken = new TreeMap<>();
        Map<Integer, Long> shuffleSeeds = new TreeMap<>();
        for (int i : agentIds.stream().sorted().toList()) {
            taken.put(i, new ArrayList<>(buffers.get(i)));
            buffers.get(i).clear();
            shuffleSeeds.put(i, seeds.next());
        }
        List<Integer> order = new ArrayList<>(taken.keySet());
        // the agents split: each process updates its agents (and a shared critic's every process every agent)
        List<Integer> here = critic.sharedByAgents() ? order : order.stream().filter(work::ownsAgent).toList();
        Function<Integer, Map<Integer, TurnMetrics>> update = i -> updateAgent(i, taken.get(i), shuffleSeeds.get(i));
        List<Map<Integer, TurnMetrics>> computed = !critic.sharedByAgents() && executor.parallel()
                ? executor.map(here, update::apply) : here.stream().map(update).toList();
        Map<Integer, Map<Integer, TurnMetrics>> done = new TreeMap<>();
        for (int j = 0; j < here.size(); j++) {
            done.put(here.get(j), computed.get(j));
        }
        List<Map<Integer, TurnMetrics>> byAgent = actorOptimizers // each agent's metrics from its owner
                .mapIndexed((i, opt) -> done.getOrDefault(i, Map.of())).fromOwners(TurnMetrics.BY_TURN);
        Map<String, Double> perAgent = new LinkedHashMap<>();
        Map<String, List<Double>> aggregate = new LinkedHashMap<>();
        for (int agent : order) {
            byAgent.get(agent).forEach((turn, m) -> {
                Map<String, Double> own = new LinkedHashMap<>();
                m.putInto(own, "", turn);
                own.forEach((key, v) -> {
                    perAgent.put("agent_" + agent + "/" + key, v);
                    aggregate.computeIfAbsent(key, x -> new ArrayList<>()).add(v);
                });
            });
        }
        Map<String, Double> metrics = new LinkedHashMap<>();
        aggregate.forEach((key, vs) -> metrics.put(key, vs.stream().mapToDouble(Double::doubleValue).average().orElse(0)));
        if (critic.sharedByAgents()) {
            metrics.keySet().removeIf(key -> key.endsWith("/explained_variance"));
            Map<Integer, List<RolloutSample>> byTurn = byTurn(taken.values().stream().flatMap(List::stream).toList());
            byTurn.forEach((turn, group) -> {
                double ev = explainedVariance(group);
                if (!Double.isNaN(ev)) {
                    metrics.put("turn_" + (turn + 1) + "/explained_variance", ev);
                }
            });
        }
        metrics.putAll(perAgent);
        return metrics;
    }

    /** One agent's buffer: per turn group, {@code Â}, a seeded shuffle, minibatch updates. */
    private Map<Integer, TurnMetrics> updateAgent(int agent, List<RolloutSample> buffer, long shuffleSeed) {
        Random shuffle = new Random(shuffleSeed);
        Map<Integer, TurnMetrics> metrics = new TreeMap<>();
        byTurn(buffer).forEach((turn, group) -> {
            double[] targets = group.stream().mapToDouble(RolloutSample::valueTarget).toArray();
            double[] old = group.stream().mapToDouble(RolloutSample::oldValue).toArray();
            double[] a = ActorCriticLoss.advantages(targets, old, args.advantageNormalization());
            List<RolloutSample> normalized = new ArrayList<>();
            for (int j = 0; j < group.size(); j++) {
                normalized.add(group.get(j).withNormalizedAdvantage(a[j]));
            }
            Collections.shuffle(normalized, shuffle);
            double policyLoss = 0;
            double valueLoss = 0;
            int minibatches = 0;
            for (int start = 0; start < normalized.size(); start += args.trainBatchSize()) {
                List<RolloutSample> mb = normalized.subList(start, Math.min(normalized.size(), start + args.trainBatchSize()));
                steps.seen(agent, mb);
                Critic.Losses losses = critic.update(agent, mb, actorOptimizers);
                policyLoss += losses.policyLoss();
                valueLoss += losses.valueLoss();
                minibatches++;
            }
            metrics.put(turn, TurnMetrics.ofUpdate(group, policyLoss / minibatches, valueLoss / minibatches,
                    explainedVariance(group)));
        });
        return metrics;
    }

    private static double explainedVariance(List<RolloutSample> samples) {
        return ActorCriticLoss.explainedVariance(samples.stream().mapToDouble(RolloutSample::valueTarget).toArray(),
                samples.stream().mapToDouble(RolloutSample::oldValue).toArray());
    }

    /** {@code samples} by turn index, in their order. */
    private static Map<Integer, List<RolloutSample>> byTurn(List<RolloutSample> samples) {
        Map<Integer, List<RolloutSample>> byTurn = new TreeMap<>();
        for (RolloutSample s : samples) {
            byTurn.computeIfAbsent(s.turnIdx(), t -> new ArrayList<>()).add(s);
        }
        return byTurn;
    }
}
