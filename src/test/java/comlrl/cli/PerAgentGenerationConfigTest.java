package comlrl.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.trainers.actorcritic.IACConfig;
import comlrl.trainers.preference.MADPOConfig;
import comlrl.trainers.reinforce.CentralizedMAGRPOConfig;
import comlrl.trainers.reinforce.MAGRPOConfig;
import comlrl.utils.TrainerConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The per-agent generation settings ({@code temperature}, {@code top_p}, {@code top_k},
 * {@code max_new_tokens}): one value for every agent or a list with one per agent, read from run
 * YAML, {@code --set} and the Java builders of every family, checked against {@code num_agents},
 * and written back to {@code config.json} as given.
 */
class PerAgentGenerationConfigTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** A two-agent run on the built-in tiny model, without its args. */
    static final String RUN = String.join("\n",
            "agent_model: builtin:tiny",
            "dataset: {train: 'builtin:length-ratio', test_size: 0.2}",
            "num_agents: 2",
            "formatters: ['Short: {prompt}', 'Long: {prompt}']",
            "reward: {type: length_ratio}", "");

    @TempDir
    Path dir;

    private RunConfig load(String yaml, String... overrides) throws IOException {
        Path file = dir.resolve("run.yaml");
        Files.writeString(file, yaml);
        return new RunConfig(file, List.of(overrides), null);
    }

    /** config.json's round trip: the map written as JSON text and read back. */
    private static Map<String, Object> throughJson(TrainerConfig c) throws IOException {
        return JSON.readValue(JSON.writeValueAsString(c.toMap()), new TypeReference<Map<String, Object>>() { });
    }

    @Test
    void yamlListsGiveEachAgentItsEntryAndScalarsEveryAgentTheValue() throws Exception {
        RunConfig run = load(RUN + "args: {num_turns: 1, num_generations: 2, temperature: [0.5, 1.3], max_new_tokens: [3, 7], "
                + "top_k: [null, 20], top_p: 0.9}\n");
        TrainerConfig args = run.args;
        assertThat(List.of(args.temperature(0), args.temperature(1))).containsExactly(0.5, 1.3);
        assertThat(List.of(args.maxNewTokens(0), args.maxNewTokens(1))).containsExactly(3, 7);
        assertThat(Arrays.asList(args.topK(0), args.topK(1))).containsExactly(null, 20);
        assertThat(List.of(args.topP(0), args.topP(1))).containsExactly(0.9, 0.9);
        assertThat(args.topP()).isEqualTo(0.9);
        // the value every agent has: there is none when they differ
        assertThatThrownBy(args::temperature).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("temperature differs between agents ([0.5, 1.3])").hasMessageContaining("temperature(i)");
        // config.json records the lists, and reading it back gives the same config
        Map<String, Object> written = throughJson(args);
        assertThat(written.get("temperature")).isEqualTo(List.of(0.5, 1.3));
        assertThat(written.get("max_new_tokens")).isEqualTo(List.of(3, 7));
        assertThat(written.get("top_k")).isEqualTo(Arrays.asList(null, 20));
        assertThat(written.get("top_p")).isEqualTo(0.9);
        assertThat(MAGRPOConfig.builder().apply(written).build()).isEqualTo(args);

        // --set takes a YAML list too, and a scalar back
        RunConfig set = load(RUN + "args: {num_turns: 1, num_generations: 2}\n", "temperature=[0.4, 0.8]", "max_new_tokens=5");
        assertThat(List.of(set.args.temperature(0), set.args.temperature(1))).containsExactly(0.4, 0.8);
        assertThat(set.args.maxNewTokens()).isEqualTo(5);
        assertThat(set.args.toMap().get("max_new_tokens")).isEqualTo(5);
    }

    @Test
    void aListOfAnotherLengthThanNumAgentsIsAnErrorNamingTheFieldAndBothCounts() throws Exception {
        assertThatThrownBy(() -> load(RUN + "args: {num_turns: 1, num_generations: 2, max_new_tokens: [3, 7, 9]}\n"))
                .hasMessageContaining("MAGRPOConfig: max_new_tokens is a list of 3 values [3, 7, 9] but num_agents is 2");
        assertThatThrownBy(() -> MAGRPOConfig.builder().numAgents(3).temperaturePerAgent(List.of(0.5, 0.9)).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("MAGRPOConfig: temperature is a list of 2 values [0.5, 0.9] but num_agents is 3: give one "
                        + "value per agent, or one value for every agent.");
        assertThatThrownBy(() -> IACConfig.builder().numAgents(2).topPPerAgent(List.of(0.9)).build())
                .hasMessageContaining("IACConfig: top_p is a list of 1 values [0.9] but num_agents is 2");
        assertThatThrownBy(() -> MADPOConfig.builder().numAgents(2).topKPerAgent(List.of(1, 2, 3)).build())
                .hasMessageContaining("MADPOConfig: top_k is a list of 3 values [1, 2, 3] but num_agents is 2");
        // each entry follows the field's rule, and the message says whose it is
        assertThatThrownBy(() -> MAGRPOConfig.builder().temperaturePerAgent(List.of(0.5, -1.0)).build())
                .hasMessageContaining("temperature must be a finite number > 0").hasMessageContaining("got -1.0 (agent 1's "
                        + "entry of [0.5, -1.0])");
        assertThatThrownBy(() -> MAGRPOConfig.builder().maxNewTokensPerAgent(List.of()).build())
                .hasMessageContaining("max_new_tokens must not be an empty list");
        assertThatThrownBy(() -> load(RUN + "args: {num_turns: 1, num_generations: 2, max_new_tokens: [3, many]}\n"))
                .hasMessageContaining("max_new_tokens[1]");
        // one actor writes every role in one completion: one value
        assertThatThrownBy(() -> CentralizedMAGRPOConfig.builder().numAgents(2).maxNewTokensPerAgent(List.of(3, 7)).build())
                .hasMessageContaining("max_new_tokens must be one value with collaboration_mode: centralized");
        assertThatThrownBy(() -> MADPOConfig.builder().numAgents(2).collaborationMode("centralized")
                .temperaturePerAgent(List.of(0.5, 0.9)).build())
                .hasMessageContaining("temperature must be one value with collaboration_mode: centralized");
    }

    @Test
    void everyFamilyTakesListsFromJavaAndRoundTripsThem() throws Exception {
        List<TrainerConfig> configs = List.of(
                MAGRPOConfig.builder().numAgents(2).maxNewTokensPerAgent(List.of(3, 7)).temperaturePerAgent(List.of(0.5, 1.3))
                        .topPPerAgent(List.of(0.8, 1.0)).topKPerAgent(Arrays.asList(0, null)).build(),
                IACConfig.builder().numAgents(2).maxNewTokensPerAgent(List.of(3, 7)).temperaturePerAgent(List.of(0.5, 1.3))
                        .topPPerAgent(List.of(0.8, 1.0)).topKPerAgent(Arrays.asList(0, null)).build(),
                MADPOConfig.builder().numAgents(2).maxNewTokensPerAgent(List.of(3, 7)).temperaturePerAgent(List.of(0.5, 1.3))
                        .topPPerAgent(List.of(0.8, 1.0)).topKPerAgent(Arrays.asList(0, null)).build());
        for (TrainerConfig c : configs) {
            assertThat(List.of(c.maxNewTokens(0), c.maxNewTokens(1), c.temperature(0), c.temperature(1), c.topP(0), c.topP(1)))
                    .as(c.configTypeName()).containsExactly(3, 7, 0.5, 1.3, 0.8, 1.0);
            assertThat(Arrays.asList(c.topK(0), c.topK(1))).containsExactly(0, null);
            Map<String, Object> written = throughJson(c);
            assertThat(written.get("max_new_tokens")).isEqualTo(List.of(3, 7));
            assertThat(written.get("top_k")).isEqualTo(Arrays.asList(0, null));
        }
        assertThat(MAGRPOConfig.builder().apply(throughJson(configs.get(0))).build()).isEqualTo(configs.get(0));
        assertThat(IACConfig.fromMap(throughJson(configs.get(1)))).isEqualTo(configs.get(1));
        assertThat(MADPOConfig.fromMap(throughJson(configs.get(2)))).isEqualTo(configs.get(2));
        // MARLHF hands its fields to its RL stage's config (IAC here) as config.json values: the lists go along
        comlrl.trainers.preference.MARLHFConfig marlhf = comlrl.trainers.preference.MARLHFConfig.builder().numAgents(2)
                .maxNewTokensPerAgent(List.of(3, 7)).temperaturePerAgent(List.of(0.5, 1.3)).build();
        IACConfig stage = IACConfig.fromMap(marlhf.valuesOf(IACConfig.keys(), java.util.Set.of()));
        assertThat(List.of(stage.maxNewTokens(0), stage.maxNewTokens(1), stage.temperature(0), stage.temperature(1)))
                .containsExactly(3, 7, 0.5, 1.3);
        // a list of equal entries stays a list in config.json, and its common value reads as the scalar
        MAGRPOConfig equal = MAGRPOConfig.builder().temperaturePerAgent(List.of(0.7, 0.7)).build();
        assertThat(equal.temperature()).isEqualTo(0.7);
        assertThat(equal.toMap().get("temperature")).isEqualTo(List.of(0.7, 0.7));
    }

    @Test
    void scalarDefaultsAreWrittenAsBefore() throws Exception {
        Map<String, Object> magrpo = throughJson(MAGRPOConfig.builder().build());
        assertThat(magrpo.get("max_new_tokens")).isEqualTo(256);
        assertThat(magrpo.get("temperature")).isEqualTo(0.6);
        assertThat(magrpo.get("top_p")).isEqualTo(0.6);
        assertThat(magrpo.get("top_k")).isEqualTo(50);
        Map<String, Object> iac = throughJson(IACConfig.builder().build());
        assertThat(iac).containsEntry("top_k", null).containsEntry("max_new_tokens", 256);
        MAGRPOConfig scalar = MAGRPOConfig.builder().maxNewTokens(64).temperature(0.9).topP(0.95).topK(null).build();
        assertThat(List.of(scalar.maxNewTokens(), scalar.maxNewTokens(0), scalar.maxNewTokens(1))).containsExactly(64, 64, 64);
        assertThat(List.of(scalar.temperature(), scalar.temperature(1), scalar.topP(), scalar.topP(1)))
                .containsExactly(0.9, 0.9, 0.95, 0.95);
        assertThat(scalar.topK()).isNull();
        assertThat(scalar.topK(1)).isNull();
    }

    @Test
    void aTrainRunRecordsTheListsAndEachAgentsSettingsInConfigJson(@TempDir Path tmp) throws Exception {
        Path cfg = CliTest.tinyRunConfig(tmp, "out");
        CliTest.Result r = CliTest.run("train", cfg.toString(), "--set", "max_new_tokens=[3, 7]", "--set",
                "temperature=[0.7, 1.3]", "--set", "eval_interval=0");
        assertThat(r.code()).as(r.err()).isZero();
        com.fasterxml.jackson.databind.JsonNode config = JSON.readTree(tmp.resolve("out/config.json").toFile());
        assertThat(config.get("args").get("max_new_tokens").toString()).isEqualTo("[3,7]");
        assertThat(config.get("args").get("temperature").toString()).isEqualTo("[0.7,1.3]");
        com.fasterxml.jackson.databind.JsonNode generation = config.get("generation");
        for (int i = 0; i < 2; i++) {
            assertThat(generation.get("agent_" + i).get("max_new_tokens").get("value").asInt()).isEqualTo(i == 0 ? 3 : 7);
            assertThat(generation.get("agent_" + i).get("temperature").get("value").asDouble()).isEqualTo(i == 0 ? 0.7 : 1.3);
            assertThat(generation.get("agent_" + i).get("temperature").get("source").asText()).isEqualTo("run config");
        }
    }
}
