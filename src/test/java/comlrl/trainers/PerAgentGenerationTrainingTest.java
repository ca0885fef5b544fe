package comlrl.trainers;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.data.Dataset;
import comlrl.data.TaskItem;
import comlrl.generation.GenerationSettings;
import comlrl.trainers.common.Trainer;
import comlrl.reward.RewardFunction;
import comlrl.trainers.actorcritic.IACConfig;
import comlrl.trainers.actorcritic.IACTrainer;
import comlrl.trainers.actorcritic.RolloutSample;
import comlrl.trainers.preference.MADPOConfig;
import comlrl.trainers.preference.MADPOTrainer;
import comlrl.trainers.reinforce.MAGRPOConfig;
import comlrl.trainers.reinforce.MAGRPOTrainer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each agent samples with its own generation settings in every family (MAGRPO, IAC, MADPO): with
 * {@code max_new_tokens: [3, 7]} and {@code temperature: [0.7, 1.3]}, agent 0's completions have at
 * most 3 tokens and agent 1's up to 7 (its random weights rarely sample EOS, so it reaches 7), and
 * each agent's first completions are exactly those of a run giving every agent that agent's values
 * (the same seeds: agent i's sampling depends only on its model, prompt, seed and settings).
 */
class PerAgentGenerationTrainingTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<Integer> MAX_NEW_TOKENS = List.of(3, 7);
    private static final List<Double> TEMPERATURE = List.of(0.7, 1.3);

    @TempDir
    static Path models;
    static List<String> agents;

    @BeforeAll
    static void writeAgents() {
        // no extra EOS ids: completions run to max_new_tokens unless the tokenizer's EOS is drawn
        agents = List.of(TinyAgents.create(models.resolve("a"), 21).toString(),
                TinyAgents.create(models.resolve("b"), 22).toString());
    }

    static Dataset oneTask() {
        return Dataset.fromRows(List.of(Map.of("prompt", "Say hello.")));
    }

    /** Keeps the completions of the first reward call (per agent, its candidates), then scores by length difference. */
    static final class FirstCall implements RewardFunction {
        final RewardFunction inner = TestRewards.lengthDifference();
        List<List<String>> first;

        @Override
        public synchronized List<Double> score(List<List<String>> agentCompletions, List<TaskItem> batchItems) {
            if (first == null) {
                first = agentCompletions.stream().map(List::copyOf).toList();
            }
            return inner.score(agentCompletions, batchItems);
        }
    }

    /** Each agent's resolved sampling (what its generate calls get, and what the CLI writes to config.json's generation). */
    static List<Object> used(Trainer t) {
        List<Object> out = new ArrayList<>();
        for (GenerationSettings.Resolved r : t.generationSettings()) {
            out.add(List.of(r.sampling().maxNewTokens(), r.sampling().temperature()));
        }
        return out;
    }

    static final List<Object> OWN = List.of(List.of(3, 0.7), List.of(7, 1.3));

    /**
     * Agent 0's first completions equal those of the run where every agent has agent 0's values, and
     * agent 1's those of the run with agent 1's values; the two scalar runs differ for agent 1, so
     * sampling agent 1 with agent 0's settings would not pass.
     */
    static void eachAgentSamplesAsWithItsOwnValues(FirstCall perAgent, FirstCall asAgent0, FirstCall asAgent1) {
        assertThat(perAgent.first.get(0)).isEqualTo(asAgent0.first.get(0));
        assertThat(perAgent.first.get(1)).isEqualTo(asAgent1.first.get(1));
        assertThat(asAgent0.first.get(1)).isNotEqualTo(asAgent1.first.get(1));
    }

    @Test
    void magrpoAgentsSampleWithTheirOwnLengthsAndTemperatures(@TempDir Path out) throws Exception {
        List<FirstCall> calls = new ArrayList<>();
        List<Map<String, Double>> perAgentLog = null;
        for (int run = 0; run < 3; run++) {
            MAGRPOConfig.Builder<MAGRPOConfig> b = MAGRPOConfig.builder().numAgents(2).numTurns(1).numTrainEpochs(1)
                    .numGenerations(2).topP(1.0).topK(0).loggingSteps(1).evalInterval(0).evalNumSamples(1)
                    .agentLearningRate(1e-3).seed(7);
            if (run == 0) {
                b.maxNewTokensPerAgent(MAX_NEW_TOKENS).temperaturePerAgent(TEMPERATURE);
            } else {
                b.maxNewTokens(MAX_NEW_TOKENS.get(run - 1)).temperature(TEMPERATURE.get(run - 1));
            }
            FirstCall reward = new FirstCall();
            calls.add(reward);
            try (MAGRPOTrainer t = MAGRPOTrainer.builder().agents(agents).rewardFunc(reward).trainDataset(oneTask())
                    .args(b.build()).outputDir(out.resolve("run" + run)).verbose(false).build()) {
                t.train();
                if (run == 0) {
                    assertThat(used(t)).isEqualTo(OWN);
                    perAgentLog = t.logHistory().stream().filter(m -> m.containsKey("agent_0/turn_1/completion_length_mean"))
                            .toList();
                }
            }
        }
        // tokens per completion, from the trainer's own samples: agent 0 capped at 3, agent 1 beyond it, up to 7
        assertThat(perAgentLog).isNotEmpty();
        for (Map<String, Double> m : perAgentLog) {
            assertThat(m.get("agent_0/turn_1/completion_length_mean")).isBetween(1.0, 3.0);
            assertThat(m.get("agent_1/turn_1/completion_length_mean")).isGreaterThan(3.0).isLessThanOrEqualTo(7.0);
        }
        assertThat(JSON.readTree(out.resolve("run0/config.json").toFile()).get("args").get("temperature").toString())
                .isEqualTo("[0.7,1.3]");
        eachAgentSamplesAsWithItsOwnValues(calls.get(0), calls.get(1), calls.get(2));
    }

    @Test
    void iacAgentsSampleWithTheirOwnLengthsAndTemperatures(@TempDir Path out) throws Exception {
        List<FirstCall> calls = new ArrayList<>();
        List<RolloutSample> samples = new ArrayList<>();
        for (int run = 0; run < 3; run++) {
            IACConfig.Builder b = IACConfig.builder().numAgents(2).numTurns(1).numTrainEpochs(1).numGenerations(2)
                    .topP(1.0).topK(0).rolloutBufferSize(2).evalInterval(0).evalNumSamples(1).agentLearningRate(1e-3)
                    .criticLearningRate(1e-3).useSeparateCritic(false).seed(7);
            if (run == 0) {
                b.maxNewTokensPerAgent(MAX_NEW_TOKENS).temperaturePerAgent(TEMPERATURE);
            } else {
                b.maxNewTokens(MAX_NEW_TOKENS.get(run - 1)).temperature(TEMPERATURE.get(run - 1));
            }
            FirstCall reward = new FirstCall();
            calls.add(reward);
            boolean record = run == 0;
            try (IACTrainer t = IACTrainer.builder().agents(agents).rewardFunc(reward).trainDataset(oneTask())
                    .args(b.build()).outputDir(out.resolve("run" + run)).verbose(false).metricsCallback(r -> {
                        if (record) {
                            samples.addAll(r);
                        }
                        return Map.of();
                    }).build()) {
                t.train();
                if (record) {
                    assertThat(used(t)).isEqualTo(OWN);
                }
            }
        }
        // every sample's response tokens within its own agent's max_new_tokens; agent 1 goes beyond agent 0's
        assertThat(samples).extracting(RolloutSample::agentIdx).contains(0, 1);
        for (RolloutSample s : samples) {
            assertThat(s.responseLen()).as("agent %d", s.agentIdx()).isBetween(1, MAX_NEW_TOKENS.get(s.agentIdx()));
        }
        assertThat(samples.stream().filter(s -> s.agentIdx() == 1).mapToInt(RolloutSample::responseLen).max().orElse(0))
                .isGreaterThan(3);
        eachAgentSamplesAsWithItsOwnValues(calls.get(0), calls.get(1), calls.get(2));
    }

    @Test
    void madpoAgentsSampleWithTheirOwnLengthsAndTemperatures(@TempDir Path out) throws Exception {
        List<FirstCall> calls = new ArrayList<>();
        for (int run = 0; run < 3; run++) {
            MADPOConfig.Builder b = MADPOConfig.builder().numAgents(2).numTrainEpochs(1).preferenceNumCandidates(2)
                    .preferencePairsPerSample(1).trainBatchSize(1).topP(1.0).topK(0).evalInterval(0).evalNumSamples(1)
                    .agentLearningRate(1e-3).loggingSteps(1).seed(9);
            if (run == 0) {
                b.maxNewTokensPerAgent(MAX_NEW_TOKENS).temperaturePerAgent(TEMPERATURE);
            } else {
                b.maxNewTokens(MAX_NEW_TOKENS.get(run - 1)).temperature(TEMPERATURE.get(run - 1));
            }
            FirstCall reward = new FirstCall();
            calls.add(reward);
            try (MADPOTrainer t = MADPOTrainer.builder().agents(agents).rewardFunc(reward).trainDataset(oneTask())
                    .args(b.build()).outputDir(out.resolve("run" + run)).verbose(false).build()) {
                t.train();
                if (run == 0) {
                    assertThat(used(t)).isEqualTo(OWN);
                }
            }
        }
        eachAgentSamplesAsWithItsOwnValues(calls.get(0), calls.get(1), calls.get(2));
    }
}
