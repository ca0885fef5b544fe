package comlrl.trainers;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.data.Dataset;
import comlrl.report.HtmlReport;
import comlrl.report.RunReport;
import comlrl.report.RunTimes;
import comlrl.trainers.actorcritic.IACConfig;
import comlrl.trainers.actorcritic.IACTrainer;
import comlrl.trainers.preference.MADPOConfig;
import comlrl.trainers.preference.MADPOTrainer;
import comlrl.trainers.reinforce.MAGRPOConfig;
import comlrl.trainers.reinforce.MAGRPOTrainer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A trainer built from Java with an output directory records its run as the command line does
 * ({@code config.json} with provenance, {@code splits.json}, {@code run.json}, {@code report.html} when
 * asked), so that the report names its algorithm and models.
 */
class JavaRunRecordTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path models;
    static Path agentA;
    static Path agentB;

    @BeforeAll
    static void writeAgents() {
        agentA = TinyAgents.create(models.resolve("a"), 1);
        agentB = TinyAgents.create(models.resolve("b"), 2);
    }

    static Dataset tasks(int n) {
        List<Map<String, Object>> rows = new ArrayList<>();
        String[] prompts = {"Write a story about a cat.", "Explain why the sky is blue.", "Say hello."};
        for (int i = 0; i < n; i++) {
            rows.add(Map.of("prompt", prompts[i % prompts.length]));
        }
        return Dataset.fromRows(rows);
    }

    private static JsonNode read(Path file) throws Exception {
        return JSON.readTree(file.toFile());
    }

    private static List<String> names(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void magrpoRecordsItsConfigSplitsTimesAndReport(@TempDir Path out) throws Exception {
        MAGRPOConfig config = MAGRPOConfig.builder().numTurns(1).numTrainEpochs(2).numGenerations(2).maxNewTokens(4)
                .temperature(1.0).topP(1.0).topK(0).loggingSteps(1).evalInterval(0).evalNumSamples(1)
                .agentLearningRate(1e-3).seed(7).build();
        try (MAGRPOTrainer trainer = MAGRPOTrainer.builder().agents(List.of(agentA.toString(), agentB.toString()))
                .rewardFunc(TestRewards.lengthDifference()).trainDataset(tasks(3).select(new int[] {2, 0}))
                .evalDataset(tasks(3).select(new int[] {1})).args(config).outputDir(out).report(true).verbose(false)
                .build()) {
            trainer.train();
            trainer.evaluate();
            assertThat(out.resolve("run.json")).as("written when the trainer closes").doesNotExist();
        }
        assertThat(names(out)).containsExactly("config.json", "eval_samples.jsonl", "metrics.jsonl", "report.html",
                "run.json", "splits.json");

        JsonNode cfg = read(out.resolve("config.json"));
        assertThat(cfg.get("algorithm").asText()).isEqualTo("magrpo"); // the config name, as the command line writes it
        assertThat(cfg.get("num_agents").asInt()).isEqualTo(2);
        assertThat(JSON.convertValue(cfg.get("agents"), List.class)).containsExactly(agentA.toString(), agentB.toString());
        assertThat(cfg.get("args").get("num_train_epochs").asInt()).isEqualTo(2);
        assertThat(cfg.get("args").get("max_new_tokens").asInt()).isEqualTo(4);
        assertThat(cfg.get("output_dir").asText()).isEqualTo(out.toString());
        assertThat(cfg.get("provenance").get("seed").asLong()).isEqualTo(7);
        assertThat(cfg.get("provenance").get("java_version").asText()).isEqualTo(System.getProperty("java.version"));
        assertThat(cfg.get("provenance").has("started_at")).isTrue();

        // the rows of the source each set holds, in the order read: train [2, 0], eval [1] (eval_num_samples 1)
        JsonNode splits = read(out.resolve("splits.json"));
        assertThat(JSON.convertValue(splits.get("train").get("rows"), int[].class)).containsExactly(2, 0);
        assertThat(JSON.convertValue(splits.get("eval").get("rows"), int[].class)).containsExactly(1);
        assertThat(JSON.convertValue(splits.get("eval").get("evaluated_rows"), int[].class)).containsExactly(1);
        assertThat(splits.get("train").get("source_rows").asInt()).isEqualTo(3);

        // 2 items x 2 epochs trained, within the run's wall time
        RunTimes times = RunTimes.read(out).orElseThrow();
        assertThat(times.trainItems()).isEqualTo(4);
        assertThat(times.trainS()).isPositive().isLessThanOrEqualTo(times.wallS());

        RunReport report = RunReport.read(out);
        assertThat(report.algorithm()).isEqualTo("magrpo");
        assertThat(report.models()).containsExactly("agents: " + agentA + ", " + agentB);
        assertThat(report.provenance()).containsEntry("seed", "7");
        String html = Files.readString(out.resolve(HtmlReport.FILE_NAME));
        assertThat(html).contains("magrpo").contains(agentA.toString()).doesNotContain("No config.json in the run directory");
    }

    @Test
    void iacRecordsItsAgentAndCriticModels(@TempDir Path out) throws Exception {
        IACConfig config = IACConfig.builder().numAgents(2).numTurns(1).numTrainEpochs(1).numGenerations(2)
                .maxNewTokens(4).temperature(1.0).topP(1.0).topK(0).rolloutBufferSize(2).evalInterval(0)
                .agentLearningRate(1e-3).criticLearningRate(1e-3).seed(11).build();
        try (IACTrainer trainer = IACTrainer.builder().agentModel(agentA.toString()).criticModel(agentB.toString())
                .rewardFunc(TestRewards.lengthDifference()).trainDataset(tasks(3)).args(config).outputDir(out)
                .verbose(false).build()) {
            trainer.train();
        }
        assertThat(names(out)).as("no report unless asked").containsExactly("config.json", "metrics.jsonl", "run.json",
                "splits.json");
        JsonNode cfg = read(out.resolve("config.json"));
        assertThat(cfg.get("algorithm").asText()).isEqualTo("iac");
        assertThat(cfg.get("agent_model").asText()).isEqualTo(agentA.toString());
        assertThat(cfg.get("critic_model").asText()).isEqualTo(agentB.toString());
        assertThat(cfg.get("args").get("num_agents").asInt()).isEqualTo(2);
        assertThat(cfg.get("provenance").get("seed").asLong()).isEqualTo(11);
        assertThat(read(out.resolve("splits.json")).has("eval")).as("no evaluation set").isFalse();
        assertThat(RunTimes.read(out).orElseThrow().trainItems()).isEqualTo(3); // 3 items x 1 epoch

        RunReport report = RunReport.read(out);
        assertThat(report.algorithm()).isEqualTo("iac");
        assertThat(report.models()).containsExactly("agents: " + agentA, "critics: " + agentB);
    }

    /**
     * A MADPO run, then the same run resumed from its checkpoint into the same output directory: the
     * resumed run records itself in the {@code resume-checkpoint-1} directory it writes into, and the
     * first run's record stays as it was (as the command line leaves it).
     */
    @Test
    void madpoResumedFromJavaRecordsItselfInItsResumeDirectory(@TempDir Path out) throws Exception {
        MADPOConfig config = MADPOConfig.builder().numAgents(2).numTrainEpochs(1).preferenceNumCandidates(2)
                .preferencePairsPerSample(1).trainBatchSize(2).maxNewTokens(4).temperature(1.0).topP(1.0).topK(0)
                .evalInterval(0).evalNumSamples(1).agentLearningRate(1e-3).loggingSteps(1).seed(9).build();
        Path checkpoints = out.resolve("checkpoints");
        try (MADPOTrainer trainer = MADPOTrainer.builder().agents(List.of(agentA.toString(), agentB.toString()))
                .rewardFunc(TestRewards.lengthDifference()).trainDataset(tasks(2)).args(config).outputDir(out)
                .verbose(false).build()) {
            trainer.train(checkpoints, 1);
        }
        String firstConfig = Files.readString(out.resolve("config.json"));
        RunTimes firstTimes = RunTimes.read(out).orElseThrow();
        assertThat(firstTimes.trainS()).as("pairs and DPO epochs, timed").isPositive()
                .isLessThanOrEqualTo(firstTimes.wallS());
        assertThat(read(out.resolve("config.json")).get("algorithm").asText()).isEqualTo("madpo");
        assertThat(out.resolve("run.json")).isRegularFile();

        MADPOConfig twoEpochs = MADPOConfig.builder().numAgents(2).numTrainEpochs(2).preferenceNumCandidates(2)
                .preferencePairsPerSample(1).trainBatchSize(2).maxNewTokens(4).temperature(1.0).topP(1.0).topK(0)
                .evalInterval(0).evalNumSamples(1).agentLearningRate(1e-3).loggingSteps(1).seed(9).build();
        Path resumed;
        try (MADPOTrainer trainer = MADPOTrainer.builder().agents(List.of(agentA.toString(), agentB.toString()))
                .rewardFunc(TestRewards.lengthDifference()).trainDataset(tasks(2)).args(twoEpochs).outputDir(out)
                .report(true).verbose(false).build()) {
            trainer.train(checkpoints, 1, checkpoints.resolve("checkpoint-1"));
            resumed = trainer.outputDir();
        }
        assertThat(resumed).isEqualTo(out.resolve("resume-checkpoint-1"));
        assertThat(Files.readString(out.resolve("config.json"))).as("the first run's, untouched").isEqualTo(firstConfig);
        JsonNode cfg = read(resumed.resolve("config.json"));
        assertThat(cfg.get("output_dir").asText()).isEqualTo(resumed.toString());
        assertThat(cfg.get("args").get("num_train_epochs").asInt()).isEqualTo(2);
        assertThat(resumed.resolve("splits.json")).isRegularFile();
        assertThat(RunTimes.read(resumed)).isPresent();
        RunReport report = RunReport.read(resumed);
        assertThat(report.algorithm()).isEqualTo("madpo");
        assertThat(report.models()).containsExactly("agents: " + agentA + ", " + agentB);
        assertThat(resumed.resolve(HtmlReport.FILE_NAME)).isRegularFile();
    }

    /**
     * A preference run whose reward fails once the run has begun recording (config.json written by the
     * first evaluation's metrics) writes no run.json.
     */
    @Test
    void aFailedPreferenceRunWritesNoRunJson(@TempDir Path out) throws Exception {
        MADPOConfig config = MADPOConfig.builder().numAgents(2).numTrainEpochs(2).preferenceNumCandidates(2)
                .preferencePairsPerSample(1).trainBatchSize(2).maxNewTokens(4).evalInterval(1).evalNumSamples(1)
                .loggingSteps(1).seed(9).build();
        comlrl.reward.RewardFunction lengths = TestRewards.lengthDifference();
        comlrl.reward.RewardFunction failing = (completions, items) -> {
            if (Files.exists(out.resolve("config.json"))) {
                throw new IllegalStateException("reward service down");
            }
            return lengths.score(completions, items);
        };
        try (MADPOTrainer trainer = MADPOTrainer.builder().agents(List.of(agentA.toString(), agentB.toString()))
                .rewardFunc(failing).trainDataset(tasks(2)).evalDataset(tasks(1)).args(config).outputDir(out)
                .verbose(false).build()) {
            org.assertj.core.api.Assertions.assertThatThrownBy(trainer::train).hasMessageContaining("reward service down");
        }
        assertThat(out.resolve("config.json")).as("the run began recording").isRegularFile();
        assertThat(out.resolve("run.json")).doesNotExist();
    }

    @Test
    void aRunNotRecordedWritesItsMetricsOnly(@TempDir Path out) throws Exception {
        MAGRPOConfig config = MAGRPOConfig.builder().numTurns(1).numTrainEpochs(1).numGenerations(2).maxNewTokens(2)
                .evalNumSamples(1).seed(7).build();
        try (MAGRPOTrainer trainer = MAGRPOTrainer.builder().agents(List.of(agentA.toString(), agentB.toString()))
                .rewardFunc(TestRewards.lengthDifference()).trainDataset(tasks(1)).evalDataset(tasks(1)).args(config)
                .outputDir(out).recordRun(false).report(true).verbose(false).build()) {
            trainer.evaluate();
        }
        assertThat(names(out)).containsExactly("eval_samples.jsonl", "metrics.jsonl");
    }
}
