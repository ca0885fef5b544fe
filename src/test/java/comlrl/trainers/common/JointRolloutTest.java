package comlrl.trainers.common;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.data.TaskItem;
import comlrl.distributed.AgentExecutor;
import comlrl.distributed.HeldAgents;
import comlrl.distributed.RankWork;
import comlrl.generation.CausalLm;
import comlrl.generation.Completion;
import comlrl.generation.GenerationSettings;
import comlrl.generation.Generator;
import comlrl.generation.PromptEncoder;
import comlrl.generation.SeedStream;
import comlrl.model.DecoderLm;
import comlrl.reward.JointRewarder;
import comlrl.reward.RewardFunction;
import comlrl.rl.JointMode;
import comlrl.tensor.Device;
import comlrl.trainers.TinyAgents;
import comlrl.trainers.TransitionContext;
import comlrl.utils.Formatters;
import comlrl.utils.RewardProcessors;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The rollout engine on two tiny agents: what each step hands the next (prompts, seeds, histories,
 * joint actions), checked against values built by hand from the sampled completions.
 */
class JointRolloutTest {
    @TempDir
    static Path models;
    static List<CausalLm> agents;
    static List<GenerationSettings.Resolved> generation;
    static AgentExecutor executor;

    @BeforeAll
    static void load() {
        agents = List.of(CausalLm.load(TinyAgents.create(models.resolve("a"), 3).toString(), null, Device.CPU),
                CausalLm.load(TinyAgents.create(models.resolve("b"), 4).toString(), null, Device.CPU));
        generation = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            generation.add(AgentGeneration.resolve(i, agents.get(i), Map.of(), 1.0, 1.0, 0, 5, 2));
        }
        executor = AgentExecutor.create(2, false);
    }

    @AfterAll
    static void close() {
        executor.close();
        agents.forEach(CausalLm::close);
    }

    /** Agent i's prompt: "[i] " + the item's prompt. */
    static final Formatters FORMATTERS = Formatters.build(List.<comlrl.utils.Formatter>of(item -> "[0] " + item.getString("prompt", ""),
            item -> "[1] " + item.getString("prompt", "")), 2);
    /** The two agents in one process. */
    static final RankWork ONE = RankWork.single(2);

    /** The reward of a joint response: 1000·h(c_0) + h(c_1), h a text's hash code mod 997 (tells texts apart). */
    static final RewardFunction HASHES = (completions, items) -> List.of(
            1000.0 * code(completions.get(0).get(0)) + code(completions.get(1).get(0)));

    static int code(String text) {
        return Math.floorMod(text.hashCode(), 997);
    }

    static JointRewarder rewarder() {
        return new JointRewarder(HASHES, RewardProcessors.identity(), 2, 2, "MAGRPO", false);
    }

    static int hashOf(Completion c) {
        return code(c.text());
    }

    @Test
    void aCrossNodeScoresEveryJointActionAndSamplesWithOneSeedPerAgent() {
        JointRollout engine = JointRollout.of(agents, generation, FORMATTERS, PromptEncoder.plain(), executor, ONE);
        TaskItem item = TaskItem.of(Map.of("prompt", "Say hello."));
        SeedStream seeds = new SeedStream(11);
        JointRollout.Scored<double[]> node = engine.expand(engine.start(item, "item 0"), seeds, 2,
                JointRollout.Scoring.jointActions(rewarder(), JointMode.CROSS));
        assertThat(seeds.position()).isEqualTo(2); // one seed per agent
        JointRollout.Turn turn = node.turn();
        assertThat(turn.state().prompts()).containsExactly("[0] Say hello.", "[1] Say hello.");
        // the same completions as each agent's own generate call with its seed (seed k of stream 11)
        SeedStream again = new SeedStream(11);
        for (int i = 0; i < 2; i++) {
            long seed = again.next();
            List<Completion> own = agents.get(i).generator().generate(List.of(agents.get(i).encode(turn.state()
                    .prompts().get(i))), generation.get(i).sampling(), seed).get(0);
            assertThat(turn.promptIds().get(i)).containsExactly(agents.get(i).encode(turn.state().prompts().get(i)));
            for (int k = 0; k < 2; k++) {
                assertThat(turn.completions().get(i).get(k).tokenIds()).containsExactly(own.get(k).tokenIds());
            }
        }
        // cross: joint j = (⌊j/2⌋, j mod 2), agent 0 slowest; r_j = 1000·h(c_0[j/2]) + h(c_1[j%2])
        List<Completion> c0 = turn.completions().get(0);
        List<Completion> c1 = turn.completions().get(1);
        assertThat(hashOf(c0.get(0))).isNotEqualTo(hashOf(c0.get(1))); // the joint actions differ
        assertThat(hashOf(c1.get(0))).isNotEqualTo(hashOf(c1.get(1)));
        assertThat(node.rewards()).containsExactly(1000.0 * hashOf(c0.get(0)) + hashOf(c1.get(0)),
                1000.0 * hashOf(c0.get(0)) + hashOf(c1.get(1)), 1000.0 * hashOf(c0.get(1)) + hashOf(c1.get(0)),
                1000.0 * hashOf(c0.get(1)) + hashOf(c1.get(1)));
        assertThat(turn.referenceKls()).isNull();
    }

    @Test
    void aLinearEpisodeCarriesHistoriesAndTheTransitionsPromptsToTheNextTurn() {
        List<TransitionContext> calls = new ArrayList<>();
        Transitions transitions = new Transitions(ctx -> {
            calls.add(ctx);
            int turn = ctx.promptHistoryPerAgent().get(0).size();
            return List.of("next A" + turn, "next B" + turn);
        }, 2);
        JointRollout engine = JointRollout.of(agents, generation, FORMATTERS, PromptEncoder.plain(), executor, ONE)
                .withTransitions(transitions, false);
        TaskItem item = TaskItem.of(Map.of("prompt", "Say hello."));
        SeedStream seeds = new SeedStream(5);
        List<JointRollout.Scored<double[]>> episode = engine.rollout(List.of(engine.start(item, "item 0")), seeds, 2,
                JointRollout.Scoring.jointActions(rewarder(), JointMode.ALIGNED), 3, r -> false).get(0);
        assertThat(episode).hasSize(3);
        assertThat(seeds.position()).isEqualTo(6); // 2 agents × 3 turns
        assertThat(calls).hasSize(2); // between turns only

        JointRollout.Turn first = episode.get(0).turn();
        JointRollout.Turn second = episode.get(1).turn();
        JointRollout.Turn third = episode.get(2).turn();
        // turn 2's prompts: the formatter on the item whose prompt is the external one
        assertThat(second.state().turn()).isEqualTo(1);
        assertThat(second.state().prompts()).containsExactly("[0] next A1", "[1] next B1");
        assertThat(third.state().prompts()).containsExactly("[0] next A2", "[1] next B2");
        // the transition after turn 1 sees the formatted prompts and every agent's first completion
        TransitionContext afterFirst = calls.get(0);
        assertThat(afterFirst.agentCompletions()).containsExactly(first.completions().get(0).get(0).text(),
                first.completions().get(1).get(0).text());
        assertThat(afterFirst.promptHistoryPerAgent()).containsExactly(List.of("[0] Say hello."),
                List.of("[1] Say hello."));
        // after turn 2 the histories record the raw external prompts (not the formatted ones)
        TransitionContext afterSecond = calls.get(1);
        assertThat(afterSecond.promptHistoryPerAgent()).containsExactly(List.of("[0] Say hello.", "next A1"),
                List.of("[1] Say hello.", "next B1"));
        assertThat(afterSecond.responseHistoryPerAgent().get(1)).containsExactly(
                first.completions().get(1).get(0).text(), second.completions().get(1).get(0).text());
        // aligned rewards: r_k = 1000·h(c_0[k]) + h(c_1[k])
        for (JointRollout.Scored<double[]> s : episode) {
            List<List<Completion>> c = s.turn().completions();
            assertThat(s.rewards()).containsExactly(1000.0 * hashOf(c.get(0).get(0)) + hashOf(c.get(1).get(0)),
                    1000.0 * hashOf(c.get(0).get(1)) + hashOf(c.get(1).get(1)));
        }
    }

    @Test
    void anEpisodeStopsWhenItsRewardsTerminateIt() {
        List<TransitionContext> calls = new ArrayList<>();
        JointRollout engine = JointRollout.of(agents, generation, FORMATTERS, PromptEncoder.plain(), executor, ONE)
                .withTransitions(new Transitions(ctx -> {
                    calls.add(ctx);
                    return List.of("a", "b");
                }, 2), false);
        TaskItem item = TaskItem.of(Map.of("prompt", "Say hello."));
        List<JointRollout.Scored<double[]>> episode = engine.rollout(List.of(engine.start(item, "item 0")),
                new SeedStream(5), 2, JointRollout.Scoring.jointActions(rewarder(), JointMode.ALIGNED), 3,
                r -> true).get(0);
        assertThat(episode).hasSize(1);
        assertThat(calls).isEmpty();
    }

    /**
     * The reference KL of each completion, {@code Σ_t (e^{d_t} − d_t − 1)} with
     * {@code d_t = log π_ref(y_t) − log π(y_t)} at temperature 1 though sampling ran at temperature 0.5
     * with top-p 0.9, against the two models scoring each completion alone. Agent i's reference here is
     * the other agent, so every d_t is far from 0. The engine scores the group as one padded batch: per
     * token each log-probability is off by at most {@code 2·forwardBound + u·m} (m = ln V + 2·max|z|,
     * {@link comlrl.tensor.Rounding#logprobSumBound}), so d_t moves by at most δ = twice that for each
     * side, and the k3 term {@code e^d − d − 1} by at most {@code |e^d − 1|·δ + e^{d+δ}·δ²/2}.
     */
    @Test
    void theReferenceKlComparesThePolicyAndTheReferenceAtTemperatureOne() {
        List<GenerationSettings.Resolved> warm = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            warm.add(AgentGeneration.resolve(i, agents.get(i), Map.of(), 0.5, 0.9, 0, 5, 2));
        }
        HeldAgents<DecoderLm> swapped = HeldAgents.of(List.of(agents.get(1).model(), agents.get(0).model()),
                RankWork.single(2));
        try (ReferencePolicy crossed = new ReferencePolicy(swapped, List.of(Device.CPU, Device.CPU))) {
            JointRollout engine = JointRollout.of(agents, warm, FORMATTERS, PromptEncoder.plain(), executor, ONE)
                    .withReferences(crossed);
            JointRollout.Turn turn = engine.sample(engine.start(TaskItem.of(Map.of("prompt", "Say hello.")), "item 0"),
                    new SeedStream(3), 2);
            double m = Math.log(515) + 2 * 1.0; // the tiny agents: V = 515, logits below 1
            double delta = 2 * 2 * (2 * comlrl.tensor.Rounding.forwardBound(64, 2, 1.0) + comlrl.tensor.Rounding.U * m);
            for (int i = 0; i < 2; i++) {
                long pad = agents.get(i).padId();
                for (int k = 0; k < 2; k++) {
                    long[] y = turn.completions().get(i).get(k).tokenIds();
                    int window = comlrl.rl.ReferenceKl.responseLength(y, pad);
                    double[] pol = scores(agents.get(i), turn.promptIds().get(i), y);
                    double[] ref = scores(agents.get(1 - i), turn.promptIds().get(i), y);
                    double want = 0;
                    double bound = 0;
                    for (int t = 0; t < window; t++) {
                        double d = ref[t] - pol[t];
                        want += Math.exp(d) - d - 1;
                        bound += Math.abs(Math.exp(d) - 1) * delta + Math.exp(d + delta) * delta * delta / 2;
                    }
                    assertThat(want).as("agent %d completion %d differs from its reference", i, k).isGreaterThan(100 * bound);
                    assertThat(turn.referenceKls()[i][k]).isCloseTo(want, org.assertj.core.api.Assertions.within(bound));
                }
            }
        }
    }

    /** log π(y_t) of each token of {@code y} after {@code prompt}, {@code lm} scoring y alone. */
    static double[] scores(CausalLm lm, long[] prompt, long[] y) {
        try (comlrl.tensor.Scope s = comlrl.tensor.Scope.open(); comlrl.tensor.GradMode g = comlrl.tensor.GradMode.noGrad()) {
            return comlrl.generation.Scorer.score(lm.model(), List.of(prompt), List.of(y), 0).tokenLogprobs()
                    .toDoubleArray();
        }
    }

    @Test
    void anEvaluationStreamIsApartFromTrainingAndGoesOnAcrossEvaluations() {
        SeedStream training = new SeedStream(7);
        training.next();
        training.next();
        SeedStream eval = training.evaluation();
        // hand-worked: seed 7 ^ 0x6576616C ("eval"), position 0
        assertThat(eval.next()).isEqualTo(Generator.rowSeed(7L ^ 0x6576616CL, 0, 0));
        assertThat(eval.next()).isEqualTo(Generator.rowSeed(7L ^ 0x6576616CL, 0, 1));
        assertThat(training.position()).isEqualTo(2); // evaluation drew none of training's seeds
        // the next evaluation continues the stream (repeated evaluations sample anew), and its position is
        // what a checkpoint keeps beside training's
        assertThat(training.evaluation().next()).isEqualTo(Generator.rowSeed(7L ^ 0x6576616CL, 0, 2));
        assertThat(training.evaluationPosition()).isEqualTo(3);
        training.restoreEvaluation(1);
        assertThat(training.evaluation().next()).isEqualTo(Generator.rowSeed(7L ^ 0x6576616CL, 0, 1));
        assertThat(training.position()).isEqualTo(2);
    }
}
