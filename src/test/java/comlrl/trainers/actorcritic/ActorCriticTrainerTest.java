package comlrl.trainers.actorcritic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.data.Dataset;
import comlrl.generation.CausalLm;
import comlrl.model.ValueHead;
import comlrl.reward.RewardFunction;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import comlrl.trainers.TinyAgents;
import comlrl.trainers.TransitionContext;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.ToDoubleFunction;
import java.util.stream.LongStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** IAC and MAAC end to end on tiny agents: training, evaluation, saving, restoring heads, resuming, bad input. */
class ActorCriticTrainerTest {
    @TempDir
    static Path models;
    static Path agent;
    static Path other;

    @BeforeAll
    static void writeAgents() {
        List<Long> printable = LongStream.rangeClosed(33, 126).boxed().toList();
        agent = TinyAgents.create(models.resolve("agent"), 11, printable);
        other = TinyAgents.create(models.resolve("other"), 12, printable);
    }

    static Dataset tasks(int n) {
        List<Map<String, Object>> rows = new ArrayList<>();
        String[] prompts = {"Write a story about a cat.", "Explain why the sky is blue.", "Say hello.", "Describe the sea."};
        for (int i = 0; i < n; i++) {
            rows.add(Map.of("prompt", prompts[i % prompts.length]));
        }
        return Dataset.fromRows(rows);
    }

    static RewardFunction lengthDifference() {
        return comlrl.trainers.TestRewards.lengthDifference();
    }

    static IACConfig.Builder iac() {
        return IACConfig.builder().numAgents(2).numTurns(1).numTrainEpochs(1).numGenerations(2).maxNewTokens(6)
                .temperature(1.0).topP(1.0).topK(0).rolloutBufferSize(2).evalInterval(0).evalNumSamples(2)
                .agentLearningRate(1e-3).criticLearningRate(1e-3).seed(7);
    }

    static MAACConfig.Builder maac() {
        return MAACConfig.builder().numAgents(2).numTurns(1).numTrainEpochs(1).numGenerations(2).maxNewTokens(6)
                .temperature(1.0).topP(1.0).topK(0).rolloutBufferSize(2).evalInterval(0).evalNumSamples(2)
                .agentLearningRate(1e-3).criticLearningRate(1e-3).seed(7);
    }

    /** Per parameter: a digest of its bytes (equal maps: bit-identical weights). */
    static Map<String, String> bytes(CausalLm lm) {
        return digests(lm.model().namedParameters());
    }

    static Map<String, String> bytes(ValueHead head) {
        return digests(head.namedParameters());
    }

    static Map<String, String> digests(Map<String, Tensor> params) {
        Map<String, String> out = new LinkedHashMap<>();
        try (Scope s = Scope.open()) {
            params.forEach((k, v) -> {
                try {
                    byte[] d = java.security.MessageDigest.getInstance("SHA-256").digest(v.toBytes());
                    out.put(k, java.util.HexFormat.of().formatHex(d, 0, 8));
                } catch (java.security.NoSuchAlgorithmException e) {
                    throw new IllegalStateException(e);
                }
            });
        }
        return out;
    }

    @Test
    void iacWithSeparateCriticsTrainsLogsAndSavesTheReferenceLayout(@TempDir Path out) throws Exception {
        List<List<RolloutSample>> seen = new ArrayList<>();
        try (IACTrainer t = IACTrainer.builder().agents(List.of(agent.toString(), other.toString()))
                .criticModel(agent.toString()).rewardFunc(lengthDifference()).trainDataset(tasks(3))
                .evalDataset(tasks(2)).metricsCallback(r -> {
                    seen.add(r);
                    return Map.of("callback/samples", (double) r.size());
                }).args(iac().build()).outputDir(out.resolve("run")).verbose(false).build()) {
            Map<String, String> before = bytes(t.critics().get(0).valueHead());
            t.train();
            assertThat(bytes(t.critics().get(0).valueHead())).isNotEqualTo(before);
            // G samples per agent per item: env_step advances by G per item
            assertThat(t.envStep()).isEqualTo(6);
            assertThat(seen).hasSize(3).allSatisfy(r -> assertThat(r).hasSize(4));
            List<Map<String, Double>> log = t.logHistory();
            assertThat(log.stream().filter(e -> e.containsKey("turn_1/value_loss"))).isNotEmpty();
            assertThat(log.stream().filter(e -> e.containsKey("agent_1/turn_1/policy_loss"))).isNotEmpty();
            // the callback's values are logged once per item, at rollout time (reference bug 14.15)
            assertThat(log.stream().filter(e -> e.containsKey("callback/samples"))).hasSize(3);
            Map<String, Double> eval = t.evaluate();
            assertThat(eval).containsKeys("eval/turn_1/reward_mean", "eval/turn_1/expected_return",
                    "eval/turn_1/reference_kl_mean", "eval/turn_1/reference_kl_penalty_mean", "eval/callback/samples");
            assertThat(eval.get("eval/callback/samples")).isEqualTo(2.0); // one generation per agent in evaluation
            // eval_samples.jsonl: each item's prompts, completions and reward, as the evaluation's rollouts hold them
            List<String> lines = java.nio.file.Files.readAllLines(out.resolve("run/eval_samples.jsonl"));
            com.fasterxml.jackson.databind.JsonNode samples = new com.fasterxml.jackson.databind.ObjectMapper()
                    .readTree(lines.get(lines.size() - 1)).get("samples");
            assertThat(samples).hasSize(2);
            for (int j = 0; j < 2; j++) {
                List<RolloutSample> rollouts = seen.get(3 + j); // the evaluation's items, after training's 3
                for (RolloutSample r : rollouts) {
                    assertThat(samples.get(j).get("prompts").get(r.agentIdx()).get(0).asText()).isEqualTo(r.prompt());
                    assertThat(samples.get(j).get("completions").get(r.agentIdx()).get(0).asText()).isEqualTo(r.completion());
                }
                assertThat(samples.get(j).get("rewards").get(0).asDouble())
                        .isEqualTo((rollouts.get(0).reward() + rollouts.get(1).reward()) / 2);
            }
            t.saveModel(out);
            for (int i = 0; i < 2; i++) {
                Path a = out.resolve("agent_" + i);
                assertThat(a.resolve("config.json")).exists();
                assertThat(a.resolve("value_head.pt")).doesNotExist();
                assertThat(a.resolve("critic/config.json")).exists();
                assertThat(a.resolve("critic/value_head.pt")).exists();
                assertThat(a.resolve("critic/value_head.safetensors")).exists();
            }
            // a saved critic directory is a model directory an agent can load
            try (CausalLm reloaded = TinyAgents.load(out.resolve("agent_1/critic"))) {
                assertThat(bytes(reloaded)).isEqualTo(bytes(t.critics().get(1).model()));
            }
        }
    }

    @Test
    void aRestoredHeadValuesAsTheFirstTrainerAndTrainsOn(@TempDir Path out) {
        IACConfig config = iac().useSeparateCritic(false).valueHeadHiddenDim(8).numTrainEpochs(1).build();
        Map<String, String> continued;
        List<Double> firstValues = new ArrayList<>();
        try (IACTrainer first = IACTrainer.builder().agentModel(agent.toString()).rewardFunc(lengthDifference())
                .trainDataset(tasks(2)).evalDataset(tasks(2)).args(config).verbose(false).metricsCallback(r -> {
                    r.forEach(x -> firstValues.add(x.oldValue()));
                    return Map.of();
                }).build()) {
            first.train();
            first.saveModel(out.resolve("saved"));
            assertThat(out.resolve("saved/agent_0/value_head.pt")).exists();
            firstValues.clear();
            first.evaluate(); // V values of the evaluation prompts under the trained backbone and head
            continued = bytes(first.agents().get(0).valueHead());
        }
        List<Double> secondValues = new ArrayList<>();
        try (IACTrainer second = IACTrainer.builder().agents(List.of(out.resolve("saved/agent_0").toString(),
                        out.resolve("saved/agent_1").toString())).rewardFunc(lengthDifference())
                .trainDataset(tasks(2)).evalDataset(tasks(2)).args(iac().useSeparateCritic(false).valueHeadHiddenDim(8)
                        .numTrainEpochs(1).build()).verbose(false).metricsCallback(r -> {
                    r.forEach(x -> secondValues.add(x.oldValue()));
                    return Map.of();
                }).build()) {
            second.loadValueHeads(out.resolve("saved"));
            assertThat(bytes(second.agents().get(0).valueHead())).isEqualTo(continued);
            second.evaluate();
            assertThat(secondValues).isEqualTo(firstValues); // the restored critic values exactly as the first
            second.train();
            assertThat(bytes(second.agents().get(0).valueHead())).isNotEqualTo(continued);
        }
        IACConfig wider = iac().useSeparateCritic(false).valueHeadHiddenDim(16).build();
        try (IACTrainer third = IACTrainer.builder().agents(List.of(out.resolve("saved/agent_0").toString(),
                        out.resolve("saved/agent_1").toString())).rewardFunc(lengthDifference())
                .trainDataset(tasks(2)).args(wider).verbose(false).build()) {
            assertThatThrownBy(() -> third.loadValueHeads(out.resolve("saved")))
                    .hasMessageContaining("value_head").hasMessageContaining("16");
        }
        IACConfig q = iac().useSeparateCritic(false).valueHeadHiddenDim(8).criticType("q").build();
        try (IACTrainer fourth = IACTrainer.builder().agents(List.of(out.resolve("saved/agent_0").toString(),
                        out.resolve("saved/agent_1").toString())).rewardFunc(lengthDifference())
                .trainDataset(tasks(2)).args(q).verbose(false).build()) {
            assertThatThrownBy(() -> fourth.loadValueHeads(out.resolve("saved")))
                    .hasMessageContaining("critic_type \"v\"").hasMessageContaining("set critic_type: v");
        }
    }

    @Test
    void resumingIacFromACheckpointEqualsTheUninterruptedRun(@TempDir Path dir) {
        IACConfig two = iac().numTrainEpochs(2).build();
        Map<String, String> straightActor;
        Map<String, String> straightHead;
        try (IACTrainer t = IACTrainer.builder().agentModel(agent.toString()).criticModel(other.toString())
                .rewardFunc(lengthDifference()).trainDataset(tasks(2)).args(two).verbose(false).build()) {
            t.train();
            straightActor = bytes(t.agents().get(1).model());
            straightHead = bytes(t.critics().get(1).valueHead());
        }
        try (IACTrainer t = IACTrainer.builder().agentModel(agent.toString()).criticModel(other.toString())
                .rewardFunc(lengthDifference()).trainDataset(tasks(2)).args(iac().numTrainEpochs(1).build())
                .verbose(false).build()) {
            t.train(dir.resolve("ckpt"), 1);
        }
        assertThat(dir.resolve("ckpt/checkpoint-1/critic_optimizer_1.safetensors")).exists();
        assertThat(dir.resolve("ckpt/checkpoint-1/value_head_1/value_head.safetensors")).exists();
        try (IACTrainer t = IACTrainer.builder().agentModel(agent.toString()).criticModel(other.toString())
                .rewardFunc(lengthDifference()).trainDataset(tasks(2)).args(two).verbose(false).build()) {
            t.train(dir.resolve("ckpt"), 1, dir.resolve("ckpt/checkpoint-1"));
            assertThat(bytes(t.agents().get(1).model())).isEqualTo(straightActor);
            assertThat(bytes(t.critics().get(1).valueHead())).isEqualTo(straightHead);
        }
    }

    @Test
    void iacAgentsUpdatedOnTheirOwnThreadsEqualTheSequentialRun() {
        Map<String, String> sequential;
        try (IACTrainer t = IACTrainer.builder().agentModel(agent.toString()).criticModel(other.toString())
                .rewardFunc(lengthDifference()).trainDataset(tasks(2)).args(iac().build()).verbose(false).build()) {
            t.train();
            sequential = bytes(t.critics().get(1).valueHead());
            sequential.putAll(bytes(t.agents().get(0).model()));
        }
        IACConfig mp = iac().parallelTraining(comlrl.utils.ParallelTraining.MP).agentDevices(List.of("cpu", "cpu"))
                .criticDevices(List.of("cpu", "cpu")).build();
        try (IACTrainer t = IACTrainer.builder().agentModel(agent.toString()).criticModel(other.toString())
                .rewardFunc(lengthDifference()).trainDataset(tasks(2)).args(mp).verbose(false).build()) {
            t.train();
            Map<String, String> parallel = bytes(t.critics().get(1).valueHead());
            parallel.putAll(bytes(t.agents().get(0).model()));
            assertThat(parallel).isEqualTo(sequential);
        }
    }

    @Test
    void maacTrainsOneCriticAndResumesExactly(@TempDir Path dir) {
        MAACConfig two = maac().numTrainEpochs(2).criticType("q").build();
        Map<String, String> straight;
        try (MAACTrainer t = MAACTrainer.builder().agentModel(agent.toString()).criticModel(other.toString())
                .rewardFunc(lengthDifference()).trainDataset(tasks(2)).evalDataset(tasks(2)).args(two)
                .verbose(false).build()) {
            t.train();
            straight = bytes(t.critics().get(0).valueHead());
            // evaluation with num_generations > 1 works (reference bug 14.8)
            assertThat(t.evaluate()).containsKey("eval/turn_1/reward_mean");
            t.saveModel(dir.resolve("saved"));
        }
        assertThat(dir.resolve("saved/agent_0/config.json")).exists();
        assertThat(dir.resolve("saved/agent_1/config.json")).exists();
        assertThat(dir.resolve("saved/critic/value_head.pt")).exists();
        try (MAACTrainer t = MAACTrainer.builder().agentModel(agent.toString()).criticModel(other.toString())
                .rewardFunc(lengthDifference()).trainDataset(tasks(2)).args(maac().criticType("q").build())
                .verbose(false).build()) {
            t.train(dir.resolve("ckpt"), 1);
        }
        try (MAACTrainer t = MAACTrainer.builder().agentModel(agent.toString()).criticModel(other.toString())
                .rewardFunc(lengthDifference()).trainDataset(tasks(2)).args(two).verbose(false).build()) {
            t.train(dir.resolve("ckpt"), 1, dir.resolve("ckpt/checkpoint-1"));
            assertThat(bytes(t.critics().get(0).valueHead())).isEqualTo(straight);
        }
    }

    @Test
    void aQCriticRefusesAnEmptyResponseNamingTheFix() {
        long eos;
        try (CausalLm lm = TinyAgents.load(agent)) {
            eos = lm.padId(); // end-of-text is eos and pad of the tiny agents
        }
        // the end-of-sequence token forced as the only new token: every response is empty
        IACConfig q = iac().criticType("q").maxNewTokens(1).generationKwargs(Map.of("forced_eos_token_id", eos)).build();
        try (IACTrainer t = IACTrainer.builder().agentModel(agent.toString()).criticModel(agent.toString())
                .rewardFunc(lengthDifference()).trainDataset(tasks(1)).args(q).verbose(false).build()) {
            assertThatThrownBy(t::train).hasMessageContaining("critic_type \"q\"").hasMessageContaining("empty response")
                    .hasMessageContaining("critic_type: v");
        }
    }

    @Test
    void valueHeadFilesAreWrittenWhereTheReferenceWritesThem(@TempDir Path out) throws Exception {
        try (IACTrainer t = IACTrainer.builder().agentModel(agent.toString()).rewardFunc(lengthDifference())
                .trainDataset(tasks(1)).args(iac().numAgents(1).useSeparateCritic(true).build())
                .criticModel(agent.toString()).rewardFunc((c, items) -> List.of(1.0)).verbose(false).build()) {
            t.saveModel(out);
        }
        // one agent: the actor is the directory itself, its critic in critic/
        assertThat(out.resolve("config.json")).exists();
        assertThat(out.resolve("critic/value_head.pt")).exists();
        assertThat(Files.readString(out.resolve("critic/value_head.json"))).contains("\"critic_type\" : \"v\"");
        try (Scope s = Scope.open()) {
            Map<String, Tensor> state = comlrl.model.io.Safetensors.load(out.resolve("critic/value_head.safetensors"));
            assertThat(state.keySet()).containsExactly("value_projection.weight", "value_projection.bias");
            state.values().forEach(Tensor::close);
        }
    }

    // ------------------------------------------------------------------ evaluation
    // Two turns with early termination and reference KL: each metric, after training, is the mean of what the
    // evaluation's rollouts hold (metrics_callback sees them), per turn over the items that reached it, and
    // eval_samples.jsonl shows the same rollouts.

    /** Three items; "Say hello." scores 5 more, so its episode ends after turn 1 (threshold 2). */
    static Dataset items() {
        return Dataset.fromRows(List.of(Map.of("prompt", "Say hello."), Map.of("prompt", "Describe the sea."),
                Map.of("prompt", "Explain why the sky is blue.")));
    }

    /** One reward per agent: its completion's length / 10, plus 5 on "Say hello.". */
    static RewardFunction perAgentLength() {
        return (completions, batch) -> {
            double bonus = batch.get(0).getString("prompt", "").equals("Say hello.") ? 5 : 0;
            return completions.stream().map(c -> c.get(0).length() / 10.0 + bonus).toList();
        };
    }

    @Test
    void iacEvaluationLogsTheMeansOfItsRollouts(@TempDir Path out) throws Exception {
        IACConfig config = IACConfig.builder().numAgents(2).numTurns(2).numTrainEpochs(1).numGenerations(1)
                .maxNewTokens(6).temperature(1.0).topP(1.0).topK(0).rolloutBufferSize(2).evalInterval(0)
                .evalNumSamples(3).discount(0.9).earlyTerminationThreshold(2.0).referenceKlEnabled(true)
                .referenceKlCoef(0.1).agentLearningRate(1e-3).criticLearningRate(1e-3).seed(7).build();
        List<List<RolloutSample>> seen = new ArrayList<>();
        try (IACTrainer t = IACTrainer.builder().agents(List.of(agent.toString(), other.toString()))
                .criticModel(agent.toString()).rewardFunc(perAgentLength()).externalTransition(ActorCriticTrainerTest::goOn)
                .trainDataset(items()).evalDataset(items()).metricsCallback(callback(seen)).args(config)
                .outputDir(out.resolve("run")).verbose(false).build()) {
            t.train(); // the trained actors differ from their references
            seen.clear();
            assertEvaluation(t.evaluate(), seen, out.resolve("run"));
            seen.clear();
            assertEvaluation(t.evaluate(), seen, out.resolve("run")); // the next evaluation samples anew, as logged
        }
    }

    @Test
    void maacEvaluationLogsTheMeansOfItsRollouts(@TempDir Path out) throws Exception {
        MAACConfig config = MAACConfig.builder().numAgents(2).numTurns(2).numTrainEpochs(1).numGenerations(1)
                .maxNewTokens(6).temperature(1.0).topP(1.0).topK(0).rolloutBufferSize(2).evalInterval(0)
                .evalNumSamples(3).earlyTerminationThreshold(2.0).referenceKlEnabled(true).referenceKlCoef(0.1)
                .agentLearningRate(1e-3).criticLearningRate(1e-3).seed(7).build();
        List<List<RolloutSample>> seen = new ArrayList<>();
        try (MAACTrainer t = MAACTrainer.builder().agentModel(agent.toString()).criticModel(other.toString())
                .rewardFunc(perAgentLength()).externalTransition(ActorCriticTrainerTest::goOn)
                .trainDataset(items()).evalDataset(items()).metricsCallback(callback(seen)).args(config)
                .outputDir(out.resolve("run")).verbose(false).build()) {
            t.train();
            seen.clear();
            assertEvaluation(t.evaluate(), seen, out.resolve("run"));
        }
    }

    private static List<String> goOn(TransitionContext c) {
        return c.agentCompletions().stream().map(x -> "Go on: " + x).toList();
    }

    /** Records each item's rollouts; returns the item's sample count and, on the first item only, a marker. */
    private static ActorCriticTrainerBase.MetricsCallback callback(List<List<RolloutSample>> seen) {
        return r -> {
            seen.add(r);
            Map<String, Double> m = new LinkedHashMap<>();
            m.put("callback/samples", (double) r.size());
            if (seen.size() == 1) {
                m.put("callback/first", 1.0);
            }
            return m;
        };
    }

    private static void assertEvaluation(Map<String, Double> eval, List<List<RolloutSample>> seen, Path run)
            throws Exception {
        assertThat(seen).hasSize(3);
        assertThat(seen.get(0)).as("the early-terminated item: one turn").allMatch(s -> s.turnIdx() == 0).hasSize(2);
        assertThat(seen.get(1)).hasSize(4);
        Map<Integer, List<RolloutSample>> byTurn = new TreeMap<>();
        seen.forEach(item -> item.forEach(s -> byTurn.computeIfAbsent(s.turnIdx(), x -> new ArrayList<>()).add(s)));
        Map<String, Double> expected = new LinkedHashMap<>();
        byTurn.forEach((turn, samples) -> {
            String p = "eval/turn_" + (turn + 1) + "/";
            expected.put(p + "reward_mean", mean(samples, RolloutSample::reward));
            expected.put(p + "expected_return", mean(samples, RolloutSample::returns));
            expected.put(p + "reference_kl_mean", mean(samples, RolloutSample::referenceKl));
            expected.put(p + "reference_kl_penalty_mean", mean(samples, RolloutSample::referenceKlPenalty));
        });
        expected.put("eval/callback/samples", (2.0 + 4.0 + 4.0) / 3);
        expected.put("eval/callback/first", 1.0); // the mean over the items that returned it
        assertThat(eval).containsExactlyEntriesOf(expected);
        assertThat(eval.get("eval/turn_1/reference_kl_mean")).isNotZero();
        List<String> lines = Files.readAllLines(run.resolve("eval_samples.jsonl"));
        JsonNode samples = new ObjectMapper().readTree(lines.get(lines.size() - 1)).get("samples");
        assertThat(samples).hasSize(3);
        for (int j = 0; j < 3; j++) {
            List<RolloutSample> item = seen.get(j);
            int turns = (int) item.stream().mapToInt(RolloutSample::turnIdx).distinct().count();
            assertThat(samples.get(j).get("rewards")).hasSize(turns);
            for (RolloutSample s : item) {
                JsonNode sample = samples.get(j);
                assertThat(sample.get("prompts").get(s.agentIdx()).get(s.turnIdx()).asText()).isEqualTo(s.prompt());
                assertThat(sample.get("completions").get(s.agentIdx()).get(s.turnIdx()).asText()).isEqualTo(s.completion());
                double agentMean = item.stream().filter(x -> x.turnIdx() == s.turnIdx()).mapToDouble(RolloutSample::reward)
                        .average().orElseThrow();
                assertThat(sample.get("rewards").get(s.turnIdx()).asDouble()).isEqualTo(agentMean);
            }
        }
    }

    private static double mean(List<RolloutSample> samples, ToDoubleFunction<RolloutSample> f) {
        double sum = 0;
        for (RolloutSample s : samples) {
            sum += f.applyAsDouble(s);
        }
        return sum / samples.size();
    }
}
