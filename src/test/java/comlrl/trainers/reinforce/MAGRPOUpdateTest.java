package comlrl.trainers.reinforce;

import static comlrl.trainers.reinforce.ReinforceFixtures.fast;
import static comlrl.trainers.reinforce.ReinforceFixtures.ownLength;
import static comlrl.trainers.reinforce.ReinforceFixtures.tasks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import comlrl.data.Dataset;
import comlrl.data.TaskItem;
import comlrl.generation.CausalLm;
import comlrl.generation.Completion;
import comlrl.generation.Generator;
import comlrl.generation.SamplingConfig;
import comlrl.generation.Scorer;
import comlrl.reward.RewardFunction;
import comlrl.rl.AdvantageMode;
import comlrl.rl.Advantages;
import comlrl.tensor.Rounding;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import comlrl.trainers.TinyAgents;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gradient of one MAGRPO update, as the trainer accumulates it just before its optimizer step,
 * equals the policy gradient worked out independently (values, not only signs):
 * <pre>
 *   A   = normalise(R − mean R)                              (rl.Advantages, mode "mean")
 *   L_s = (1/G) Σ_k −A_k · Σ_t log π(y_{k,t} | x, y_{k,<t})   (each completion scored alone: no padding)
 *   g   = ∇ (1/|minibatch|) Σ_s L_s
 * </pre>
 * The agent's generation config treats every printable-ASCII byte token as end-of-sequence, so the G
 * completions of a group have different lengths and the trainer's batched scoring pads them; the
 * hand-worked gradient scores each completion alone, so equality also shows that padding never
 * enters the loss (unlike the reference, §14 item 6).
 */
class MAGRPOUpdateTest {
    private static final double LR = 1e-3;

    @TempDir
    static Path models;
    static Path agent;

    @BeforeAll
    static void writeAgent() {
        List<Long> printable = LongStream.rangeClosed(33, 126).boxed().toList();
        agent = TinyAgents.create(models.resolve("agent"), 11, printable);
    }

    /** The reward inputs the trainer produced: completion texts of agent 0, in call order. */
    static final class Recorder implements RewardFunction {
        final List<String> texts = Collections.synchronizedList(new ArrayList<>());

        @Override
        public List<Double> score(List<List<String>> agentCompletions, List<TaskItem> batchItems) {
            texts.addAll(agentCompletions.get(0));
            return ownLength().score(agentCompletions, batchItems);
        }
    }

    /** One rollout-tree node of a single agent, regenerated independently of the trainer. */
    record Group(long[] promptIds, List<long[]> completions, double[] advantages) {
    }

    private static MAGRPOConfig.Builder<MAGRPOConfig> config() {
        return fast(MAGRPOConfig.builder()).numGenerations(4).maxNewTokens(8).agentLearningRate(LR);
    }

    /**
     * Samples the rollout of one node as the trainer does (the node's sampling seed is the trainer's
     * documented stream, {@code rowSeed(seed, 0, counter)} with one draw per node, then the
     * generator's per-row seeds) and works out its advantages with the reward {@code len(text)/10}.
     */
    private static Group rollout(CausalLm lm, MAGRPOConfig config, String prompt, int seedCounter, List<String> texts) {
        long[] promptIds = lm.encode(prompt);
        SamplingConfig sampling = SamplingConfig.sample(config.temperature(), config.topK(), config.topP(),
                config.maxNewTokens(), config.numGenerations());
        List<Completion> group = lm.generator().generate(List.of(promptIds), sampling,
                Generator.rowSeed(config.seed(), 0, seedCounter)).get(0);
        texts.addAll(group.stream().map(Completion::text).toList());
        double[] returns = group.stream().mapToDouble(c -> c.text().length() / 10.0).toArray();
        double[] advantages = Advantages.compute(returns, AdvantageMode.MEAN, true);
        return new Group(promptIds, group.stream().map(Completion::tokenIds).toList(), advantages);
    }

    /** {@link #rollout} of item {@code seedCounter}, checked to be what the trainer's reward function saw. */
    private static Group regenerate(CausalLm lm, MAGRPOConfig config, String prompt, int seedCounter,
            List<String> seenTexts) {
        List<String> texts = new ArrayList<>();
        Group group = rollout(lm, config, prompt, seedCounter, texts);
        assertThat(texts).as("regenerated rollout").isEqualTo(seenTexts);
        return group;
    }

    /**
     * L_s of one group with every completion scored on its own (no padding); returns the loss
     * tensor (with a graph) inside the caller's scope.
     */
    private static Tensor unpaddedLoss(CausalLm lm, Group s) {
        Tensor loss = null;
        int g = s.completions().size();
        for (int k = 0; k < g; k++) {
            Tensor logp = Scorer.score(lm.model(), List.of(s.promptIds()), List.of(s.completions().get(k)), lm.padId())
                    .sequenceLogprobs().sum();                                  // Σ_t log π(y_kt)
            Tensor term = logp.mul(-s.advantages()[k] / g);                     // −A_k/G · Σ_t log π
            loss = loss == null ? term : loss.add(term);
        }
        return loss;
    }

    /** L_s of one group scored as one left-padded batch with {@code padId}. */
    private static Tensor paddedLoss(CausalLm lm, Group s, long padId) {
        int g = s.completions().size();
        Tensor seqLogp = Scorer.score(lm.model(), Collections.nCopies(g, s.promptIds()), s.completions(), padId)
                .sequenceLogprobs();                                            // [G]
        double[] weights = new double[g];
        for (int k = 0; k < g; k++) {
            weights[k] = -s.advantages()[k] / g;
        }
        return seqLogp.mul(Tensor.ofDoubles(weights, lm.model().device()).toFloat()).sum();
    }

    /** Every parameter's gradient after {@code loss.backward()}, by name (zeros where none). */
    private static Map<String, float[]> gradients(CausalLm lm) {
        Map<String, float[]> out = new LinkedHashMap<>();
        for (Map.Entry<String, Tensor> e : lm.model().namedParameters().entrySet()) {
            Tensor grad = e.getValue().grad();
            out.put(e.getKey(), grad == null ? new float[(int) e.getValue().numel()] : grad.toFloatArray());
        }
        return out;
    }

    /** The gradients of agent 0 just before each of its optimizer steps, by name. */
    static final class GradientRecorder implements java.util.function.BiConsumer<Integer, comlrl.model.DecoderLm> {
        final List<Map<String, float[]>> steps = new ArrayList<>();

        @Override
        public void accept(Integer agent, comlrl.model.DecoderLm model) {
            Map<String, float[]> out = new LinkedHashMap<>();
            for (Map.Entry<String, Tensor> e : model.namedParameters().entrySet()) {
                Tensor grad = e.getValue().grad();
                out.put(e.getKey(), grad == null ? new float[(int) e.getValue().numel()] : grad.toFloatArray());
            }
            steps.add(out);
        }
    }

    /**
     * Token positions a weight's gradient sums over, at most, in these tests' updates: 2 groups of
     * G = 4 rows, each a prompt of at most 17 tokens ({@code tasks()}) and at most 8 new tokens.
     */
    static final int POSITIONS = 2 * 4 * (17 + 8);
    /**
     * How far the logged loss may be from the one worked out here ({@link Rounding#logprobSumBound}):
     * completions of at most 8 tokens, the tiny agents' shape (V = 515, products of at most K = 64
     * terms, L = 2 layers, logits below 1: 0.5 measured), weights −A_k/G with Σ|w| ≤ 1.
     */
    static final double LOSS_TOLERANCE = Rounding.logprobSumBound(8, 515, 64, 2, 1.0, 1.0);

    /** {@code got} equals {@code want} up to float32 rounding ({@link Rounding}), and is not trivially zero. */
    static void assertSameGradients(Map<String, float[]> got, Map<String, float[]> want) {
        Rounding.assertSameGradients(got, want, POSITIONS);
    }

    @Test
    void oneUpdateIsThePolicyGradientWorkedByHand() {
        Recorder reward = new Recorder();
        MAGRPOConfig config = config().rolloutBufferSize(1).build();
        Dataset data = tasks(1);
        GradientRecorder recorded = new GradientRecorder();
        double loggedLoss;
        try (MAGRPOTrainer trainer = MAGRPOTrainer.builder().agentModel(agent.toString()).numAgents(1)
                .rewardFunc(reward).trainDataset(data).args(config).verbose(false).gradientObserver(recorded).build()) {
            trainer.train();
            assertThat(trainer.envStep()).isEqualTo(4);
            assertThat(trainer.logHistory()).hasSize(1);
            loggedLoss = trainer.logHistory().get(0).get("turn_1/policy_loss");
        }
        assertThat(recorded.steps).hasSize(1);
        try (CausalLm lm = TinyAgents.load(agent); Scope scope = Scope.open()) {
            Group s = regenerate(lm, config, data.get(0).getString("prompt"), 0, reward.texts);
            assertThat(s.completions().stream().mapToInt(y -> y.length).distinct().count())
                    .as("completion lengths differ, so the trainer's batch was padded").isGreaterThan(1);
            Tensor loss = unpaddedLoss(lm, s);
            assertThat(loggedLoss).isCloseTo(loss.item(), within(LOSS_TOLERANCE));
            loss.backward();
            assertSameGradients(recorded.steps.get(0), gradients(lm));
        }
    }

    @Test
    void gradientAccumulationWeighsEachNodeByOneOverTheMinibatch() {
        // two items, one buffer of 2 NodeSamples, one minibatch: g = ∇ (L_1 + L_2) / 2
        Recorder reward = new Recorder();
        MAGRPOConfig config = config().rolloutBufferSize(2).build();
        Dataset data = tasks(2);
        GradientRecorder recorded = new GradientRecorder();
        double loggedLoss;
        try (MAGRPOTrainer trainer = MAGRPOTrainer.builder().agentModel(agent.toString()).numAgents(1)
                .rewardFunc(reward).trainDataset(data).args(config).verbose(false).gradientObserver(recorded).build()) {
            trainer.train();
            assertThat(trainer.logHistory()).hasSize(1);
            loggedLoss = trainer.logHistory().get(0).get("turn_1/policy_loss");
        }
        assertThat(recorded.steps).hasSize(1);
        try (CausalLm lm = TinyAgents.load(agent); Scope scope = Scope.open()) {
            Group s1 = regenerate(lm, config, data.get(0).getString("prompt"), 0, reward.texts.subList(0, 4));
            Group s2 = regenerate(lm, config, data.get(1).getString("prompt"), 1, reward.texts.subList(4, 8));
            Tensor l1 = unpaddedLoss(lm, s1);
            Tensor l2 = unpaddedLoss(lm, s2);
            assertThat(loggedLoss).isCloseTo((l1.item() + l2.item()) / 2, within(LOSS_TOLERANCE));
            l1.add(l2).div(2).backward();
            assertSameGradients(recorded.steps.get(0), gradients(lm));
        }
    }

    @Test
    void padTokensDoNotEnterTheLoss() {
        MAGRPOConfig config = config().build();
        try (CausalLm lm = TinyAgents.load(agent)) {
            // a rollout of this agent: completions of different lengths
            Group s = rollout(lm, config, "Say hello.", 0, new ArrayList<>());
            assertThat(s.completions().stream().mapToInt(y -> y.length).distinct().count()).isGreaterThan(1);
            List<Map<String, float[]>> grads = new ArrayList<>();
            List<Double> losses = new ArrayList<>();
            for (int variant = 0; variant < 3; variant++) {
                try (Scope scope = Scope.open()) {
                    lm.model().parameters().forEach(Tensor::zeroGrad);
                    Tensor loss = switch (variant) {
                        case 0 -> unpaddedLoss(lm, s);
                        case 1 -> paddedLoss(lm, s, lm.padId());      // the tokenizer's pad (= eos)
                        default -> paddedLoss(lm, s, 7);              // an ordinary byte token
                    };
                    losses.add(loss.item());
                    loss.backward();
                    grads.add(gradients(lm));
                }
            }
            assertThat(losses.get(1)).isCloseTo(losses.get(0), within(LOSS_TOLERANCE));
            assertThat(losses.get(2)).isEqualTo(losses.get(1));
            for (String name : grads.get(0).keySet()) {
                float[] unpadded = grads.get(0).get(name);
                float[] padA = grads.get(1).get(name);
                float[] padB = grads.get(2).get(name);
                for (int j = 0; j < unpadded.length; j++) {
                    assertThat(padB[j]).as("%s[%d] with another pad id", name, j).isEqualTo(padA[j]);
                    assertThat((double) padA[j]).as("%s[%d] padded vs alone", name, j)
                            .isCloseTo(unpadded[j], within(1e-5 + 1e-4 * Math.abs(unpadded[j])));
                }
            }
        }
    }
}
