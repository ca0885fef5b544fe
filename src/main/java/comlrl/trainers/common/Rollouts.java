package comlrl.trainers.common;

import comlrl.generation.CausalLm;
import comlrl.generation.Completion;
import comlrl.generation.SamplingConfig;
import comlrl.generation.TeamGenerator;
import comlrl.model.DecoderLm;
import comlrl.model.LoraAdapter;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

/**
 * The agents' sampling for one step: each agent's own generation (on its thread in "mp" mode), or,
 * for LoRA agents on one shared base that sample alike, one batched team generation
 * ({@link TeamGenerator}: the base read once per token step for the whole team). Both give each
 * agent the completions its own {@code generate(prompts, sampling, seed)} would give.
 */
public final class Rollouts {
    private Rollouts() {
    }

    /**
     * @param prompts agent i's prompts at index i
     * @param sampling agent i's sampling settings
     * @param seeds agent i's seed
     * @return per agent, per prompt, its completions
     */
    public static List<List<List<Completion>>> generate(List<CausalLm> agents, AgentExecutor executor,
            List<List<long[]>> prompts, IntFunction<SamplingConfig> sampling, long[] seeds) {
        if (teamable(agents, sampling)) {
            List<LoraAdapter> adapters = agents.stream().map(a -> a.model().adapter()).toList();
            return TeamGenerator.of(agents.get(0)).generate(adapters, prompts, sampling.apply(0), seeds);
        }
        return executor.map(i -> agents.get(i).generator().generate(prompts.get(i), sampling.apply(i), seeds[i]));
    }

    /** {@link #generate} with one prompt per agent: per agent, that prompt's completions. */
    public static List<List<Completion>> generateOne(List<CausalLm> agents, AgentExecutor executor,
            List<long[]> prompts, IntFunction<SamplingConfig> sampling, long[] seeds) {
        List<List<long[]>> each = new ArrayList<>();
        prompts.forEach(p -> each.add(List.of(p)));
        return generate(agents, executor, each, sampling, seeds).stream().map(groups -> groups.get(0)).toList();
    }

    /**
     * Whether the agents can sample as one team: several LoRA views of the same base (hence one
     * tokenizer and device) with equal sampling settings.
     */
    static boolean teamable(List<CausalLm> agents, IntFunction<SamplingConfig> sampling) {
        if (agents.size() < 2) {
            return false;
        }
        DecoderLm base = agents.get(0).model().base();
        SamplingConfig first = sampling.apply(0);
        for (int i = 0; i < agents.size(); i++) {
            CausalLm a = agents.get(i);
            if (a.model().adapter() == null || a.model().base() != base || a.tokenizer() != agents.get(0).tokenizer()
                    || !sampling.apply(i).equals(first)) {
                return false;
            }
        }
        return true;
    }
}
