package comlrl.trainers.common;

import comlrl.generation.CausalLm;
import comlrl.generation.GenerationSettings;
import comlrl.utils.TrainerConfig;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An agent's rollout settings as the Python trainers' {@code generate} call gets them: temperature
 * and top_p always passed, top_k unless null, {@code generation_kwargs} as given; everything else from
 * the agent's generation config, then transformers' defaults. {@code temperature}, {@code top_p},
 * {@code top_k} and {@code max_new_tokens} may be per-agent lists (agent i samples with entry i).
 */
public final class AgentGeneration {
    private AgentGeneration() {
    }

    /** {@code agent}: the agent's index, for messages; {@code numReturnSequences}: samples per prompt. */
    public static GenerationSettings.Resolved resolve(int agent, CausalLm lm, Map<String, Object> generationKwargs,
            double temperature, double topP, Integer topK, int maxNewTokens, int numReturnSequences) {
        Map<String, Object> passed = new LinkedHashMap<>(generationKwargs);
        passed.put("temperature", temperature);
        passed.put("top_p", topP);
        if (topK != null) {
            passed.put("top_k", topK);
        }
        int context = lm.model().config().maxPositionEmbeddings();
        if (maxNewTokens >= context) {
            throw new IllegalArgumentException("max_new_tokens " + maxNewTokens + " does not fit agent " + agent
                    + "'s context of " + context + " positions (max_position_embeddings in its config.json), which "
                    + "must also hold the prompt; lower max_new_tokens");
        }
        try {
            return GenerationSettings.resolve(passed, "run config", false, maxNewTokens, numReturnSequences,
                    lm.generationConfig());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("agent " + agent + " (" + lm.source() + "): " + e.getMessage(), e);
        }
    }

    /** {@link #resolve} with agent {@code agent}'s sampling fields of {@code args}: every sampling of the agent. */
    public static GenerationSettings.Resolved resolve(int agent, CausalLm lm, TrainerConfig args,
            int numReturnSequences) {
        Map<String, Object> kwargs = new LinkedHashMap<>(args.generationKwargs());
        if (args.stopStrings(agent) != null) { // else the model's stop_strings
            kwargs.put("stop_strings", args.stopStrings(agent));
        }
        return resolve(agent, lm, kwargs, args.temperature(agent), args.topP(agent), args.topK(agent),
                args.maxNewTokens(agent), numReturnSequences);
    }
}
