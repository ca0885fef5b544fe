package comlrl.trainers.preference;

import comlrl.generation.CausalLm;
import comlrl.tensor.AdamW;
import comlrl.tensor.Scope;
import comlrl.trainers.common.TrainerParts;
import comlrl.distributed.AgentExecutor;
import comlrl.distributed.HeldAgents;
import comlrl.distributed.RankWork;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.stream.IntStream;

/**
 * One DPO batch of {@link MADPOTrainer} ({@link MADPOLoss}): every agent's Δ over the batch first
 * (no gradients), then each agent's step on its loss with the other agents' Δ as constants; in a ddp
 * run this process scores the pairs at positions j ≡ rank (mod W), or the agents it holds. Metrics:
 * {@code turn_1/reward_mean} and {@code turn_1/expected_return} (the pairs' candidate reward mean),
 * {@code agent_i/dpo_loss}, {@code agent_i/rewards/*} ({@link PreferenceMetrics.DpoRewards}) and
 * {@code dpo_loss}, the agents' mean.
 */
final class MADPOStep {
    private final MADPOConfig args;
    private final int numAgents;
    /** The agents this process holds (every agent, except in the agents split) and their optimizers. */
    private final HeldAgents<CausalLm> agents;
    private final HeldAgents<AdamW> optimizers;
    private final AgentExecutor executor;
    private final RankWork work;
    /** Whether Δ is relative to the pairs' frozen reference log-probabilities ({@code dpo_reference: frozen_initial}). */
    private final boolean withReference;
    /** Sees each agent's gradients just before its optimizer step (tests); may be null. */
    private final BiConsumer<Integer, List<comlrl.tensor.Tensor>> observer;
    /** Sees each batch (with its pairs' frozen reference log-probabilities) before its updates (tests); may be null. */
    private java.util.function.Consumer<List<PreferencePair>> batchObserver;

    MADPOStep(MADPOConfig args, HeldAgents<CausalLm> agents, HeldAgents<AdamW> optimizers, AgentExecutor executor, RankWork work,
            boolean withReference, BiConsumer<Integer, List<comlrl.tensor.Tensor>> observer) {
        this.args = args;
        this.numAgents = agents.size();
        this.agents = agents;
        this.optimizers = optimizers;
        this.executor = executor;
        this.work = work;
        this.withReference = withReference;
        this.observer = observer;
    }

    /** Sets what sees each batch before its updates (tests); null for nothing. */
    void observeBatches(java.util.function.Consumer<List<PreferencePair>> batchObserver) {
        this.batchObserver = batchObserver;
    }

    /** Trains every agent on {@code batch}; returns the batch's metrics. */
    Map<String, Double> train(List<PreferencePair> batch) {
        if (batchObserver != null) {
            batchObserver.accept(batch);
        }
        TrainerParts.releaseDecodeWeights(agents, agents.indices()); // stale after the steps, and held through them otherwise
        int n = batch.size();
        double[][] deltas = new double[numAgents][];
        // in a ddp run this process scores and backpropagates the pairs at positions j ≡ rank (mod W)
        int[] local = work.localRows(n);
        List<PreferencePair> mine = java.util.Arrays.stream(local).mapToObj(batch::get).toList();
        List<List<long[]>> prompts = perAgent(i -> mine.stream().map(p -> p.prompts().get(i)).toList());
        List<List<long[]>> winners = perAgent(i -> mine.stream().map(p -> p.winners().get(i)).toList());
        List<List<long[]>> losers = perAgent(i -> mine.stream().map(p -> p.losers().get(i)).toList());
        HeldAgents<double[]> scored = agents.mapIndexed(executor, (i, lm) -> {
            double[] both = new double[2 * n]; // s(w_b) then s(l_b), this process's pairs filled in
            if (!mine.isEmpty()) {
                MADPOLoss.SequenceLogprobs s = MADPOLoss.logprobs(lm.model(), prompts.get(i), winners.get(i),
                        losers.get(i), lm.padId());
                for (int k = 0; k < local.length; k++) {
                    both[local[k]] = s.winners()[k];
                    both[n + local[k]] = s.losers()[k];
                }
            }
            return both;
        });
        // every pair's of every agent, on every process (each value is non-zero on one process only: exact)
        List<double[]> summed = perAgent(i -> work.sum(work.ownsAgent(i) ? scored.get(i) : new double[2 * n]));
        PreferenceMetrics.DpoRewards[] rewards = new PreferenceMetrics.DpoRewards[numAgents]; // before the steps
        for (int i = 0; i < numAgents; i++) {
            int agent = i;
            MADPOLoss.SequenceLogprobs policy = new MADPOLoss.SequenceLogprobs(
                    java.util.Arrays.copyOfRange(summed.get(i), 0, n), java.util.Arrays.copyOfRange(summed.get(i), n, 2 * n));
            MADPOLoss.SequenceLogprobs frozen = !withReference ? null : new MADPOLoss.SequenceLogprobs(
                    batch.stream().mapToDouble(p -> p.referenceWinners()[agent]).toArray(),
                    batch.stream().mapToDouble(p -> p.referenceLosers()[agent]).toArray());
            deltas[i] = MADPOLoss.deltas(args.dpoReference(), policy, frozen);
            rewards[i] = PreferenceMetrics.DpoRewards.of(args.dpoBeta(), policy, frozen);
        }
        // every agent's loss (the same on every process) before any step, so a non-finite Δ stops all of them
        MADPOLoss.AgentLoss[] agentLosses = new MADPOLoss.AgentLoss[numAgents];
        for (int i = 0; i < numAgents; i++) {
            try {
                agentLosses[i] = MADPOLoss.agentLoss(i, deltas, args.dpoBeta());
            } catch (MADPOLoss.NonFiniteDeltaException e) {
                throw new IllegalStateException("Training stopped: " + e.getMessage() + " in a batch of " + n
                        + " preference pairs. No optimizer step used it, so the weights and the last checkpoint are "
                        + "intact; lower agent_learning_rate or dpo_beta.", e);
            }
        }
        optimizers.mapIndexed(executor, (i, opt) -> { // the agents split: each owner steps its agents
            opt.zeroGrad();
            double[] all = MADPOLoss.weights(agentLosses[i]); // winners' then losers'
            double[] weights = new double[2 * local.length];
            for (int k = 0; k < local.length; k++) {
                weights[k] = all[local[k]];
                weights[local.length + k] = all[n + local[k]];
            }
            if (!mine.isEmpty()) {
                try (Scope s = Scope.open()) {
                    MADPOLoss.backward(agents.get(i).model(), prompts.get(i), winners.get(i), losers.get(i),
                            agents.get(i).padId(), weights, args.gradientCheckpointing());
                }
            }
            if (!TrainerParts.stepIfFinite(work, opt, observer == null ? null
                    : () -> observer.accept(i, opt.parameters()))) {
                throw new IllegalStateException("Training stopped: agent " + i + "'s DPO gradient is not finite. No "
                        + "optimizer step used it; lower agent_learning_rate.");
            }
            return null;
        });
        double mean = batch.stream().mapToDouble(PreferencePair::candidateRewardMean).average().orElse(0);
        Map<String, Double> metrics = new LinkedHashMap<>();
        metrics.put("turn_1/reward_mean", mean);
        metrics.put("turn_1/expected_return", mean);
        double lossMean = 0;
        for (int i = 0; i < numAgents; i++) {
            metrics.put("agent_" + i + "/dpo_loss", agentLosses[i].loss());
            rewards[i].putInto(metrics, "agent_" + i + "/");
            lossMean += agentLosses[i].loss() / numAgents;
        }
        metrics.put("dpo_loss", lossMean);
        return metrics;
    }

    private <T> List<T> perAgent(java.util.function.IntFunction<T> of) {
        return IntStream.range(0, numAgents).mapToObj(of).toList();
    }
}
