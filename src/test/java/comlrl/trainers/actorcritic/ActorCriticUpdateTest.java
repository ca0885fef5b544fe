package comlrl.trainers.actorcritic;

import static comlrl.trainers.actorcritic.ActorCriticTrainerTest.tasks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import comlrl.generation.CausalLm;
import comlrl.generation.Scorer;
import comlrl.model.ValueHead;
import comlrl.reward.RewardFunction;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import comlrl.trainers.TinyAgents;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One update of each actor-critic trainer equals its formula worked out independently: the
 * gradients the trainer accumulated just before its optimizer steps equal those of
 * <pre>
 *   Â_j        = (A_j − mean A) / std_pop A,   A_j = y_j − V_old_j        (y_j = r_j, single turn)
 *   actor_loss = (1/B) Σ_j −Â_j · Σ_t log π(y_{j,t})                      (each sequence scored alone)
 *   value_loss = (1/B) Σ_j (y_j − V_j)²,  V_j = head(critic(x_j))[last token]
 *   separate:  ∇ actor_loss (actor),  ∇ value_loss_coef · value_loss (critic and head)
 *   shared:    ∇ (actor_loss + value_loss_coef · value_loss) (actor and head)
 * </pre>
 * computed here on fresh copies of the initial models, from the samples the trainer reported to
 * {@code metrics_callback}; the old values are checked against the fresh critic too.
 */
class ActorCriticUpdateTest {
    private static final double COEF = 0.6;

    @TempDir
    static java.nio.file.Path models;
    static java.nio.file.Path agent;
    static java.nio.file.Path other;

    @BeforeAll
    static void agents() {
        List<Long> printable = java.util.stream.LongStream.rangeClosed(33, 126).boxed().toList();
        agent = TinyAgents.create(models.resolve("agent"), 11, printable);
        other = TinyAgents.create(models.resolve("other"), 12, printable);
    }

    static RewardFunction ownLength() {
        return comlrl.trainers.TestRewards.ownLength();
    }

    /** What the observer saw: per step kind, a host copy of each parameter's gradient, in optimizer order. */
    static final class Grads implements ActorCriticBuilder.UpdateObserver {
        final Map<String, List<float[]>> byStep = new LinkedHashMap<>();

        @Override
        public void beforeStep(int agentIndex, String which, List<Tensor> parameters) {
            if (byStep.containsKey(which)) {
                return; // the first update only
            }
            List<float[]> g = new ArrayList<>();
            try (Scope s = Scope.open()) {
                for (Tensor p : parameters) {
                    g.add(p.grad() == null ? new float[(int) p.numel()] : p.grad().toFloatArray());
                }
            }
            byStep.put(which, g);
        }
    }

    static Map<String, Tensor> copyOf(ValueHead head) {
        Map<String, Tensor> out = new LinkedHashMap<>();
        head.namedParameters().forEach((k, v) -> out.put(k, v.detach().cloneTensor().keep()));
        return out;
    }

    static double[] normalized(List<RolloutSample> samples) {
        double[] a = samples.stream().mapToDouble(s -> s.valueTarget() - s.oldValue()).toArray();
        double mean = java.util.Arrays.stream(a).average().orElse(0);
        double var = java.util.Arrays.stream(a).map(x -> (x - mean) * (x - mean)).average().orElse(0);
        double std = Math.max(Math.sqrt(var), 1e-6);
        return java.util.Arrays.stream(a).map(x -> (x - mean) / std).toArray();
    }

    /** Σ_t log π of one sample's response, scored alone (no padding), with gradients. */
    static Tensor logprob(CausalLm lm, RolloutSample s) {
        return Scorer.score(lm.model(), List.of(s.promptIds()), List.of(s.responseIds()), lm.padId())
                .sequenceLogprobs().sum();
    }

    /** The value at the last token of {@code ids} alone. */
    static Tensor value(CausalLm critic, ValueHead head, long[] prompt, long[] response) {
        Tensor hidden = Scorer.hidden(critic.model(), List.of(prompt), List.of(response), critic.padId());
        return head.forward(hidden).select(1, hidden.size(1) - 1).sum().toFloat();
    }

    /**
     * The trainer's gradients equal those of the formula up to float32 rounding
     * ({@link comlrl.tensor.Rounding}) over one update's positions: G = 4 samples of a prompt of at
     * most 10 tokens ({@code tasks(1)}) and at most 6 response tokens.
     */
    static void assertGradients(List<float[]> actual, List<Tensor> parameters) {
        List<float[]> expected = new ArrayList<>();
        for (int p = 0; p < parameters.size(); p++) {
            expected.add(parameters.get(p).grad() == null ? new float[actual.get(p).length]
                    : parameters.get(p).grad().toFloatArray());
        }
        comlrl.tensor.Rounding.assertSameGradients(actual, expected, 4 * (10 + 6));
    }

    private static IACConfig.Builder oneUpdate() {
        // one agent, one item of G = 4: one update group, one minibatch of all four samples
        return IACConfig.builder().numAgents(1).numTurns(1).numTrainEpochs(1).numGenerations(4).maxNewTokens(6)
                .temperature(1.0).topP(1.0).topK(0).rolloutBufferSize(4).trainBatchSize(4).evalInterval(0)
                .agentLearningRate(1e-3).criticLearningRate(1e-3).valueLossCoef(COEF).seed(3);
    }

    @Test
    void oneIacUpdateWithASeparateCriticEqualsTheFormula() {
        Grads grads = new Grads();
        List<RolloutSample> samples = new ArrayList<>();
        Map<String, Tensor> initialHead;
        try (IACTrainer t = IACTrainer.builder().agentModel(agent.toString()).criticModel(other.toString())
                .rewardFunc(ownLength()).trainDataset(tasks(1)).args(oneUpdate().build()).verbose(false)
                .metricsCallback(r -> {
                    samples.addAll(r);
                    return Map.of();
                }).observer(grads).build()) {
            initialHead = copyOf(t.critics().get(0).valueHead());
            t.train();
        }
        assertThat(samples).hasSize(4);
        double[] adv = normalized(samples);
        try (CausalLm actor = TinyAgents.load(agent); CausalLm critic = TinyAgents.load(other);
                ValueHead head = ValueHead.create(32, 0, comlrl.tensor.DType.F32, comlrl.tensor.Device.CPU, 0L);
                Scope s = Scope.open()) {
            head.loadStateDict(initialHead, "the trainer's initial head");
            Tensor actorLoss = null;
            Tensor valueLoss = null;
            for (int j = 0; j < 4; j++) {
                RolloutSample x = samples.get(j);
                Tensor a = logprob(actor, x).mul(-adv[j] / 4);
                actorLoss = actorLoss == null ? a : actorLoss.add(a);
                Tensor v = value(critic, head, x.promptIds(), new long[0]);
                assertThat(x.oldValue()).isCloseTo(v.item(), within(1e-5));
                Tensor d = v.sub(x.valueTarget());
                Tensor e = d.mul(d).mul(COEF / 4);
                valueLoss = valueLoss == null ? e : valueLoss.add(e);
            }
            actorLoss.backward();
            assertGradients(grads.byStep.get("actor"), actor.model().parameters());
            valueLoss.backward();
            List<Tensor> criticParams = new ArrayList<>(critic.model().parameters());
            criticParams.addAll(head.parameters());
            assertGradients(grads.byStep.get("critic"), criticParams);
        } finally {
            initialHead.values().forEach(Tensor::close);
        }
    }

    @Test
    void oneIacUpdateWithASharedHeadEqualsTheFormulaWithTheQValueOfTheResponse() {
        Grads grads = new Grads();
        List<RolloutSample> samples = new ArrayList<>();
        Map<String, Tensor> initialHead;
        IACConfig config = oneUpdate().useSeparateCritic(false).valueHeadHiddenDim(8).criticType("q").build();
        try (IACTrainer t = IACTrainer.builder().agentModel(agent.toString()).rewardFunc(ownLength())
                .trainDataset(tasks(1)).args(config).verbose(false).metricsCallback(r -> {
                    samples.addAll(r);
                    return Map.of();
                }).observer(grads).build()) {
            initialHead = copyOf(t.agents().get(0).valueHead());
            t.train();
        }
        double[] adv = normalized(samples);
        try (CausalLm actor = TinyAgents.load(agent);
                ValueHead head = ValueHead.create(32, 8, comlrl.tensor.DType.F32, comlrl.tensor.Device.CPU, 0L);
                Scope s = Scope.open()) {
            head.loadStateDict(initialHead, "the trainer's initial head");
            Tensor loss = null;
            for (int j = 0; j < 4; j++) {
                RolloutSample x = samples.get(j);
                Tensor v = value(actor, head, x.promptIds(), x.responseIds()); // Q: the response's last token
                assertThat(x.oldValue()).isCloseTo(v.item(), within(1e-5));
                Tensor d = v.sub(x.valueTarget());
                // the first update starts at V_old, so the clipped error equals the plain one
                Tensor term = logprob(actor, x).mul(-adv[j] / 4).add(d.mul(d).mul(COEF / 4));
                loss = loss == null ? term : loss.add(term);
            }
            loss.backward();
            List<Tensor> params = new ArrayList<>(actor.model().parameters());
            params.addAll(head.parameters());
            assertGradients(grads.byStep.get("shared"), params);
        } finally {
            initialHead.values().forEach(Tensor::close);
        }
    }

    @Test
    void oneMaacCriticStepEqualsTheFormulaOnTheJointInput() {
        Grads grads = new Grads();
        List<RolloutSample> samples = new ArrayList<>();
        Map<String, Tensor> initialHead;
        MAACConfig config = MAACConfig.builder().numAgents(2).numTurns(1).numTrainEpochs(1).numGenerations(2)
                .maxNewTokens(6).temperature(1.0).topP(1.0).topK(0).rolloutBufferSize(2).trainBatchSize(2)
                .evalInterval(0).agentLearningRate(1e-3).criticLearningRate(1e-3).valueLossCoef(COEF).criticType("q")
                .seed(5).build();
        try (MAACTrainer t = MAACTrainer.builder().agents(List.of(agent.toString(), other.toString()))
                .criticModel(other.toString()).rewardFunc(ActorCriticTrainerTest.lengthDifference())
                .trainDataset(tasks(1)).args(config).verbose(false).metricsCallback(r -> {
                    samples.addAll(r);
                    return Map.of();
                }).observer(grads).build()) {
            initialHead = copyOf(t.critics().get(0).valueHead());
            t.train();
        }
        List<RolloutSample> first = samples.stream().filter(x -> x.agentIdx() == 0).toList(); // agent 0 updates first
        assertThat(first).hasSize(2);
        try (CausalLm critic = TinyAgents.load(other); CausalLm tok = TinyAgents.load(agent);
                ValueHead head = ValueHead.create(32, 0, comlrl.tensor.DType.F32, comlrl.tensor.Device.CPU, 0L);
                Scope s = Scope.open()) {
            head.loadStateDict(initialHead, "the trainer's initial head");
            Tensor loss = null;
            for (RolloutSample x : first) {
                // the joint Q input: both prompts and both agents' actions of this generation
                RolloutSample partner = samples.stream().filter(y -> y.agentIdx() == 1
                        && y.generationIdx() == x.generationIdx()).findFirst().orElseThrow();
                String text = MAACTrainer.criticInput(List.of(x.prompt(), partner.prompt()),
                        List.of(x.completion(), partner.completion()));
                assertThat(x.jointInputIds()).containsExactly(tok.encode(text));
                Tensor v = value(critic, head, x.jointInputIds(), new long[0]);
                assertThat(x.oldValue()).isCloseTo(v.item(), within(1e-5));
                assertThat(partner.oldValue()).isEqualTo(x.oldValue()); // one joint value for both agents
                Tensor d = v.sub(x.valueTarget());
                Tensor e = d.mul(d).mul(COEF / 2);
                loss = loss == null ? e : loss.add(e);
            }
            loss.backward();
            List<Tensor> params = new ArrayList<>(critic.model().parameters());
            params.addAll(head.parameters());
            assertGradients(grads.byStep.get("critic"), params);
        } finally {
            initialHead.values().forEach(Tensor::close);
        }
    }
}
