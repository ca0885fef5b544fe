package comlrl.generation;

import comlrl.model.DecoderLm;
import comlrl.model.LoraAdapter;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

/**
 * Sampling for a team of LoRA agents on one shared base, as one batched generation: the agents'
 * prompts are stacked (agent 0's first, then agent 1's, ...), every forward runs the base's products
 * once for all rows and each agent's adapter on its own rows ({@link DecoderLm#withAdapters}), so a
 * decode step reads the base weights once for the whole team.
 *
 * <p>Each agent's sequences get the seeds its own {@link Generator} would give them
 * ({@link Generator#rowSeed(long, int, int)} with its seed and its prompt index), and a sequence's
 * tokens depend only on its model, prompt and seed: the team call samples what the agents' separate
 * calls sample (up to float rounding in the padded batch, and, on a bfloat16 base, the prefill's
 * adapter products rounded to bfloat16: {@link comlrl.model.LoraBatch}). The agents may each have their own stop
 * strings (the only setting in which their sampling may differ): a sequence ends where the agent's own
 * call would end it.
 */
public final class TeamGenerator {
    private final DecoderLm base;
    private final Set<Long> eosIds;
    private final long padId;
    private final Function<long[], String> decoder;
    private volatile Generator.Stats lastStats;

    /** The shared base and its tokenizer's ids ({@link CausalLm#eosIds()}, {@link CausalLm#padId()}). */
    public TeamGenerator(DecoderLm base, Set<Long> eosIds, long padId, Function<long[], String> decoder) {
        if (base.adapter() != null) {
            throw new IllegalArgumentException("the team generator needs the shared base, not an agent's view");
        }
        this.base = base;
        this.eosIds = Set.copyOf(eosIds);
        this.padId = padId;
        this.decoder = decoder;
    }

    /** For the agents of a shared base: their base model and tokenizer. */
    public static TeamGenerator of(CausalLm anyAgent) {
        return new TeamGenerator(anyAgent.model().base(), anyAgent.eosIds(), anyAgent.padId(),
                ids -> anyAgent.tokenizer().decode(ids, true));
    }

    /**
     * Samples {@code config.numReturnSequences()} completions for each prompt of each agent.
     *
     * @param adapters agent a's adapter at index a
     * @param prompts agent a's prompts at index a (at least one each)
     * @param seeds agent a's seed, as {@code Generator.generate(prompts.get(a), config, seeds[a])} takes it
     * @return per agent, per prompt, G completions in sampling order
     */
    public List<List<List<Completion>>> generate(List<LoraAdapter> adapters, List<List<long[]>> prompts,
            SamplingConfig config, long[] seeds) {
        return generate(adapters, prompts, java.util.Collections.nCopies(adapters.size(), config), seeds);
    }

    /**
     * {@link #generate(List, List, SamplingConfig, long[])} with agent a's settings at {@code configs.get(a)}:
     * they must be equal but for their stop strings.
     */
    public List<List<List<Completion>>> generate(List<LoraAdapter> adapters, List<List<long[]>> prompts,
            List<SamplingConfig> configs, long[] seeds) {
        int n = adapters.size();
        if (configs.size() != n) {
            throw new IllegalArgumentException(n + " adapters need " + n + " sampling configs, got " + configs.size());
        }
        SamplingConfig config = configs.get(0).withStopStrings(null);
        for (int a = 0; a < n; a++) {
            if (!configs.get(a).withStopStrings(null).equals(config)) {
                throw new IllegalArgumentException("a team generation samples every agent alike (only stop strings may "
                        + "differ), but agent " + a + " has " + configs.get(a) + " and agent 0 " + configs.get(0));
            }
        }
        if (prompts.size() != n || seeds.length != n) {
            throw new IllegalArgumentException(n + " adapters need " + n + " prompt lists and seeds, got "
                    + prompts.size() + " and " + seeds.length);
        }
        int g = config.numReturnSequences();
        int[] counts = new int[n];
        List<long[]> all = new ArrayList<>();
        List<Long> rowSeeds = new ArrayList<>();
        List<List<String>> rowStops = new ArrayList<>();
        for (int a = 0; a < n; a++) {
            counts[a] = prompts.get(a).size();
            for (int i = 0; i < counts[a]; i++) {
                all.add(prompts.get(a).get(i));
                for (int j = 0; j < g; j++) {
                    rowSeeds.add(Generator.rowSeed(seeds[a], i, j));
                    rowStops.add(configs.get(a).stopStrings());
                }
            }
        }
        List<List<Completion>> flat;
        try (DecoderLm team = base.withAdapters(adapters, counts)) {
            Generator generator = new Generator(team, eosIds, padId, decoder);
            flat = generator.generate(all, config, rowSeeds.stream().mapToLong(Long::longValue).toArray(), rowStops);
            lastStats = generator.lastStats();
        }
        List<List<List<Completion>>> out = new ArrayList<>();
        int next = 0;
        for (int a = 0; a < n; a++) {
            out.add(new ArrayList<>(flat.subList(next, next + counts[a])));
            next += counts[a];
        }
        return out;
    }

    /** Timings of the last {@link #generate} call, or null before the first. */
    public Generator.Stats lastStats() {
        return lastStats;
    }
}
