package comlrl.trainers.common;

import comlrl.distributed.AgentExecutor;
import comlrl.distributed.Codec;
import comlrl.distributed.Codecs;
import comlrl.distributed.RankWork;
import comlrl.generation.CausalLm;
import comlrl.generation.Completion;
import comlrl.generation.Generator;
import comlrl.generation.SamplingConfig;
import comlrl.generation.TeamGenerator;
import comlrl.model.DecoderLm;
import comlrl.model.LoraAdapter;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.IntFunction;
import java.util.stream.IntStream;
import java.util.stream.Stream;

/**
 * The sampling step of {@link JointRollout}: each agent's own generation (on its thread in "mp" mode),
 * or, for LoRA agents on one shared base that sample alike, one team generation ({@link TeamGenerator}:
 * the base read once per token step). Both give each agent what its own {@code generate} would give.
 */
final class Rollouts {
    private Rollouts() {
    }

    /** The completions of agents {@code which} (in that order). */
    private static List<List<List<Completion>>> sample(List<Integer> which, List<CausalLm> agents,
            AgentExecutor executor, List<List<long[]>> prompts, IntFunction<SamplingConfig> sampling, long[] seeds) {
        List<CausalLm> chosen = which.stream().map(agents::get).toList();
        IntFunction<SamplingConfig> chosenSampling = j -> sampling.apply(which.get(j));
        if (teamable(chosen, chosenSampling)) {
            List<LoraAdapter> adapters = chosen.stream().map(a -> a.model().adapter()).toList();
            return TeamGenerator.of(chosen.get(0)).generate(adapters, which.stream().map(prompts::get).toList(),
                    which.stream().map(sampling::apply).toList(), which.stream().mapToLong(i -> seeds[i]).toArray());
        }
        return executor.map(which, i -> agents.get(i).generator().generate(prompts.get(i), sampling.apply(i),
                seeds[i]));
    }

    /**
     * Per agent, per prompt, its completions: agent i's prompts sampled with {@code sampling.apply(i)} and
     * seed {@code seeds[i]}. In a run of several processes every rank gets every agent's completions, the
     * same ones one process samples: in the data split this rank samples the rows q = p·G + j of agent i
     * it owns ({@link RankWork#ownsRow}), each with the seed one process gives it ({@link Generator#rowSeed});
     * in the agents split its agents' completions ({@code agents}, {@code prompts} null for other ranks');
     * then the rows are exchanged.
     */
    static List<List<List<Completion>>> generate(List<CausalLm> agents, AgentExecutor executor,
            List<List<long[]>> prompts, IntFunction<SamplingConfig> sampling, long[] seeds, RankWork work) {
        if (!work.distributed()) {
            return sample(IntStream.range(0, agents.size()).boxed().toList(), agents, executor, prompts, sampling,
                    seeds);
        }
        int n = prompts.size();
        List<Row> rows = new ArrayList<>(); // what this rank sampled: (agent, row, completion)
        if (work.splitsRows()) {
            executor.map(i -> localRows(agents.get(i), prompts.get(i), sampling.apply(i), seeds[i], work, i))
                    .forEach(rows::addAll);
        } else {
            List<Integer> mine = work.ownedAgents();
            List<List<List<Completion>>> out = sample(mine, agents, executor, prompts, sampling, seeds);
            for (int a = 0; a < mine.size(); a++) {
                List<Completion> flat = out.get(a).stream().flatMap(List::stream).toList(); // row q = p·G + j
                for (int q = 0; q < flat.size(); q++) {
                    rows.add(new Row(mine.get(a), q, flat.get(q)));
                }
            }
        }
        // every rank's rows, placed by (agent, row); every agent has as many prompts as the others
        int promptCount = prompts.stream().filter(Objects::nonNull).findFirst().map(List::size).orElse(0);
        List<TreeMap<Integer, Completion>> byAgent = Stream.generate(TreeMap<Integer, Completion>::new).limit(n)
                .toList();
        work.gather(rows, Codecs.listOf(ROW))
                .forEach(fromRank -> fromRank.forEach(r -> byAgent.get(r.agent()).put(r.row(), r.completion())));
        List<List<List<Completion>>> result = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            List<Completion> flat = new ArrayList<>(byAgent.get(i).values());
            if (flat.size() != byAgent.get(i).lastKey() + 1 || flat.size() % promptCount != 0) {
                throw new IllegalStateException("agent " + i + "'s rows did not all arrive: "
                        + byAgent.get(i).keySet());
            }
            int g = flat.size() / promptCount;
            result.add(IntStream.range(0, promptCount).mapToObj(p -> List.copyOf(flat.subList(p * g, p * g + g)))
                    .toList());
        }
        return result;
    }

    /** One sampled row of an agent: row q = p·G + j of its prompts × samples. */
    private record Row(int agent, int row, Completion completion) {
    }

    private static final Codec<Row> ROW =
            Codecs.fields(Codecs.INT, Row::agent, Codecs.INT, Row::row, Codecs.COMPLETION, Row::completion, Row::new);

    /** The rows q = p·G + j of {@code agent}'s prompts × G samples this rank owns, seeded by {@code rowSeed}. */
    private static List<Row> localRows(CausalLm agent, List<long[]> prompts, SamplingConfig sampling, long seed,
            RankWork work, int index) {
        int g = sampling.numReturnSequences();
        List<Integer> rowIds = IntStream.range(0, prompts.size() * g).filter(work::ownsRow).boxed().toList();
        if (rowIds.isEmpty()) {
            return List.of();
        }
        List<long[]> rowPrompts = rowIds.stream().map(q -> prompts.get(q / g)).toList();
        long[] rowSeeds = rowIds.stream().mapToLong(q -> Generator.rowSeed(seed, q / g, q % g)).toArray();
        List<List<Completion>> sampled = agent.generator().generate(rowPrompts, sampling.withNumReturnSequences(1),
                rowSeeds);
        return IntStream.range(0, rowIds.size()).mapToObj(k -> new Row(index, rowIds.get(k), sampled.get(k).get(0)))
                .toList();
    }

    /**
     * Whether the agents can sample as one team: several LoRA views of the same base (hence one
     * tokenizer and device) with equal sampling settings (but for their stop strings).
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
                    || !sampling.apply(i).withStopStrings(null).equals(first.withStopStrings(null))) { // but stops
                return false;
            }
        }
        return true;
    }
}
