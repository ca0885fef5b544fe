package comlrl.trainers.preference;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.checkpoint.Checkpoints;
import comlrl.data.TaskItem;
import comlrl.data.TaskSet;
import comlrl.distributed.Codecs;
import comlrl.generation.CausalLm;
import comlrl.logging.ConsoleProgress;
import comlrl.rl.JointMode;
import comlrl.generation.GenerationSettings;
import comlrl.distributed.AgentExecutor;
import comlrl.distributed.HeldAgents;
import comlrl.reward.JointRewarder;
import comlrl.generation.PromptEncoder;
import comlrl.rl.PairSelection;
import comlrl.trainers.common.ReferencePolicy;
import comlrl.distributed.RankWork;
import comlrl.trainers.common.JointRollout;
import comlrl.generation.SeedStream;
import comlrl.checkpoint.TrainerCheckpoint;
import comlrl.utils.Formatters;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.IntStream;

/**
 * Builds the offline preference set of MADPO and MARLHF (reference §7.2 steps 1–2) from the current
 * policy, in item order, and an iteration's pairs of the iterative trainers; candidates whose reward
 * is not finite are left out (counted). Per item the seeds drawn are: one per agent, then one for the
 * pair selection. The set built is kept, and checkpointed as {@code preference_pairs.json}.
 */
final class PreferenceCollector {
    private static final String SET_FILE = "preference_pairs.json";
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_MISSING_CREATOR_PROPERTIES);
    private final PreferenceConfig args;
    /** The agents this process holds (every agent, except in the agents split). */
    private final HeldAgents<CausalLm> agents;
    private final PromptEncoder promptEncoder;
    private final JointRewarder rewarder;
    private final SeedStream seeds;
    private final JointRollout rollout;
    private final ReferencePolicy reference;
    private long skippedCandidates;
    /** Where the collection's progress is shown, or null. */
    private PrintStream console;
    /** The preference set: null until built or restored. */
    private List<PreferencePair> pairs;
    /**
     * A ddp run's processes: rewards on rank 0; in the agents split each agent's ids and reference
     * log-probabilities come from its owner, so every process builds the same pairs.
     */
    private final RankWork work;
    /** Each agent's pad id (from its owner in the agents split). */
    private final long[] padIds;

    /**
     * @param generation each agent's sampling settings, with {@code preference_num_candidates} return sequences
     * @param reference the frozen initial policy for {@code dpo_reference: frozen_initial}, else null
     */
    PreferenceCollector(PreferenceConfig args, HeldAgents<CausalLm> agents,
            HeldAgents<GenerationSettings.Resolved> generation, Formatters formatters, PromptEncoder promptEncoder,
            JointRewarder rewarder, AgentExecutor executor, SeedStream seeds, ReferencePolicy reference, RankWork work) {
        this.args = args;
        this.agents = agents;
        this.promptEncoder = promptEncoder;
        this.rewarder = rewarder;
        this.seeds = seeds;
        this.work = work;
        this.rollout = JointRollout.of(agents.asList(), generation.asList(), formatters, promptEncoder, executor, work);
        this.reference = reference;
        this.padIds = agents.longsFromOwners(CausalLm::padId);
    }

    /** Shows a "preferences" progress line on {@code console} while collecting. */
    void showProgress(PrintStream console) {
        this.console = console;
    }

    private ConsoleProgress progressBar(TaskSet items) {
        return console == null ? null : new ConsoleProgress(console, items.knownSize().orElse(-1), "preferences", null);
    }

    HeldAgents<CausalLm> agents() {
        return agents;
    }

    RankWork work() {
        return work;
    }

    long skippedCandidates() {
        return skippedCandidates;
    }

    /** The preference set: collected from {@code items} the first time, then kept (or restored). */
    List<PreferencePair> preferenceSet(TaskSet items) {
        if (pairs == null) {
            pairs = collect(items);
        }
        return pairs;
    }

    int numPairs() {
        return pairs == null ? 0 : pairs.size();
    }

    /** The preference set (null before it is built). */
    List<PreferencePair> pairs() {
        return pairs;
    }

    /** Makes {@code set} the preference set a checkpoint holds (an iteration's training pairs). */
    void keep(List<PreferencePair> set) {
        pairs = set;
    }

    /** The file of the set, {@code {"built": bool, "pairs": [PreferencePair, ...]}}. */
    private record SetFile(boolean built, List<PreferencePair> pairs) {
    }

    /** The preference set of the collector {@code of} supplies, as {@code preference_pairs.json}. */
    static TrainerCheckpoint.Part checkpointPart(Supplier<PreferenceCollector> of) {
        return TrainerCheckpoint.Part.of(dir -> {
            List<PreferencePair> pairs = of.get().pairs;
            Checkpoints.writeJson(dir.resolve(SET_FILE), new SetFile(pairs != null, pairs == null ? List.of() : pairs));
        }, dir -> {
            Path file = dir.resolve(SET_FILE);
            if (!Files.isRegularFile(file)) {
                throw new IllegalArgumentException(dir + " has no " + SET_FILE + " (the preference set of a "
                        + "preference-learning run)");
            }
            try {
                SetFile set = JSON.readValue(file.toFile(), SetFile.class);
                of.get().pairs = set.built() ? List.copyOf(set.pairs()) : null;
            } catch (IOException | RuntimeException e) {
                throw new IllegalArgumentException("Malformed " + file + ": " + e.getMessage()
                        + "; resume from an intact checkpoint", e);
            }
        });
    }

    /** The preference pairs of every item; fails when no item yields one (every candidate tied). */
    List<PreferencePair> collect(TaskSet items) {
        List<PreferencePair> out = new ArrayList<>();
        int c = args.preferenceNumCandidates();
        long b = 0;
        ConsoleProgress bar = progressBar(items);
        for (TaskItem item : items) {
            JointRollout.Scored<double[]> scored = rollout.expand(rollout.start(item, "preference item " + b++), seeds,
                    c, JointRollout.Scoring.jointActions(rewarder, JointMode.ALIGNED));
            double[] rewards = scored.rewards();
            if (bar != null) {
                bar.advance(1);
            }
            JointRollout.Turn candidates = scored.turn();
            int[] kept = IntStream.range(0, c).filter(k -> Double.isFinite(rewards[k])).toArray();
            skippedCandidates += c - kept.length;
            double[] finite = Arrays.stream(kept).mapToDouble(k -> rewards[k]).toArray();
            double mean = Arrays.stream(finite).average().orElse(0);
            long pairSeed = seeds.next();
            if (kept.length < 2) {
                continue;
            }
            for (PairSelection.Pair ranked : args.pairSelection().pairs(finite, args.preferencePairsPerSample(),
                    pairSeed)) {
                int winner = kept[ranked.winner()];
                int loser = kept[ranked.loser()];
                out.add(pair(candidates, winner, loser, rewards[winner], rewards[loser], mean));
            }
        }
        if (out.isEmpty()) {
            throw new IllegalStateException("No preference pairs: every item's " + args.preferenceNumCandidates()
                    + " candidates scored the same reward (ties are dropped); use a reward that tells candidates apart, "
                    + "more candidates (preference_num_candidates) or a higher temperature");
        }
        return out;
    }

    /**
     * One iteration's pairs (reference §7.4 steps 1–2) as replay records, by the iterative config's
     * {@code selection} and {@code limit}; an index where either side's reward is not finite is dropped.
     * Seeds per item: one per agent (current), one per agent from {@code comparatorSeeds}, one for the order.
     */
    Round collectAgainst(TaskSet items, ComparatorSource comparator, int comparatorCount, SeedStream comparatorSeeds,
            PairSelection selection, Integer limit) {
        int numAgents = agents.size();
        List<PreferenceReplay.ReplayRecord> out = new ArrayList<>();
        List<Double> currentRewards = new ArrayList<>();
        List<Double> comparatorRewards = new ArrayList<>();
        List<Double> selectedCurrent = new ArrayList<>();
        List<Double> selectedComparator = new ArrayList<>();
        long b = 0;
        ConsoleProgress bar = progressBar(items);
        for (TaskItem item : items) {
            String label = "preference item " + b++;
            JointRollout.TurnState start = rollout.start(item, label);
            List<String> promptTexts = start.prompts();
            JointRollout.Turn current = rollout.sample(start, seeds, args.preferenceNumCandidates());
            long[] comparatorRowSeeds = IntStream.range(0, numAgents).mapToLong(i -> comparatorSeeds.next()).toArray();
            // the comparator sees this process's agents' prompt ids (the agents split: null for the others')
            List<long[]> prompts = IntStream.range(0, numAgents)
                    .mapToObj(i -> work.ownsAgent(i) ? current.promptIds().get(i) : null).toList();
            // a ddp run: the comparator runs on rank 0 (or per process for its agents), the task reward on rank 0
            List<List<String>> others = comparator.perProcess()
                    ? merged(work.gather(comparator.generate(item, List.copyOf(promptTexts), prompts, comparatorCount,
                            comparatorRowSeeds), Codecs.listOf(Codecs.nullable(Codecs.STRINGS))))
                    : work.onMain("generating the comparator's candidates of " + label,
                            () -> comparator.generate(item, List.copyOf(promptTexts), prompts, comparatorCount,
                                    comparatorRowSeeds), Codecs.listOf(Codecs.STRINGS));
            int c = args.preferenceNumCandidates();
            List<List<String>> comparatorJoints = IntStream.range(0, comparatorCount)
                    .mapToObj(k -> others.stream().map(o -> o.get(k)).toList()).toList();
            // per candidate: current processed, current raw, then the comparator's
            double[][] scored = work.onMain("computing the rewards of " + label, () -> {
                double[][] currentScores = scores(item, IntStream.range(0, c).mapToObj(current::joint).toList(),
                        label + " (current)");
                double[][] comparatorScores = scores(item, comparatorJoints, label + " (comparator)");
                return new double[][] {currentScores[0], currentScores[1], comparatorScores[0], comparatorScores[1]};
            }, Codecs.DOUBLE_MATRIX);
            double[] cur = scored[0];
            double[] curRaw = scored[1];
            double[] cmp = scored[2];
            double[] cmpRaw = scored[3];
            Arrays.stream(curRaw).forEach(currentRewards::add);
            Arrays.stream(cmpRaw).forEach(comparatorRewards::add);
            int m = Math.min(c, comparatorCount);
            int[] kept = IntStream.range(0, m).filter(k -> Double.isFinite(cur[k]) && Double.isFinite(cmp[k])).toArray();
            skippedCandidates += m - kept.length;
            double mean = Arrays.stream(cur).filter(Double::isFinite).average().orElse(0);
            long pairSeed = seeds.next();
            double[] keptCur = Arrays.stream(kept).mapToDouble(k -> cur[k]).toArray();
            double[] keptCmp = Arrays.stream(kept).mapToDouble(k -> cmp[k]).toArray();
            for (PairSelection.AlignedPair p : selection.aligned(keptCur, keptCmp, limit, pairSeed)) {
                int k = kept[p.index()];
                selectedCurrent.add(curRaw[k]);
                selectedComparator.add(cmpRaw[k]);
                List<String> currentTexts = current.joint(k);
                List<String> comparatorTexts = comparatorJoints.get(k);
                out.add(new PreferenceReplay.ReplayRecord(promptTexts, p.currentWins() ? currentTexts : comparatorTexts,
                        p.currentWins() ? comparatorTexts : currentTexts, p.winnerReward(), p.loserReward(), mean));
            }
            if (bar != null) {
                bar.advance(1);
            }
        }
        return new Round(out, currentRewards, comparatorRewards, selectedCurrent, selectedComparator);
    }

    /** Each joint response's processed (row 0) and raw (row 1) task reward, in order. */
    private double[][] scores(TaskItem item, List<List<String>> joints, String label) {
        double[][] r = new double[2][joints.size()];
        for (int k = 0; k < joints.size(); k++) {
            JointRewarder.Scored one = rewarder.score(item, joints.get(k), label);
            r[0][k] = one.processed();
            r[1][k] = one.raw();
        }
        return r;
    }

    /** An iteration's new pairs, the raw rewards of every candidate, and those of each selected pair's sides. */
    record Round(List<PreferenceReplay.ReplayRecord> records, List<Double> currentRewards, List<Double> comparatorRewards,
            List<Double> selectedCurrentRewards, List<Double> selectedComparatorRewards) {
    }

    /** Per agent, the one non-null list of the processes' (each gave the agents it generated for). */
    private static List<List<String>> merged(List<List<List<String>>> byRank) {
        return IntStream.range(0, byRank.get(0).size()).mapToObj(i -> byRank.stream().map(rank -> rank.get(i))
                .filter(java.util.Objects::nonNull).findFirst().orElseThrow(() -> new IllegalStateException(
                        "no process generated the comparator candidates of agent " + i))).toList();
    }

    /**
     * Training pairs from replay records: prompts encoded as the trainer encodes them, completions
     * re-tokenised without special tokens and cut at the first pad (by each agent's owner).
     */
    List<PreferencePair> fromRecords(List<PreferenceReplay.ReplayRecord> records) {
        // per agent: [prompts, winners, losers], each one id array per record
        List<List<List<long[]>>> all = agents.mapIndexed((i, agent) -> {
            List<List<long[]>> ids = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
            for (PreferenceReplay.ReplayRecord r : records) {
                ids.get(0).add(promptEncoder.encode(agent, r.promptTexts().get(i)));
                ids.get(1).add(MADPOLoss.completionTokens(agent.tokenizer().encode(r.winnerTexts().get(i), false),
                        padIds[i]));
                ids.get(2).add(MADPOLoss.completionTokens(agent.tokenizer().encode(r.loserTexts().get(i), false),
                        padIds[i]));
            }
            return ids;
        }).fromOwners(Codecs.listOf(Codecs.listOf(Codecs.LONGS)));
        List<PreferencePair> out = new ArrayList<>();
        for (int k = 0; k < records.size(); k++) {
            PreferenceReplay.ReplayRecord r = records.get(k);
            int record = k;
            List<long[]> prompts = all.stream().map(ids -> ids.get(0).get(record)).toList();
            List<long[]> w = all.stream().map(ids -> ids.get(1).get(record)).toList();
            List<long[]> l = all.stream().map(ids -> ids.get(2).get(record)).toList();
            double[][] ref = referenceLogprobs(prompts, w, l);
            out.add(new PreferencePair(r.promptTexts(), r.winnerTexts(), r.loserTexts(), prompts, w, l, r.winnerReward(),
                    r.loserReward(), r.candidateRewardMean(), ref[0], ref[1]));
        }
        return out;
    }

    /** Each agent's frozen log π_ref(w|x) and log π_ref(l|x) (by its owner), or nulls without a reference. */
    private double[][] referenceLogprobs(List<long[]> prompts, List<long[]> w, List<long[]> l) {
        if (reference == null) {
            return new double[2][];
        }
        List<double[]> all = agents.mapIndexed((i, agent) -> {
            MADPOLoss.SequenceLogprobs r = MADPOLoss.logprobs(reference.reference(i), List.of(prompts.get(i)),
                    List.of(w.get(i)), List.of(l.get(i)), padIds[i]);
            return new double[] {r.winners()[0], r.losers()[0]};
        }).fromOwners(Codecs.DOUBLES);
        return new double[][] {all.stream().mapToDouble(r -> r[0]).toArray(), all.stream().mapToDouble(r -> r[1]).toArray()};
    }

    private PreferencePair pair(JointRollout.Turn candidates, int winner, int loser, double winnerReward,
            double loserReward, double mean) {
        List<long[]> w = IntStream.range(0, agents.size()).mapToObj(i -> MADPOLoss.completionTokens(
                candidates.completions().get(i).get(winner).tokenIds(), padIds[i])).toList();
        List<long[]> l = IntStream.range(0, agents.size()).mapToObj(i -> MADPOLoss.completionTokens(
                candidates.completions().get(i).get(loser).tokenIds(), padIds[i])).toList();
        double[][] ref = referenceLogprobs(candidates.promptIds(), w, l);
        return new PreferencePair(candidates.state().prompts(), candidates.joint(winner), candidates.joint(loser),
                candidates.promptIds(), w, l, winnerReward, loserReward, mean, ref[0], ref[1]);
    }
}
