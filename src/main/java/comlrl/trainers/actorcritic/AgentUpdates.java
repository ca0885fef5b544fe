package comlrl.trainers.actorcritic;

import comlrl.distributed.AgentExecutor;
import comlrl.distributed.HeldAgents;
import comlrl.generation.SeedStream;
import comlrl.trainers.common.TrainerParts;
import comlrl.tensor.AdamW;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.IntStream;

/**
 * Each agent's buffer of samples and its updates (reference §5.7). An agent whose buffer holds
 * {@code rollout_buffer_size} samples (or any, at the end of an epoch) is drained: per turn index t
 * of its samples (an update group),
 * <pre>
 *   A_j = y_j − V_old_j, normalised to Â                       ({@link ActorCriticLoss#advantages})
 *   shuffle (a seeded Random per drained agent), minibatches B of train_batch_size:
 *       one actor and one critic step each                     ({@link Critic#update})
 *   explained_variance of the group                            ({@link ActorCriticLoss#explainedVariance})
 * </pre>
 * Agents drained together are updated on their own threads when their models are disjoint and the
 * agents run in parallel; their metrics ({@link TurnMetrics}) are logged as one event.
 */
final class AgentUpdates {
    private final ActorCriticConfig args;
    private final Critic critic;
    private final HeldAgents<AdamW> actorOptimizers;
    /** The actors' run: its executor, share of the processes and minibatch steps. */
    private final Critic.Actors actors;
    private final List<List<RolloutSample>> buffers = new ArrayList<>();

    AgentUpdates(ActorCriticConfig args, Critic critic, HeldAgents<AdamW> actorOptimizers, Critic.Actors actors) {
        this.args = args;
        this.critic = critic;
        this.actorOptimizers = actorOptimizers;
        this.actors = actors;
        IntStream.range(0, args.numAgents()).forEach(i -> buffers.add(new ArrayList<>()));
    }

    /** Buffers {@code sample}; true when its agent's buffer now holds {@code rollout_buffer_size} samples or more. */
    boolean add(RolloutSample sample) {
        List<RolloutSample> buffer = buffers.get(sample.agentIdx());
        buffer.add(sample);
        return buffer.size() >= args.rolloutBufferSize();
    }

    /** The agents whose buffers hold samples (to drain at the end of an epoch). */
    List<Integer> nonEmpty() {
        return IntStream.range(0, buffers.size()).filter(i -> !buffers.get(i).isEmpty()).boxed().toList();
    }

    /**
     * Updates {@code agentIds} (one shuffle seed each, in agent order) and returns the event to log:
     * {@code agent_i/turn_t/...} and their mean over the agents under {@code turn_t/...}; for a shared
     * critic, {@code turn_t/explained_variance} is over all the drained samples of the turn.
     */
    Map<String, Double> drain(List<Integer> agentIds, SeedStream seeds) {
        Map<Integer, List<RolloutSample>> taken = new TreeMap<>();
        Map<Integer, Long> shuffleSeeds = new TreeMap<>();
        for (int i : agentIds.stream().sorted().toList()) {
            taken.put(i, new ArrayList<>(buffers.get(i)));
            buffers.get(i).clear();
            shuffleSeeds.put(i, seeds.next());
        }
        // the agents split: each process updates its agents (and a shared critic's every process every agent)
        AgentExecutor executor = actors.executor();
        List<Integer> here = taken.keySet().stream().filter(i -> critic.sharedByAgents() || actors.work().ownsAgent(i))
                .toList();
        TrainerParts.releaseDecodeWeights(actors.lms(), here); // stale after the updates, and held through them otherwise
        Function<Integer, Map<String, Double>> update = i -> updateAgent(i, taken.get(i), shuffleSeeds.get(i));
        List<Map<String, Double>> computed = !critic.sharedByAgents() && executor.parallel()
                ? executor.map(here, update::apply) : here.stream().map(update).toList();
        List<Map<String, Double>> byAgent = actorOptimizers // each agent's metrics from its owner
                .mapIndexed((i, opt) -> here.contains(i) ? computed.get(here.indexOf(i)) : Map.<String, Double>of())
                .fromOwners(TurnMetrics.CODEC);
        Map<String, Double> perAgent = new LinkedHashMap<>();
        Map<String, List<Double>> aggregate = new LinkedHashMap<>();
        for (int agent : taken.keySet()) {
            byAgent.get(agent).forEach((key, v) -> {
                perAgent.put("agent_" + agent + "/" + key, v);
                aggregate.computeIfAbsent(key, x -> new ArrayList<>()).add(v);
            });
        }
        Map<String, Double> metrics = new LinkedHashMap<>();
        aggregate.forEach((key, vs) -> metrics.put(key, vs.stream().mapToDouble(Double::doubleValue).average().orElse(0)));
        if (critic.sharedByAgents()) {
            metrics.keySet().removeIf(key -> key.endsWith("/explained_variance"));
            byTurn(taken.values().stream().flatMap(List::stream).toList()).forEach((turn, group) -> {
                double ev = explainedVariance(group);
                if (!Double.isNaN(ev)) {
                    metrics.put("turn_" + (turn + 1) + "/explained_variance", ev);
                }
            });
        }
        metrics.putAll(perAgent);
        return metrics;
    }

    /** One agent's buffer: per turn group, {@code Â}, a seeded shuffle, minibatch updates; its metrics. */
    private Map<String, Double> updateAgent(int agent, List<RolloutSample> buffer, long shuffleSeed) {
        Random shuffle = new Random(shuffleSeed);
        Map<String, Double> metrics = new LinkedHashMap<>();
        byTurn(buffer).forEach((turn, group) -> {
            double[] targets = group.stream().mapToDouble(RolloutSample::valueTarget).toArray();
            double[] old = group.stream().mapToDouble(RolloutSample::oldValue).toArray();
            double[] a = ActorCriticLoss.advantages(targets, old, args.advantageNormalization());
            List<RolloutSample> normalized = new ArrayList<>(IntStream.range(0, group.size())
                    .mapToObj(j -> group.get(j).withNormalizedAdvantage(a[j])).toList()); // shuffled in place
            Collections.shuffle(normalized, shuffle);
            double policyLoss = 0;
            double valueLoss = 0;
            int minibatches = 0;
            for (int start = 0; start < normalized.size(); start += args.trainBatchSize()) {
                List<RolloutSample> mb = normalized.subList(start, Math.min(normalized.size(), start + args.trainBatchSize()));
                actors.steps().seen(agent, mb);
                Critic.Losses losses = critic.update(agent, mb, actorOptimizers);
                policyLoss += losses.policyLoss();
                valueLoss += losses.valueLoss();
                minibatches++;
            }
            TurnMetrics.put(metrics, "", group, policyLoss / minibatches, valueLoss / minibatches,
                    explainedVariance(group));
        });
        return metrics;
    }

    private static double explainedVariance(List<RolloutSample> samples) {
        return ActorCriticLoss.explainedVariance(samples.stream().mapToDouble(RolloutSample::valueTarget).toArray(),
                samples.stream().mapToDouble(RolloutSample::oldValue).toArray());
    }

    /** {@code samples} by turn index, in their order. */
    static Map<Integer, List<RolloutSample>> byTurn(List<RolloutSample> samples) {
        Map<Integer, List<RolloutSample>> byTurn = new TreeMap<>();
        for (RolloutSample s : samples) {
            byTurn.computeIfAbsent(s.turnIdx(), t -> new ArrayList<>()).add(s);
        }
        return byTurn;
    }
}
