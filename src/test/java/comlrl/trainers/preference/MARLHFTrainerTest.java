package comlrl.trainers.preference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.data.Dataset;
import comlrl.data.TaskItem;
import comlrl.generation.CausalLm;
import comlrl.model.SequenceClassifier;
import comlrl.reward.JointRewardModel;
import comlrl.reward.RewardFunction;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.trainers.TestRewards;
import comlrl.trainers.TinyAgents;
import comlrl.utils.Formatters;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** MARLHF end to end on tiny agents: the stages, the learned reward, evaluation on the task reward, resume. */
class MARLHFTrainerTest {
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

    static MARLHFConfig.Builder config() {
        return MARLHFConfig.builder().numAgents(2).numTrainEpochs(1).preferenceNumCandidates(4)
                .preferencePairsPerSample(2).numGenerations(2).maxNewTokens(6).temperature(1.0).topP(1.0).topK(0)
                .evalInterval(0).evalNumSamples(2).agentLearningRate(1e-3).rewardModelDevice("cpu")
                .rewardLearningRate(1e-3).rewardTrainBatchSize(2).loggingSteps(1).seed(9);
    }

    static MARLHFTrainer.Builder trainer(MARLHFConfig c, RewardFunction task) {
        return MARLHFTrainer.builder().agents(List.of(agent.toString(), other.toString())).rewardFunc(task)
                .trainDataset(MADPOTrainerTest.tasks(2)).evalDataset(MADPOTrainerTest.tasks(2)).args(c).verbose(false);
    }

    static MARLHFTrainer.Builder trainer(MARLHFConfig c) {
        return trainer(c, TestRewards.lengthDifference());
    }

    @Test
    void theStagesRunInOrderAndOnlyPreferencesAndEvaluationSeeTheTaskReward(@TempDir Path dir) {
        AtomicInteger taskCalls = new AtomicInteger();
        RewardFunction task = (c, items) -> {
            taskCalls.incrementAndGet();
            return TestRewards.lengthDifference().score(c, items);
        };
        try (MARLHFTrainer t = trainer(config().build(), task).outputDir(dir.resolve("run")).build()) {
            assertThat(t.rlTrainer()).isInstanceOf(comlrl.trainers.reinforce.MAGRPOTrainer.class);
            t.train();
            // the preference stage scores each item's 4 aligned candidates once; the RL stage never calls it
            assertThat(taskCalls.get()).isEqualTo(2 * 4);
            assertThat(t.numPairs()).isPositive();
            assertThat(t.envStep()).isEqualTo(4); // one MAGRPO epoch: two items, two joint generations each
            assertThat(t.logHistory()).anyMatch(e -> e.containsKey("reward_model/loss") && e.containsKey("reward_model/accuracy"));
            assertThat(t.logHistory()).anyMatch(e -> e.containsKey("turn_1/reward_mean"));
            Map<String, Double> eval = t.evaluate();
            assertThat(eval).containsKey("eval/turn_1/reward_mean");
            assertThat(taskCalls.get()).isGreaterThan(2 * 4); // evaluation is on the task reward
        }
        Path saved = dir.resolve("run").resolve(MARLHFTrainer.REWARD_MODEL_DIR);
        try (SequenceClassifier rm = SequenceClassifier.load(saved, DType.F32, Device.CPU)) {
            assertThat(rm.numLabels()).isEqualTo(1);
        }
        assertThat(saved.resolve("tokenizer.json")).exists();
        assertThat(dir.resolve("run/metrics.jsonl")).exists();
    }

    /**
     * Every stage shows its progress on the console: the preference collection (2 items), the reward
     * model (its pairs, one epoch) and the RL stage (2 items), whose training reward is the reward
     * model's and is labelled so.
     */
    @Test
    void everyStageShowsItsProgressAndTheRlStagesRewardIsLabelledLearned() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (MARLHFTrainer t = trainer(config().build()).verbose(true)
                .console(new PrintStream(bytes, true, StandardCharsets.UTF_8)).build()) {
            t.train();
            String full = "[" + "#".repeat(24) + "] ";
            String out = bytes.toString(StandardCharsets.UTF_8);
            assertThat(out).contains("preferences " + full + "2/2 items |")
                    .contains("reward model " + full + t.numPairs() + "/" + t.numPairs() + " items |")
                    .contains(full + "2/2 items | reward (learned) ");
            assertThat(out.lines().filter(l -> l.matches(".*\\| reward [-0-9].*")).toList()).isEmpty(); // none unlabelled
        }
    }

    /**
     * The logged {@code reward_model/accuracy} is the trained reward model's pair accuracy on the
     * preference set: the fraction of pairs whose winner's joint text scores strictly above its
     * loser's, counted here from the model's scores (the RL stage leaves the reward model as it is).
     */
    @Test
    void theLoggedPairAccuracyIsTheTrainedRewardModelsOnThePreferenceSet() {
        try (MARLHFTrainer t = trainer(config().rewardNumTrainEpochs(3).rewardLearningRate(1e-2).build()).build()) {
            t.train();
            List<PreferencePair> pairs = t.collector().pairs();
            int batch = t.args().rewardTrainBatchSize();
            double[] winners = t.rewardModel().score(pairs.stream().map(PreferencePair::winnerJointText).toList(), batch);
            double[] losers = t.rewardModel().score(pairs.stream().map(PreferencePair::loserJointText).toList(), batch);
            int right = 0;
            for (int b = 0; b < pairs.size(); b++) {
                right += winners[b] > losers[b] ? 1 : 0;
            }
            double logged = t.logHistory().stream().filter(e -> e.containsKey("reward_model/accuracy")).findFirst()
                    .orElseThrow().get("reward_model/accuracy");
            assertThat(logged).isEqualTo((double) right / pairs.size());
            assertThat(logged).as("an accuracy a swapped winner and loser would change").isNotEqualTo(0.5);
        }
    }

    @Test
    void theLearnedRewardScoresTheJointTextOfEachAlignedResponse() {
        Formatters f = Formatters.fromArgument(List.of((comlrl.utils.Formatter) item -> "A: " + item.getString("prompt"),
                item -> "B: " + item.getString("prompt")), 2);
        List<String> texts = MARLHFTrainer.jointTexts(f, List.of(List.of("x1", "x2"), List.of("y1", "y2")),
                TaskItem.of(Map.of("prompt", "hi")));
        assertThat(texts).containsExactly(
                "Joint multi-agent response\n\nAgent 1 prompt:\nA: hi\n\nAgent 1 response:\nx1\n\nAgent 2 prompt:\nB: hi"
                        + "\n\nAgent 2 response:\ny1",
                "Joint multi-agent response\n\nAgent 1 prompt:\nA: hi\n\nAgent 1 response:\nx2\n\nAgent 2 prompt:\nB: hi"
                        + "\n\nAgent 2 response:\ny2");
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"iac", "maac"})
    void anActorCriticBackendTrainsTheSameAgentsOnTheMappedConfig(String rl) {
        MARLHFConfig c = config().rlAlgorithm(rl).numGenerations(1).agentLearningRate(2e-3).valueLossCoef(0.3).build();
        try (MARLHFTrainer t = trainer(c).build()) {
            comlrl.trainers.actorcritic.ActorCriticTrainerBase ac = (comlrl.trainers.actorcritic.ActorCriticTrainerBase) t.rlTrainer();
            assertThat(ac.algorithmName()).isEqualTo(rl.toUpperCase(java.util.Locale.ROOT));
            assertThat(ac.args().criticLearningRate()).isEqualTo(2e-3); // unset: the agents' rate
            assertThat(ac.args().valueLossCoef()).isEqualTo(0.3);
            assertThat(ac.args().numTrainEpochs()).isEqualTo(1);
            t.train();
            assertThat(t.policies()).hasSize(2);
            assertThat(t.envStep()).isEqualTo(2);
            assertThat(t.evaluate()).containsKey("eval/turn_1/reward_mean");
        }
    }

    @Test
    void aMagrpoFamilyBackendTrainsWithItsBaselineOnTheMappedConfig() {
        try (MARLHFTrainer t = trainer(config().rlAlgorithm("mareforce").numGenerations(3).build()).build()) {
            comlrl.trainers.reinforce.MAGRPOTrainer m = (comlrl.trainers.reinforce.MAGRPOTrainer) t.rlTrainer();
            assertThat(m.algorithmName()).isEqualTo("MAREINFORCE");
            assertThat(m.args().advantageMode()).isEqualTo(comlrl.rl.AdvantageMode.RAW);
            assertThat(m.args().numGenerations()).isEqualTo(3);
            assertThat(m.args().agentLearningRate()).isEqualTo(1e-3);
            assertThat(m.args().seed()).isEqualTo(9);
        }
    }

    @Test
    void resumingFromEachStageEqualsTheUninterruptedRun(@TempDir Path dir) {
        Map<String, String> straight;
        Map<String, String> straightReward;
        try (MARLHFTrainer t = trainer(config().numTrainEpochs(2).build()).build()) {
            t.train();
            straight = MADPOTrainerTest.digests(t.policies().get(1));
            straightReward = digests(t.rewardModel());
        }
        try (MARLHFTrainer t = trainer(config().build()).build()) {
            t.train(dir.resolve("ckpt"), 1);
        }
        Path ckpt = dir.resolve("ckpt");
        assertThat(ckpt.resolve("checkpoint-1/preference_pairs.json")).exists();
        assertThat(ckpt.resolve("checkpoint-1/reward_model/config.json")).exists();
        assertThat(ckpt.resolve("checkpoint-1/reward_optimizer.safetensors")).exists();
        assertThat(ckpt.resolve("checkpoint-0/reward_model/config.json")).exists(); // the PbRL stages
        for (String from : List.of("checkpoint-1", "checkpoint-0")) {
            try (MARLHFTrainer t = trainer(config().numTrainEpochs(2).build()).build()) {
                t.train(dir.resolve("again-" + from), 1, ckpt.resolve(from));
                assertThat(MADPOTrainerTest.digests(t.policies().get(1))).as("resumed from " + from).isEqualTo(straight);
                assertThat(digests(t.rewardModel())).isEqualTo(straightReward);
            }
        }
    }

    @Test
    void aResumedRunWhoseOutputDirectoryHasFilesWritesIntoAResumeSubdirectory(@TempDir Path dir) throws Exception {
        Path run = dir.resolve("run");
        try (MARLHFTrainer t = trainer(config().build()).outputDir(run).build()) {
            t.train(dir.resolve("ckpt"), 1);
        }
        long lines = Files.readAllLines(run.resolve("metrics.jsonl")).size();
        try (MARLHFTrainer t = trainer(config().numTrainEpochs(2).build()).outputDir(run).build()) {
            t.train(dir.resolve("ckpt"), 1, dir.resolve("ckpt/checkpoint-1"));
            assertThat(t.outputDir()).isEqualTo(run.resolve("resume-checkpoint-1"));
        }
        assertThat(Files.readAllLines(run.resolve("metrics.jsonl"))).hasSize((int) lines); // left as it was
        assertThat(run.resolve("resume-checkpoint-1/metrics.jsonl")).exists();
        assertThat(Files.readAllLines(run.resolve("resume-checkpoint-1/metrics.jsonl"))).isNotEmpty();
    }

    /** Role 1 answers with the whole completion; the length-difference reward is then its length. */
    static comlrl.trainers.reinforce.CentralizedAdapter secondRoleAnswers(List<String> prompts) {
        return new comlrl.trainers.reinforce.CentralizedAdapter() {
            @Override
            public String buildPrompt(TaskItem item, List<String> agentPrompts) {
                String p = String.join(" | ", agentPrompts);
                prompts.add(p);
                return p;
            }

            @Override
            public List<String> parseCompletion(String completion, TaskItem item, int numAgents) {
                return List.of("", completion);
            }
        };
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"magrpo", "iac"})
    void centralizedMarlhfTrainsOneActorOnTheJointPrompt(String rl, @TempDir Path dir) {
        List<String> prompts = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        MARLHFConfig c = config().collaborationMode("centralized").rlAlgorithm(rl)
                .numGenerations(rl.equals("iac") ? 1 : 2).build();
        java.util.Set<String> seen = java.util.concurrent.ConcurrentHashMap.newKeySet();
        try (MARLHFTrainer t = MARLHFTrainer.builder().agentModel(agent.toString()).centralizedAdapter(secondRoleAnswers(prompts))
                .metricsCallback(!rl.equals("iac") ? null : rollouts -> { // a MAGRPO backend refuses a metrics_callback
                    // the one actor's rollouts arrive as one sample per role, each with its role's prompt
                    rollouts.forEach(r -> seen.add(r.agentIdx() + ":" + r.prompt().split(":")[0]
                            + (r.agentIdx() == 0 ? ":" + r.completion() : r.completion().isEmpty() ? ":empty" : "")));
                    return Map.of("samples", (double) rollouts.size());
                })
                .formatters(List.of(item -> "brief: " + item.getString("prompt"), item -> "long: " + item.getString("prompt")))
                .rewardFunc(TestRewards.lengthDifference()).trainDataset(MADPOTrainerTest.tasks(2))
                .evalDataset(MADPOTrainerTest.tasks(2)).args(c).verbose(false).build()) {
            assertThat(t.policies()).hasSize(1);
            t.train();
            assertThat(t.numPairs()).isPositive();
            assertThat(t.evaluate()).containsKey("eval/turn_1/reward_mean");
            t.saveModel(dir);
        }
        assertThat(prompts).contains("brief: Write a story about a cat. | long: Write a story about a cat.");
        // one actor: MAGRPO saves agent_0/, IAC (as the reference) the run directory itself
        assertThat(dir.resolve(rl.equals("iac") ? "config.json" : "agent_0/config.json")).exists();
        assertThat(dir.resolve("agent_1")).doesNotExist();
        assertThat(dir.resolve(MARLHFTrainer.REWARD_MODEL_DIR + "/config.json")).exists();
        if (rl.equals("iac")) {
            // role 0's part is "", role 1's the whole completion
            assertThat(seen).containsExactlyInAnyOrder("0:brief:", "1:long");
        }
    }

    @Test
    void badInputFailsBeforeAnyModelLoads() {
        assertThatThrownBy(() -> trainer(config().rewardModelDevice("cuda:3").build()).build())
                .hasMessageContaining("reward_model_device is \"cuda:3\"").hasMessageContaining("reward_model_device: cpu");
        try (CausalLm a = TinyAgents.load(agent); CausalLm b = TinyAgents.load(other)) {
            assertThatThrownBy(() -> trainer(config().build()).agents(List.of(a, b)).build())
                    .hasMessage("reward_model_name must be provided when agent models are objects.");
        }

    }

    static Map<String, String> digests(JointRewardModel rm) {
        Map<String, String> out = new java.util.LinkedHashMap<>();
        try (comlrl.tensor.Scope s = comlrl.tensor.Scope.open()) {
            rm.classifier().namedParameters().forEach((k, v) -> out.put(k, java.util.HexFormat.of().formatHex(
                    sha(v.toBytes()), 0, 8)));
        }
        return out;
    }

    private static byte[] sha(byte[] bytes) {
        try {
            return java.security.MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
