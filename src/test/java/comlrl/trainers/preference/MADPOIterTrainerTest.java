package comlrl.trainers.preference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.trainers.TestRewards;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** MADPOIter end to end on tiny agents: iterations, replay shards, comparators, policy checkpoints, resume. */
class MADPOIterTrainerTest {
    static MADPOIterConfig.Builder config() {
        return MADPOIterConfig.builder().numAgents(2).numIterations(2).numTrainEpochs(1).preferenceNumCandidates(4)
                .preferencePairsPerSample(2).trainBatchSize(2).maxNewTokens(6).temperature(1.0).topP(1.0).topK(0)
                .evalInterval(0).evalNumSamples(2).agentLearningRate(1e-3).dpoBeta(0.5).loggingSteps(1).seed(9);
    }

    static MADPOIterTrainer.Builder trainer(MADPOIterConfig c, Path run) {
        MADPOTrainerTest.writeAgentsIfNeeded();
        return MADPOIterTrainer.builder().agents(List.of(MADPOTrainerTest.agent.toString(), MADPOTrainerTest.other.toString()))
                .rewardFunc(TestRewards.lengthDifference()).trainDataset(MADPOTrainerTest.tasks(2))
                .evalDataset(MADPOTrainerTest.tasks(2)).args(c).outputDir(run).verbose(false);
    }

    @ParameterizedTest
    @ValueSource(strings = {"current", "current_copy", "history"})
    void eachIterationWritesItsShardAndTrainsOnTheReplay(String policy, @TempDir Path dir) {
        try (MADPOIterTrainer t = trainer(config().comparatorPolicy(policy).build(), dir.resolve("run")).build()) {
            t.train();
            assertThat(t.iterationsDone()).isEqualTo(2);
            assertThat(t.replayDir().resolve("iteration_0001.json")).exists();
            assertThat(t.replayDir().resolve("iteration_0002.json")).exists();
            assertThat(t.logHistory()).anyMatch(e -> e.containsKey("iter/current_preference_pairs")
                    && e.get("iter/current_iteration") == 2.0);
            assertThat(t.evaluate()).containsKey("eval/turn_1/reward_mean");
            if (policy.equals("history")) {
                assertThat(t.policyCheckpointDir().resolve("initial/agent_0/config.json")).exists();
                assertThat(t.policyCheckpointDir().resolve("iteration_0001/agent_1/config.json")).exists();
                assertThat(t.policyCheckpointDir().resolve("iteration_0002/agent_1/config.json")).exists();
            } else {
                assertThat(t.policyCheckpointDir()).isNull();
            }
        }
    }

    @Test
    void withoutAnOutputDirectoryTheTemporaryReplayAndPolicyDirectoriesAreDeletedOnClose() {
        Path replay;
        Path policies;
        try (MADPOIterTrainer t = trainer(config().numIterations(1).comparatorPolicy("history").build(), null).build()) {
            t.train();
            replay = t.replayDir();
            policies = t.policyCheckpointDir();
            assertThat(replay.resolve("iteration_0001.json")).exists();
            assertThat(policies.resolve("iteration_0001/agent_0/config.json")).exists();
        }
        assertThat(replay).doesNotExist();
        assertThat(policies).doesNotExist();
    }

    @Test
    void theIterativePairSelectionAndCapApply(@TempDir Path dir) {
        try (MADPOIterTrainer t = trainer(config().numIterations(1).pairSelection("comparator_reward")
                .preferencePairsPerSample(1).build(), dir.resolve("run")).build()) {
            t.train();
            Map<String, Double> iter = t.logHistory().stream().filter(e -> e.containsKey("iter/current_preference_pairs"))
                    .findFirst().orElseThrow();
            assertThat(iter.get("iter/current_preference_pairs")).isBetween(1.0, 2.0); // at most 1 per item, 2 items
        }
        try (MADPOIterTrainer t = trainer(config().numIterations(1).pairSelection("all").preferencePairsPerSample(null)
                .build(), dir.resolve("run2")).build()) {
            t.train();
            Map<String, Double> iter = t.logHistory().stream().filter(e -> e.containsKey("iter/current_preference_pairs"))
                    .findFirst().orElseThrow();
            assertThat(iter.get("iter/current_preference_pairs")).isGreaterThan(2.0); // every aligned pair with a gap
        }
    }

    @Test
    void aCentralizedComparatorAgentWritesEveryRolesAnswer(@TempDir Path dir) {
        List<String> prompts = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        java.util.concurrent.atomic.AtomicInteger parsed = new java.util.concurrent.atomic.AtomicInteger();
        comlrl.trainers.reinforce.CentralizedAdapter adapter = new comlrl.trainers.reinforce.CentralizedAdapter() {
            @Override
            public String buildPrompt(comlrl.data.TaskItem item, List<String> agentPrompts) {
                String p = "JOINT " + String.join(" || ", agentPrompts);
                prompts.add(p);
                return p;
            }

            @Override
            public List<String> parseCompletion(String completion, comlrl.data.TaskItem item, int numAgents) {
                if (parsed.incrementAndGet() % 4 == 0) {
                    throw new IllegalArgumentException("unparseable"); // -> every role ""
                }
                return List.of("A:" + completion, "B:" + completion);
            }
        };
        try (MADPOIterTrainer t = trainer(config().numIterations(1).comparatorGenerationMode("centralized")
                .comparatorCentralizedAgentIndex(1).build(), dir.resolve("run")).centralizedAdapter(adapter).build()) {
            t.train();
        }
        assertThat(prompts).hasSize(2).allMatch(p -> p.startsWith("JOINT ") && p.contains(" || "));
        assertThat(parsed.get()).isEqualTo(2 * 4); // 4 comparator candidates per item
        // each role's text of a comparator side is that role's part of the joint completion
        List<List<String>> comparatorSides = PreferenceReplay.readShard(dir.resolve("run/preference_replay")
                .resolve(PreferenceReplay.shardName(1))).records().stream()
                .flatMap(r -> java.util.stream.Stream.of(r.winnerTexts(), r.loserTexts()))
                .filter(texts -> texts.get(0).startsWith("A:")).toList();
        assertThat(comparatorSides).isNotEmpty().allSatisfy(texts -> assertThat(texts.get(1))
                .isEqualTo("B:" + texts.get(0).substring(2)));
    }

    @Test
    void centralizedCollaborationTrainsOneActorOnJointPrompts(@TempDir Path dir) throws Exception {
        Path run = dir.resolve("run");
        MADPOTrainerTest.writeAgentsIfNeeded();
        try (MADPOIterTrainer t = MADPOIterTrainer.builder().agentModel(MADPOTrainerTest.agent.toString())
                .formatters(List.of(item -> "brief: " + item.getString("prompt"), item -> "long: " + item.getString("prompt")))
                .rewardFunc(TestRewards.lengthDifference()).trainDataset(MADPOTrainerTest.tasks(2)).outputDir(run)
                .args(config().numIterations(2).collaborationMode("centralized").comparatorGenerationMode("centralized")
                        .comparatorPolicy("history").build()).verbose(false)
                .centralizedAdapter(new comlrl.trainers.reinforce.CentralizedAdapter() {
                    @Override
                    public String buildPrompt(comlrl.data.TaskItem item, List<String> agentPrompts) {
                        return String.join(" | ", agentPrompts);
                    }

                    @Override
                    public List<String> parseCompletion(String completion, comlrl.data.TaskItem item, int numAgents) {
                        return List.of("", completion); // role 1 answers; the reward is its length
                    }
                }).build()) {
            assertThat(t.policies()).hasSize(1);
            t.train();
            assertThat(t.iterationsDone()).isEqualTo(2);
            assertThat(t.policyCheckpointDir().resolve("iteration_0001/agent_0/config.json")).exists();
            assertThat(t.policyCheckpointDir().resolve("iteration_0001/agent_1")).doesNotExist();
        }
        String shard = Files.readString(run.resolve("preference_replay/iteration_0001.json"));
        assertThat(shard).contains("brief: Write a story about a cat. | long: Write a story about a cat.");
    }

    @Test
    void aModelComparatorAndFrozenCopiesOnOtherDevices(@TempDir Path dir) {
        MADPOTrainerTest.writeAgentsIfNeeded();
        // the comparator agents swapped: agent 0's comparator is the other model
        try (MADPOIterTrainer t = trainer(config().numIterations(1).comparatorPolicy("model").comparatorAgents(
                List.of(MADPOTrainerTest.other.toString(), MADPOTrainerTest.agent.toString())).build(), dir.resolve("m"))
                .build()) {
            t.train();
            assertThat(t.logHistory()).anyMatch(e -> e.containsKey("iter/comparator_reward_mean"));
        }
        // agents and comparator_devices both on the cpu: the live agents serve as the copy (no clone needed)
        try (MADPOIterTrainer t = trainer(config().numIterations(1).comparatorPolicy("current_copy")
                .comparatorDevices(List.of("cpu")).build(), dir.resolve("c")).build()) {
            t.train();
            assertThat(t.iterationsDone()).isEqualTo(1);
        }
    }

    @Test
    void withoutOwnDirectoriesTheReplayFollowsTheOutputDirectoryRules(@TempDir Path dir) {
        Path run = dir.resolve("run");
        assertThat(IterativeTrainer.outputBase(run, Map.of("output_dir", "/elsewhere"), "7")).isEqualTo(run);
        assertThat(IterativeTrainer.outputBase(null, Map.of("output_dir", "/w/out", "dir", "/w/dir"), "7"))
                .isEqualTo(Path.of("/w/out"));
        assertThat(IterativeTrainer.outputBase(null, Map.of("config_sections", Map.of("output", Map.of("base_dir", "/b")),
                "dir", "/w/dir"), "7")).isEqualTo(Path.of("/b/job_7"));
        assertThat(IterativeTrainer.outputBase(null, Map.of("dir", "/w/dir"), null)).isEqualTo(Path.of("/w/dir"));
        assertThat(IterativeTrainer.outputBase(null, Map.of("project", "p"), "7")).isNull();
        assertThat(IterativeTrainer.outputBase(null, null, null)).isNull();
    }

    @Test
    void theHistoryComparatorFallsBackToEarlierPoliciesThenTheInitialOne(@TempDir Path dir) throws Exception {
        Files.createDirectories(dir.resolve("initial"));
        Files.createDirectories(dir.resolve("iteration_0001"));
        Files.createDirectories(dir.resolve("iteration_0003"));
        assertThat(IterationComparators.historyDirectory(dir, 4, 1)).isEqualTo(dir.resolve("iteration_0003"));
        assertThat(IterationComparators.historyDirectory(dir, 4, 2)).isEqualTo(dir.resolve("iteration_0001")); // 2 is missing
        assertThat(IterationComparators.historyDirectory(dir, 2, 1)).isEqualTo(dir.resolve("iteration_0001"));
        assertThat(IterationComparators.historyDirectory(dir, 1, 1)).isEqualTo(dir.resolve("initial"));
        assertThat(IterationComparators.historyDirectory(dir, 3, 5)).isEqualTo(dir.resolve("initial"));
    }

    @Test
    void perIterationTrainingUsesMadposFieldsOfTheIterativeConfig() {
        MADPOConfig c = MADPOIterTrainer.dpoConfig(config().numTrainEpochs(3).dpoReference("frozen_initial").build());
        assertThat(c.numTrainEpochs()).isEqualTo(3);
        assertThat(c.dpoReference()).isEqualTo(DpoReference.FROZEN_INITIAL);
        assertThat(c.dpoBeta()).isEqualTo(0.5);
        assertThat(c.trainBatchSize()).isEqualTo(2);
    }

    @Test
    void resumingAtAnIterationBoundaryEqualsTheUninterruptedRun(@TempDir Path dir) throws Exception {
        Map<String, String> straight;
        try (MADPOIterTrainer t = trainer(config().numIterations(3).comparatorPolicy("history")
                .preferenceReplayMode("all_history").build(), dir.resolve("a")).build()) {
            t.train();
            straight = MADPOTrainerTest.digests(t.policies().get(1));
        }
        Path ckpt = dir.resolve("ckpt");
        try (MADPOIterTrainer t = trainer(config().numIterations(2).comparatorPolicy("history")
                .preferenceReplayMode("all_history").policyCheckpointDir(dir.resolve("policies").toString()).build(),
                dir.resolve("b")).build()) {
            t.train(ckpt, 1);
        }
        assertThat(ckpt.resolve("checkpoint-1/preference_replay/iteration_0001.json")).exists();
        assertThat(ckpt.resolve("checkpoint-2/preference_replay/iteration_0002.json")).exists();
        assertThat(ckpt.resolve("checkpoint-1/preference_replay/iteration_0002.json")).doesNotExist();
        // into a fresh run directory: the replay shards come back from the checkpoint
        try (MADPOIterTrainer t = trainer(config().numIterations(3).comparatorPolicy("history")
                .preferenceReplayMode("all_history").policyCheckpointDir(dir.resolve("policies").toString()).build(),
                dir.resolve("c")).build()) {
            t.train(ckpt, 1, ckpt.resolve("checkpoint-2"));
            assertThat(t.iterationsDone()).isEqualTo(3);
            assertThat(t.replayDir().resolve("iteration_0001.json")).exists();
            assertThat(MADPOTrainerTest.digests(t.policies().get(1))).isEqualTo(straight);
        }
        // into the same run directory, which has files: outputs go to its resume subdirectory
        try (MADPOIterTrainer t = trainer(config().numIterations(3).comparatorPolicy("history")
                .preferenceReplayMode("all_history").policyCheckpointDir(dir.resolve("policies").toString()).build(),
                dir.resolve("b")).build()) {
            t.train(ckpt, 1, ckpt.resolve("checkpoint-2"));
            assertThat(t.outputDir()).isEqualTo(dir.resolve("b/resume-checkpoint-2"));
            // the resumed run's shards go there too; the earlier run's replay stays as it was
            assertThat(t.replayDir()).isEqualTo(dir.resolve("b/resume-checkpoint-2/preference_replay"));
            assertThat(t.replayDir().resolve("iteration_0003.json")).exists();
            assertThat(dir.resolve("b/preference_replay/iteration_0003.json")).doesNotExist();
            assertThat(dir.resolve("b/preference_replay/iteration_0002.json")).exists();
            assertThat(MADPOTrainerTest.digests(t.policies().get(1))).isEqualTo(straight);
        }
    }

    @Test
    void anApiComparatorIsAskedForEachAgentsCandidatesAndItsKeyIsWrittenNowhere(@TempDir Path dir) throws Exception {
        String key = "sk-test-key-7731";
        // the comparator answers with texts of different lengths, so that some pairs are won by each side
        try (LocalComparatorServer server = new LocalComparatorServer(List.of("a", "bb bb bb", "ccc", "dddd dddd dddd dddd"))) {
            Path run = dir.resolve("run");
            MADPOIterConfig c = config().numIterations(1).comparatorPolicy("api").set("comparator_api_url", server.url())
                    .set("comparator_api_key", key).build();
            try (MADPOIterTrainer t = trainer(c, run).build()) {
                t.train(dir.resolve("ckpt"), 1);
                assertThat(t.logHistory()).anyMatch(e -> e.containsKey("iter/current_preference_pairs"));
            }
            List<String> bodies = server.requests();
            assertThat(bodies).hasSize(2 * 2); // 2 items × 2 agents
            assertThat(bodies.get(0)).contains("\"agent_idx\":0").contains("\"num_return_sequences\":4")
                    .contains("auth=Bearer " + key);
            assertNoFileContains(dir, key);
        }
    }

    @Test
    void aComparatorThatEchoesTheKeyIntoItsCompletionsCannotCarryItIntoAnyFile(@TempDir Path dir) throws Exception {
        String key = "sk-echoed-key-5519";
        try (LocalComparatorServer server = LocalComparatorServer.echoing(List.of("a", "bb bb bb", "ccc", "dddd"))) {
            Path run = dir.resolve("run");
            MADPOIterConfig c = config().numIterations(1).comparatorPolicy("api").set("comparator_api_url", server.url())
                    .set("comparator_api_key", key).build();
            try (MADPOIterTrainer t = trainer(c, run).build()) {
                t.train(dir.resolve("ckpt"), 1);
            }
            assertThat(server.requests()).isNotEmpty().allMatch(r -> r.endsWith("auth=Bearer " + key));
            assertNoFileContains(dir, key);
            // the echoed header did reach the stored pairs, with the key replaced
            try (java.util.stream.Stream<Path> shards = Files.list(run.resolve("preference_replay"))) {
                String text = String.join("\n", shards.map(f -> {
                    try {
                        return Files.readString(f);
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                }).toList());
                assertThat(text).contains("[Authorization: Bearer ***, x-api-key: null]");
            }
        }
    }

    /** Fails when any file under {@code dir} contains {@code secret}. */
    static void assertNoFileContains(Path dir, String secret) throws java.io.IOException {
        try (java.util.stream.Stream<Path> files = Files.walk(dir)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                assertThat(new String(Files.readAllBytes(f), java.nio.charset.StandardCharsets.ISO_8859_1))
                        .as("%s", f).doesNotContain(secret);
            }
        }
    }

    @Test
    void whatIsNotBuiltYetIsRefusedBeforeAnyModelLoads(@TempDir Path dir) {
        assertThatThrownBy(() -> trainer(config().logRewardDistribution(true).build(), dir).build())
                .hasMessageContaining("log_reward_distribution requires a reward function that states its range");

    }
}
