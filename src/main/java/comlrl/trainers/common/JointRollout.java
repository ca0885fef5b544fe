package comlrl.trainers.common;

import comlrl.data.TaskItem;
import comlrl.distributed.AgentExecutor;
import comlrl.distributed.Codec;
import comlrl.distributed.Codecs;
import comlrl.distributed.HeldAgents;
import comlrl.distributed.RankWork;
import comlrl.generation.CausalLm;
import comlrl.generation.Completion;
import comlrl.generation.GenerationSettings;
import comlrl.generation.Generator;
import comlrl.generation.PromptEncoder;
import comlrl.generation.SamplingConfig;
import comlrl.generation.SeedStream;
import comlrl.generation.TeamGenerator;
import comlrl.model.DecoderLm;
import comlrl.model.LoraAdapter;
import comlrl.reward.JointRewarder;
import comlrl.rl.JointMode;
import comlrl.utils.Formatters;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.function.Predicate;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import java.util.stream.Stream;

/**
 * The joint rollout of every trainer and of evaluation, from a task item to sampled, scored turns. One
 * turn of a batch of items: prompts (turn 1 the formatters', later {@link Formatters#turnPrompt} of the
 * transition's); one seed per agent from the caller's {@link SeedStream}, in agent order; ids by the
 * {@link PromptEncoder}; sampling ({@link #generate}, split over a ddp run's processes, each
 * getting every completion); reference KL when shaping is on ({@link ReferencePolicy#kls}, each row
 * scored by its owner, summed over processes); the reward ({@link Scoring}) on rank 0 with
 * {@code batch_items = [item]}, given to every process; then the chosen completions appended to the
 * histories and the external transition run on rank 0 ({@link Transitions#next}). Per item a turn's
 * reward is computed before its transition, as the Python trainers do. {@link #expand} is the node
 * expansion of MAGRPO's rollout tree, {@link #next} the step to a child, {@link #rollout} linear
 * episodes. {@code agents} and {@code generation} hold null for other processes' agents (agents split).
 */
public record JointRollout(List<CausalLm> agents, List<GenerationSettings.Resolved> generation, Formatters formatters,
        PromptEncoder encoder, AgentExecutor executor, Transitions transitions, boolean passthrough,
        ReferencePolicy references, RankWork work) {
    /** Single-turn rollouts, each agent sampling with its resolved generation settings; no reference KL. */
    public static JointRollout of(List<CausalLm> agents, List<GenerationSettings.Resolved> generation,
            Formatters formatters, PromptEncoder encoder, AgentExecutor executor, RankWork work) {
        return new JointRollout(agents, generation, formatters, encoder, executor,
                new Transitions(null, agents.size()), false, null, work);
    }

    /** Multi-turn: {@code transitions} between turns, external prompts formatted with {@code passthrough}. */
    public JointRollout withTransitions(Transitions transitions, boolean passthrough) {
        return new JointRollout(agents, generation, formatters, encoder, executor, transitions, passthrough, references,
                work);
    }

    /** Each turn with its reference KL against {@code references} (null: none). */
    public JointRollout withReferences(ReferencePolicy references) {
        return new JointRollout(agents, generation, formatters, encoder, executor, transitions, passthrough, references,
                work);
    }

    /**
     * Where one item's rollout stands before {@code turn} (0-based); {@code label} names the item in
     * messages. {@code prompts [N]}: what the agents see (formatted); {@code historyPrompts [N]}: what
     * the histories record of them (turn 1: the formatted prompt, later the transition's raw one);
     * {@code promptHistory}, {@code responseHistory [N][turn]}: earlier turns' prompts and chosen completions.
     */
    public record TurnState(TaskItem item, String label, int turn, List<String> prompts, List<String> historyPrompts,
            List<List<String>> promptHistory, List<List<String>> responseHistory) {
    }

    /**
     * One sampled turn of one item, the same on every process: {@code promptIds [N]}, {@code completions
     * [N][K]} (with their sampling log-probabilities), {@code referenceKls [N][K]} (null when shaping is off).
     */
    public record Turn(TurnState state, List<long[]> promptIds, List<List<Completion>> completions,
            double[][] referenceKls) {
        /** {@code [N][K]} the completions' texts. */
        public List<List<String>> texts() {
            return completions.stream().map(agent -> agent.stream().map(Completion::text).toList()).toList();
        }

        /** The joint response that takes completion {@code idx[i]} of each agent i. */
        public List<String> joint(int[] idx) {
            return IntStream.range(0, completions.size()).mapToObj(i -> completions.get(i).get(idx[i]).text()).toList();
        }

        /** The joint actions of {@code mode}: j takes agent i's completion {@code completionIndices(j, K, N)[i]}. */
        public List<List<String>> jointActions(JointMode mode) {
            int n = completions.size();
            int g = completions.get(0).size();
            return IntStream.range(0, mode.numJointActions(g, n)).mapToObj(j -> joint(mode.completionIndices(j, g, n)))
                    .toList();
        }

        /** The aligned joint response k: every agent's completion k. */
        public List<String> joint(int k) {
            return completions.stream().map(agent -> agent.get(k).text()).toList();
        }
    }

    /** A turn with its rewards (of the {@link Scoring}'s shape). */
    public record Scored<R>(Turn turn, R rewards) {
    }

    /** How a turn is scored ({@code scorer}): run on rank 0, its value given to every process by {@code codec}. */
    public record Scoring<R>(Function<Turn, R> scorer, Codec<R> codec) {
        /** MAGRPO's, evaluation's and preference candidates' call: {@code r[j]}, joint action j's processed reward. */
        public static Scoring<double[]> jointActions(JointRewarder rewarder, JointMode mode) {
            return new Scoring<>(turn -> turn.jointActions(mode).stream()
                    .mapToDouble(joint -> rewarder.reward(turn.state().item(), joint, turn.state().label())).toArray(),
                    Codecs.DOUBLES);
        }

        /**
         * The MAGRPO family's call, {@link #jointActions} with per-agent rewards
         * ({@link JointRewarder#agentRewards}): row 0 holds the team reward r_j of each joint action j
         * ({@code [K]}; for a joint action scored per agent, r_j = (1/N) Σ_i r_{i,j}); when at least one
         * joint action was scored per agent, rows 1..N follow, row 1+i holding agent i's r_{i,j} (r_j where
         * the joint action got a team reward). So {@code [1][K]} for team rewards, {@code [N+1][K]} else.
         */
        public static Scoring<double[][]> jointActionsPerAgent(JointRewarder rewarder, JointMode mode) {
            return new Scoring<>(turn -> {
                int n = turn.completions().size();
                TurnState state = turn.state();
                double[][] r = turn.jointActions(mode).stream() // [K][1 or N]
                        .map(joint -> rewarder.agentRewards(state.item(), joint, state.label()).processed())
                        .toArray(double[][]::new);
                boolean perAgent = Arrays.stream(r).anyMatch(agents -> agents.length > 1);
                double[][] out = new double[perAgent ? n + 1 : 1][r.length];
                for (int j = 0; j < r.length; j++) {
                    out[0][j] = comlrl.reward.AgentRewardFunction.teamMean(r[j]);
                    for (int i = 0; perAgent && i < n; i++) {
                        out[1 + i][j] = r[j].length > 1 ? r[j][i] : out[0][j];
                    }
                }
                return out;
            }, Codecs.DOUBLE_MATRIX);
        }

        /** The actor-critic call: {@code r[i][k]} for agent i's completion k ({@link JointRewarder#rewardMatrix}). */
        public static Scoring<double[][]> perAgent(JointRewarder rewarder) {
            return new Scoring<>(turn -> rewarder.rewardMatrix(turn.state().item(), turn.texts(),
                    turn.state().label()), Codecs.DOUBLE_MATRIX);
        }
    }

    /** Turn 1 of {@code item}: each agent's formatted prompt, empty histories. */
    public TurnState start(TaskItem item, String label) {
        List<String> prompts = List.copyOf(IntStream.range(0, agents.size()).mapToObj(i -> formatters.format(i, item))
                .toList());
        List<List<String>> empty = Collections.nCopies(agents.size(), List.of());
        return new TurnState(item, label, 0, prompts, prompts, empty, empty);
    }

    /** {@link #sample(List, SeedStream, int)} of one item. */
    public Turn sample(TurnState state, SeedStream seeds, int k) {
        return sample(List.of(state), seeds, k).get(0);
    }

    /**
     * One turn of the items {@code states} (each with its own prompts): {@code k} completions per agent
     * and item from one generate call per agent, seeded by one seed per agent from {@code seeds}.
     */
    public List<Turn> sample(List<TurnState> states, SeedStream seeds, int k) {
        int n = agents.size();
        long[] rowSeeds = LongStream.generate(seeds::next).limit(n).toArray(); // one per agent, in agent order
        List<List<long[]>> ids = HeldAgents.of(agents, work) // [N][B], each agent's by its owner
                .mapIndexed((i, agent) -> states.stream().map(s -> encoder.encode(agent, s.prompts().get(i))).toList())
                .fromOwners(Codecs.listOf(Codecs.LONGS));
        List<List<List<Completion>>> sampled = generate(agents, executor, ids,
                i -> generation.get(i).sampling().withNumReturnSequences(k), rowSeeds, work);
        return IntStream.range(0, states.size()).mapToObj(b -> { // in item order (referenceKls sums over the processes)
            List<long[]> promptIds = List.copyOf(IntStream.range(0, n).mapToObj(i -> ids.get(i).get(b)).toList());
            List<List<Completion>> completions = List.copyOf(IntStream.range(0, n).mapToObj(i -> sampled.get(i).get(b))
                    .toList());
            return new Turn(states.get(b), promptIds, completions,
                    references == null ? null : referenceKls(promptIds, completions));
        }).toList();
    }

    /** The turn's rewards, computed on rank 0 ({@link Scoring}). */
    public <R> R score(Turn turn, Scoring<R> scoring) {
        return work.onMain("computing the rewards of " + turn.state().label(), () -> scoring.scorer().apply(turn),
                scoring.codec());
    }

    /** One node of a rollout tree: the turn sampled ({@code k} per agent) and scored. */
    public <R> Scored<R> expand(TurnState state, SeedStream seeds, int k, Scoring<R> scoring) {
        Turn turn = sample(state, seeds, k);
        return new Scored<>(turn, score(turn, scoring));
    }

    /**
     * The state after {@code turn} when each agent i continues with its completion {@code chosen[i]}:
     * histories appended, the external transition run on rank 0, its prompts formatted.
     */
    public TurnState next(Turn turn, int[] chosen) {
        TurnState s = turn.state();
        List<String> joint = turn.joint(chosen);
        List<List<String>> ph = IntStream.range(0, agents.size())
                .mapToObj(i -> Transitions.append(s.promptHistory().get(i), s.historyPrompts().get(i))).toList();
        List<List<String>> rh = IntStream.range(0, agents.size())
                .mapToObj(i -> Transitions.append(s.responseHistory().get(i), joint.get(i))).toList();
        List<String> external = work.onMain("running the external transition of " + s.label(),
                () -> transitions.next(s.item(), joint, ph, rh), Codecs.STRINGS);
        List<String> formatted = IntStream.range(0, agents.size())
                .mapToObj(i -> formatters.turnPrompt(i, s.item(), external.get(i), passthrough)).toList();
        return new TurnState(s.item(), s.label(), s.turn() + 1, List.copyOf(formatted), List.copyOf(external),
                List.copyOf(ph), List.copyOf(rh));
    }

    /**
     * Linear episodes of the items {@code starts}, sampled together turn by turn ({@code k} completions per
     * agent, scored); an item continues with every agent's first completion until {@code numTurns} or
     * until {@code terminates} accepts its rewards. Per item, its turns.
     */
    public <R> List<List<Scored<R>>> rollout(List<TurnState> starts, SeedStream seeds, int k, Scoring<R> scoring,
            int numTurns, Predicate<R> terminates) {
        List<List<Scored<R>>> episodes = starts.stream().map(s -> (List<Scored<R>>) new ArrayList<Scored<R>>())
                .toList();
        List<Integer> active = IntStream.range(0, starts.size()).boxed().toList();
        List<TurnState> states = starts;
        int[] first = new int[agents.size()];
        for (int t = 0; t < numTurns && !active.isEmpty(); t++) {
            List<Turn> turns = sample(states, seeds, k);
            List<Integer> nextActive = new ArrayList<>();
            List<TurnState> nextStates = new ArrayList<>();
            for (int b = 0; b < turns.size(); b++) {
                R rewards = score(turns.get(b), scoring);
                episodes.get(active.get(b)).add(new Scored<>(turns.get(b), rewards));
                if (t < numTurns - 1 && !terminates.test(rewards)) {
                    nextStates.add(next(turns.get(b), first));
                    nextActive.add(active.get(b));
                }
            }
            active = nextActive;
            states = nextStates;
        }
        return episodes;
    }

    /** Per agent, the reference KL of each of its completions (a process scores its rows or its agents). */
    private double[][] referenceKls(List<long[]> promptIds, List<List<Completion>> completions) {
        int n = agents.size();
        int g = completions.get(0).size();
        double[] flat = new double[n * g];
        int[] rows = work.localRows(g);
        for (int i : rows.length == 0 ? List.<Integer>of() : HeldAgents.of(agents, work).indices()) {
            CausalLm agent = agents.get(i);
            List<long[]> ys = Arrays.stream(rows).mapToObj(r -> completions.get(i).get(r).tokenIds()).toList();
            double[] kl = ReferencePolicy.kls(agent.model(), references.reference(i), promptIds.get(i), ys,
                    agent.padId());
            for (int r = 0; r < rows.length; r++) {
                flat[i * g + rows[r]] = kl[r];
            }
        }
        double[] summed = work.sum(flat);
        return IntStream.range(0, n).mapToObj(i -> Arrays.copyOfRange(summed, i * g, i * g + g))
                .toArray(double[][]::new);
    }

    /** The completions of agents {@code which} (in that order). */
    private static List<List<List<Completion>>> sampleAgents(List<Integer> which, List<CausalLm> agents,
            AgentExecutor executor, List<List<long[]>> prompts, IntFunction<SamplingConfig> sampling, long[] seeds) {
        List<CausalLm> chosen = which.stream().map(agents::get).toList();
        IntFunction<SamplingConfig> chosenSampling = j -> sampling.apply(which.get(j));
        if (teamable(chosen, chosenSampling)) {
            List<LoraAdapter> adapters = chosen.stream().map(a -> a.model().adapter()).toList();
            return TeamGenerator.of(chosen.get(0)).generate(adapters, which.stream().map(prompts::get).toList(),
                    which.stream().map(sampling::apply).toList(), which.stream().mapToLong(i -> seeds[i]).toArray());
        }
        boolean several = which.size() > 1;
        return executor.map(which, i -> TrainerParts.ownGeneration(agents.get(i), several,
                a -> a.generator().generate(prompts.get(i), sampling.apply(i), seeds[i])));
    }

    /**
     * The sampling step: per agent, per prompt, its completions, agent i's prompts sampled with
     * {@code sampling.apply(i)} and seed {@code seeds[i]}: each agent's own generation (on its thread in
     * "mp" mode) or, for LoRA agents on one shared base that sample alike, one team generation
     * ({@link TeamGenerator}: the base read once per token step), which gives each agent the same. In a
     * run of several processes every rank gets every agent's completions, the same ones one process
     * samples: in the data split this rank samples the rows q = p·G + j of agent i it owns
     * ({@link RankWork#ownsRow}), each with the seed one process gives it ({@link Generator#rowSeed}); in
     * the agents split its agents' completions ({@code agents}, {@code prompts} null for other ranks');
     * then the rows are exchanged.
     */
    static List<List<List<Completion>>> generate(List<CausalLm> agents, AgentExecutor executor,
            List<List<long[]>> prompts, IntFunction<SamplingConfig> sampling, long[] seeds, RankWork work) {
        if (!work.distributed()) {
            return sampleAgents(IntStream.range(0, agents.size()).boxed().toList(), agents, executor, prompts,
                    sampling, seeds);
        }
        int n = prompts.size();
        List<Row> rows = new ArrayList<>(); // what this rank sampled: (agent, row, completion)
        if (work.splitsRows()) {
            executor.map(i -> TrainerParts.ownGeneration(agents.get(i), n > 1, a -> localRows(a, prompts.get(i), sampling.apply(i),
                    seeds[i], work, i))).forEach(rows::addAll);
        } else {
            List<Integer> mine = work.ownedAgents();
            List<List<List<Completion>>> out = sampleAgents(mine, agents, executor, prompts, sampling, seeds);
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
