package comlrl.trainers.reinforce;

import comlrl.data.Dataset;
import comlrl.generation.CausalLm;
import comlrl.reward.RewardFunction;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Small shared pieces of the MA-REINFORCE trainer tests. */
final class ReinforceFixtures {
    private ReinforceFixtures() {
    }

    /** Three short task items. */
    static Dataset tasks(int n) {
        List<Map<String, Object>> rows = new ArrayList<>();
        String[] prompts = {"Write a story about a cat.", "Explain why the sky is blue.", "Say hello.",
            "Describe the sea."};
        for (int i = 0; i < n; i++) {
            rows.add(Map.of("prompt", prompts[i % prompts.length]));
        }
        return Dataset.fromRows(rows);
    }

    /**
     * A config for fast tests: single turn, 1 epoch, G=2, 6 new tokens, plain sampling at
     * temperature 1 (top-k off: {@code top_k: 0}; null would take transformers' default of 50), every entry logged, automatic evaluation off, lr 1e-3.
     */
    static <C extends MAGRPOConfig> MAGRPOConfig.Builder<C> fast(MAGRPOConfig.Builder<C> b) {
        return b.numTurns(1).numTrainEpochs(1).numGenerations(2).maxNewTokens(6).temperature(1.0).topP(1.0)
                .topK(0).loggingSteps(1).evalInterval(0).evalNumSamples(1).agentLearningRate(1e-3).seed(7);
    }

    /** {@link comlrl.trainers.TestRewards#lengthDifference()}. */
    static RewardFunction lengthDifference() {
        return comlrl.trainers.TestRewards.lengthDifference();
    }

    /** {@link comlrl.trainers.TestRewards#ownLength()}. */
    static RewardFunction ownLength() {
        return comlrl.trainers.TestRewards.ownLength();
    }

    /** A host copy of every parameter of {@code lm}, by name. */
    static Map<String, float[]> snapshot(CausalLm lm) {
        Map<String, float[]> out = new LinkedHashMap<>();
        try (Scope s = Scope.open()) {
            for (Map.Entry<String, Tensor> e : lm.model().namedParameters().entrySet()) {
                out.put(e.getKey(), e.getValue().toFloatArray());
            }
        }
        return Collections.unmodifiableMap(out);
    }

    /** A host copy of every parameter's raw bytes, by name. */
    static Map<String, byte[]> bytes(CausalLm lm) {
        Map<String, byte[]> out = new LinkedHashMap<>();
        try (Scope s = Scope.open()) {
            for (Map.Entry<String, Tensor> e : lm.model().namedParameters().entrySet()) {
                out.put(e.getKey(), e.getValue().toBytes());
            }
        }
        return out;
    }
}
