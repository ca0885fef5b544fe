package comlrl.trainers.preference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.data.Dataset;
import comlrl.generation.CausalLm;
import comlrl.generation.Scorer;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import comlrl.trainers.TestRewards;
import comlrl.trainers.TinyAgents;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** MADPO end to end on tiny agents: the preference set, the DPO update against its formula, resume. */
class MADPOTrainerTest {
    private static final double BETA = 0.5;

    @TempDir
    static Path models;
    static Path agent;
    static Path other;

    /** For other tests of this package: the agents, written once. */
    static synchronized void writeAgentsIfNeeded() {
        if (agent == null || !java.nio.file.Files.isDirectory(agent)) {
            try {
                Path dir = java.nio.file.Files.createTempDirectory("madpo-agents");
                Runtime.getRuntime().addShutdownHook(new Thread(() -> comlrl.model.io.ModelDirs.deleteRecursively(dir)));
                models = dir;
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            writeAgents();
        }
    }

    @BeforeAll
    static void writeAgents() {
        List<Long> printable = LongStream.rangeClosed(33, 126).boxed().toList();
        agent = TinyAgents.create(models.resolve("agent"), 11, printable);
        other = TinyAgents.create(models.resolve("other"), 12, printable);
    }

    static Dataset tasks(int n) {
        List<Map<String, Object>> rows = new ArrayList<>();
        String[] prompts = {"Write a story about a cat.", "Explain why the sky is blue.", "Say hello."};
        for (int i = 0; i < n; i++) {
            rows.add(Map.of("prompt", prompts[i % prompts.length]));
        }
        return Dataset.fromRows(rows);
    }

    static MADPOConfig.Builder config() {
        return MADPOConfig.builder().numAgents(2).numTrainEpochs(1).preferenceNumCandidates(4)
                .preferencePairsPerSample(2).trainBatchSize(2).maxNewTokens(6).temperature(1.0).topP(1.0).topK(0)
                .evalInterval(0).evalNumSamples(2).agentLearningRate(1e-3).dpoBeta(BETA).loggingSteps(1).seed(9);
    }

    static MADPOTrainer.Builder trainer(MADPOConfig c) {
        return MADPOTrainer.builder().agents(List.of(agent.toString(), other.toString()))
                .rewardFunc(TestRewards.lengthDifference()).trainDataset(tasks(2)).evalDataset(tasks(2)).args(c)
                .verbose(false);
    }

    static Map<String, String> digests(CausalLm lm) {
        Map<String, String> out = new LinkedHashMap<>();
        try (Scope s = Scope.open()) {
            lm.model().namedParameters().forEach((k, v) -> {
                try {
                    out.put(k, HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(v.toBytes()), 0, 8));
                } catch (java.security.NoSuchAlgorithmException e) {
                    throw new IllegalStateException(e);
                }
            });
        }
        return out;
    }

    @Test
    void madpoBuildsItsPreferenceSetOnceAndTrainsOnIt() {
        try (MADPOTrainer t = trainer(config().numTrainEpochs(2).build()).build()) {
            t.train();
            int pairs = t.numPairs();
            assertThat(pairs).isBetween(1, 4); // at most 2 per item, ties dropped
            assertThat(t.updatesSeen()).isEqualTo(2L * ((pairs + 1) / 2)); // two epochs over the same pairs
            assertThat(t.envStep()).isEqualTo(2L * 2 * pairs); // environment_steps_per_pair = 2
            assertThat(t.logHistory()).anyMatch(e -> e.containsKey("turn_1/reward_mean") && e.containsKey("agent_1/dpo_loss"));
            // TRL's DPO health metrics per agent, beside the loss (their values: DpoReferenceWiringTest)
            assertThat(t.logHistory()).filteredOn(e -> e.containsKey("dpo_loss")).isNotEmpty().allSatisfy(e -> {
                for (int i = 0; i < 2; i++) {
                    assertThat(e).containsKeys("agent_" + i + "/rewards/chosen", "agent_" + i + "/rewards/rejected",
                            "agent_" + i + "/rewards/accuracies", "agent_" + i + "/rewards/margins");
                    assertThat(e.get("agent_" + i + "/rewards/accuracies")).isBetween(0.0, 1.0);
                }
            });
            assertThat(t.evaluate()).containsKeys("eval/turn_1/reward_mean", "eval/turn_1/expected_return");
        }
    }

    /**
     * Evaluation runs before update u when {@code u % eval_interval == 0}, u counting DPO batches
     * across epochs (reference §7.2), not the epoch loop's per-epoch item index. With P pairs, one
     * pair per batch and {@code eval_interval} k = P + 1 over 3 epochs, the evaluations come before
     * u = 0, k, 2k, … < 3P, logged at env_step 2u (environment_steps_per_pair = 2); a per-epoch
     * schedule would evaluate before u = 0, P, 2P instead.
     */
    @Test
    void evaluationCountsUpdatesAcrossEpochs() {
        int pairs;
        try (MADPOTrainer probe = trainer(config().build()).build()) {
            probe.train();
            pairs = probe.numPairs(); // the same seed builds the same set below
        }
        int k = pairs + 1;
        try (MADPOTrainer t = trainer(config().numTrainEpochs(3).trainBatchSize(1).evalInterval(k).build()).build()) {
            t.train();
            assertThat(t.numPairs()).isEqualTo(pairs);
            List<Double> expected = new ArrayList<>();
            for (int u = 0; u < 3 * pairs; u += k) {
                expected.add(2.0 * u);
            }
            assertThat(t.logHistory()).filteredOn(e -> e.containsKey("eval/turn_1/reward_mean"))
                    .extracting(e -> e.get("env_step")).containsExactlyElementsOf(expected);
        }
    }

    @Test
    void oneDpoUpdateEqualsTheFormulaWithTheOtherAgentsDeltaHeldFixed(@TempDir Path dir) throws Exception {
        List<List<float[]>> seen = new ArrayList<>();
        // one batch holding every pair: the shuffle does not change the mean
        MADPOConfig c = config().trainBatchSize(16).build();
        try (MADPOTrainer t = trainer(c).observer((i, params) -> {
            if (i == 0 && seen.isEmpty()) {
                List<float[]> g = new ArrayList<>();
                try (Scope s = Scope.open()) {
                    params.forEach(p -> g.add(p.grad() == null ? new float[(int) p.numel()] : p.grad().toFloatArray()));
                }
                seen.add(g);
            }
        }).build()) {
            t.train(dir.resolve("ckpt"), 1);
        }
        JsonNode set = new ObjectMapper().readTree(dir.resolve("ckpt/checkpoint-1/preference_pairs.json").toFile());
        JsonNode pairs = set.get("pairs");
        int n = pairs.size();
        assertThat(n).isPositive();
        try (CausalLm a0 = TinyAgents.load(agent); CausalLm a1 = TinyAgents.load(other); Scope s = Scope.open()) {
            Tensor loss = null;
            for (JsonNode p : pairs) {
                // Δ_1 under agent 1's initial weights, a constant here
                double d1 = logprob(a1, p, 1, "winners").item() - logprob(a1, p, 1, "losers").item();
                Tensor d0 = logprob(a0, p, 0, "winners").sub(logprob(a0, p, 0, "losers"));
                // −log σ(β(Δ_0 + Δ_1)) = log(1 + exp(−β(Δ_0 + Δ_1)))
                Tensor term = d0.add(d1).mul(-BETA).exp().add(1.0).log().mul(1.0 / n);
                loss = loss == null ? term : loss.add(term);
            }
            loss.backward();
            List<Tensor> params = a0.model().parameters();
            List<float[]> expected = new ArrayList<>();
            for (int k = 0; k < params.size(); k++) {
                expected.add(params.get(k).grad() == null ? new float[seen.get(0).get(k).length]
                        : params.get(k).grad().toFloatArray());
            }
            // the batch: n pairs × winner and loser × (a prompt of at most 17 tokens + 6 new tokens)
            comlrl.tensor.Rounding.assertSameGradients(seen.get(0), expected, n * 2 * (17 + 6));
        }
    }

    private static Tensor logprob(CausalLm lm, JsonNode pair, int agentIdx, String which) {
        long[] prompt = ids(pair.get("prompts").get(agentIdx));
        long[] completion = ids(pair.get(which).get(agentIdx));
        return Scorer.score(lm.model(), List.of(prompt), List.of(completion), lm.padId()).sequenceLogprobs().sum();
    }

    private static long[] ids(JsonNode array) {
        long[] out = new long[array.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = array.get(i).asLong();
        }
        return out;
    }

    @Test
    void withAFrozenInitialReferenceTheFirstLossIsLogTwo() {
        try (MADPOTrainer t = trainer(config().dpoReference(DpoReference.FROZEN_INITIAL).build()).build()) {
            t.train();
            // at the first update the policy is the reference: every Δ is 0 and −log σ(0) = log 2
            Map<String, Double> first = t.logHistory().stream().filter(e -> e.containsKey("agent_0/dpo_loss"))
                    .findFirst().orElseThrow();
            assertThat(first.get("agent_0/dpo_loss")).isCloseTo(Math.log(2), within(1e-6));
            assertThat(first.get("agent_1/dpo_loss")).isCloseTo(Math.log(2), within(1e-6));
        }
    }

    @Test
    void centralizedMadpoTrainsOneActorThatWritesEveryRole(@TempDir Path dir) {
        List<String> builtPrompts = new ArrayList<>();
        comlrl.trainers.reinforce.CentralizedAdapter adapter = new comlrl.trainers.reinforce.CentralizedAdapter() {
            @Override
            public String buildPrompt(comlrl.data.TaskItem item, List<String> agentPrompts) {
                String p = String.join(" | ", agentPrompts);
                builtPrompts.add(p);
                return p;
            }

            @Override
            public List<String> parseCompletion(String completion, comlrl.data.TaskItem item, int numAgents) {
                return List.of("", completion); // role 1 answers; the reward is its length
            }
        };
        MADPOConfig c = config().collaborationMode("centralized").build();
        try (MADPOTrainer t = MADPOTrainer.builder().agentModel(agent.toString()).centralizedAdapter(adapter)
                .formatters(List.of(item -> "brief: " + item.getString("prompt"), item -> "long: " + item.getString("prompt")))
                .rewardFunc(TestRewards.lengthDifference()).trainDataset(tasks(2)).evalDataset(tasks(2)).args(c)
                .verbose(false).build()) {
            assertThat(t.agents()).hasSize(1);
            t.train();
            assertThat(t.numPairs()).isPositive();
            assertThat(builtPrompts).contains("brief: Write a story about a cat. | long: Write a story about a cat.");
            t.saveModel(dir);
            assertThat(dir.resolve("agent_0/config.json")).exists();
            assertThat(dir.resolve("agent_1")).doesNotExist();
        }
    }

    @Test
    void nonFiniteCandidateRewardsStopTheBuildOrAreSkipped() {
        java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
        // every third joint candidate gets NaN, the others their length difference
        comlrl.reward.RewardFunction sometimesNaN = (c, items) -> calls.getAndIncrement() % 3 == 0 ? List.of(Double.NaN)
                : TestRewards.lengthDifference().score(c, items);
        try (MADPOTrainer t = trainer(config().build()).rewardFunc(sometimesNaN).build()) {
            org.assertj.core.api.Assertions.assertThatThrownBy(t::train)
                    .hasMessageContaining("The reward function returned NaN").hasMessageContaining("skip_nonfinite_samples");
        }
        calls.set(0);
        try (MADPOTrainer t = trainer(config().skipNonfiniteSamples(true).build()).rewardFunc(sometimesNaN).build()) {
            t.train();
            assertThat(t.skippedCandidates()).isEqualTo(3); // candidates 0 and 3 of item 0, candidate 2 of item 1
            assertThat(t.numPairs()).isPositive();
        }
    }

    @Test
    void resumingFromACheckpointEqualsTheUninterruptedRun(@TempDir Path dir) {
        Map<String, String> straight;
        try (MADPOTrainer t = trainer(config().numTrainEpochs(2).build()).build()) {
            t.train();
            straight = digests(t.agents().get(1));
        }
        try (MADPOTrainer t = trainer(config().build()).build()) {
            t.train(dir.resolve("ckpt"), 1);
        }
        assertThat(dir.resolve("ckpt/checkpoint-1/preference_pairs.json")).exists();
        try (MADPOTrainer t = trainer(config().numTrainEpochs(2).build()).build()) {
            t.train(dir.resolve("ckpt"), 1, dir.resolve("ckpt/checkpoint-1"));
            assertThat(digests(t.agents().get(1))).isEqualTo(straight);
        }
    }

    @Test
    void aResumedRunWhoseOutputDirectoryHasFilesWritesIntoAResumeSubdirectory(@TempDir Path dir) throws Exception {
        Path run = dir.resolve("run");
        try (MADPOTrainer t = trainer(config().build()).outputDir(run).build()) {
            t.train(dir.resolve("ckpt"), 1);
        }
        List<String> first = java.nio.file.Files.readAllLines(run.resolve("metrics.jsonl"));
        try (MADPOTrainer t = trainer(config().numTrainEpochs(2).build()).outputDir(run).build()) {
            t.train(dir.resolve("ckpt"), 1, dir.resolve("ckpt/checkpoint-1"));
            assertThat(t.outputDir()).isEqualTo(run.resolve("resume-checkpoint-1"));
        }
        assertThat(java.nio.file.Files.readAllLines(run.resolve("metrics.jsonl"))).isEqualTo(first);
        assertThat(java.nio.file.Files.readAllLines(run.resolve("resume-checkpoint-1/metrics.jsonl")))
                .anyMatch(l -> l.contains("dpo_loss"));
        // a fresh output directory is used as it is
        try (MADPOTrainer t = trainer(config().numTrainEpochs(2).build()).outputDir(dir.resolve("fresh")).build()) {
            t.train(dir.resolve("ckpt"), 1, dir.resolve("ckpt/checkpoint-1"));
            assertThat(t.outputDir()).isEqualTo(dir.resolve("fresh"));
        }
    }
}
