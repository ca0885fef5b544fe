package comlrl.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import comlrl.generation.CausalLm;
import comlrl.generation.GenerationSettings;
import comlrl.tensor.Device;
import comlrl.trainers.TinyAgents;
import comlrl.trainers.actorcritic.IACConfig;
import comlrl.trainers.common.AgentGeneration;
import comlrl.trainers.preference.MADPOConfig;
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
 * {@code stop_strings}: a list of strings for every agent or a list of such lists, one per agent, from
 * run YAML and the builders of every family, checked against {@code num_agents}, written back as given,
 * and resolved against the model's generation_config.json (the config's value wins; null takes the model's).
 */
class StopStringsConfigTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String RUN = PerAgentGenerationConfigTest.RUN;

    @TempDir
    Path dir;

    private RunConfig load(String args) throws IOException {
        Path file = dir.resolve("run.yaml");
        Files.writeString(file, RUN + "args: {num_turns: 1, num_generations: 2, " + args + "}\n");
        return new RunConfig(file, List.of(), null);
    }

    @Test
    void oneListForEveryAgentOrOneListPerAgent() throws Exception {
        TrainerConfig every = load("stop_strings: [\"\\n\\n\", END]").args;
        assertThat(every.stopStrings(0)).containsExactly("\n\n", "END");
        assertThat(every.stopStrings(1)).containsExactly("\n\n", "END");
        assertThat(every.toMap().get("stop_strings")).isEqualTo(List.of("\n\n", "END"));

        TrainerConfig each = load("stop_strings: [[A], [B, C]]").args;
        assertThat(each.stopStrings(0)).containsExactly("A");
        assertThat(each.stopStrings(1)).containsExactly("B", "C");
        Map<String, Object> written = each.toMap();
        assertThat(written.get("stop_strings")).isEqualTo(List.of(List.of("A"), List.of("B", "C")));
        assertThat(MAGRPOConfig.builder().apply(written).build()).isEqualTo(each);

        TrainerConfig unset = load("temperature: 0.7").args;
        assertThat(unset.stopStrings(0)).isNull(); // the model's
        assertThat(load("stop_strings: [[A], null]").args.stopStrings(1)).isNull();
        assertThat(load("stop_strings: []").args.stopStrings(1)).isEmpty(); // none, whatever the model says
    }

    @Test
    void wrongShapesAreErrorsNamingTheField() {
        assertThatThrownBy(() -> load("stop_strings: [[A], [B], [C]]"))
                .hasMessageContaining("MAGRPOConfig: stop_strings is a list of 3 values [[A], [B], [C]] but num_agents is 2");
        assertThatThrownBy(() -> load("stop_strings: [A, [B]]"))
                .hasMessageContaining("'stop_strings' must be a list of strings (for every agent), a list of such lists");
        assertThatThrownBy(() -> load("stop_strings: [[A], [1, B]]"))
                .hasMessageContaining("'stop_strings' is a per-agent list, so each entry must be a list of strings");
        assertThatThrownBy(() -> load("stop_strings: ['', A]")).hasMessageContaining("stop_strings must hold non-empty strings");
        assertThatThrownBy(() -> load("generation_kwargs: {stop_strings: [A]}"))
                .hasMessageContaining("generation_kwargs must not set stop_strings: it is a config field of its own");
        assertThatThrownBy(() -> IACConfig.builder().numAgents(3).stopStringsPerAgent(List.of(List.of("A"))).build())
                .hasMessageContaining("IACConfig: stop_strings is a list of 1 values");
    }

    @Test
    void everyFamilyTakesThemAndTheConfigsValueOverridesTheModelsGenerationConfig(@TempDir Path models) throws Exception {
        for (TrainerConfig c : List.of(
                MAGRPOConfig.builder().numAgents(2).stopStringsPerAgent(Arrays.asList(List.of("A"), null)).build(),
                IACConfig.builder().numAgents(2).stopStringsPerAgent(Arrays.asList(List.of("A"), null)).build(),
                MADPOConfig.builder().numAgents(2).stopStringsPerAgent(Arrays.asList(List.of("A"), null)).build())) {
            assertThat(c.stopStrings(0)).as(c.configTypeName()).containsExactly("A");
            assertThat(c.stopStrings(1)).as(c.configTypeName()).isNull();
        }
        Path agent = TinyAgents.create(models.resolve("agent"), 5);
        Path generationConfig = agent.resolve("generation_config.json");
        ObjectNode g = (ObjectNode) JSON.readTree(generationConfig.toFile());
        g.putArray("stop_strings").add("</answer>");
        JSON.writeValue(generationConfig.toFile(), g);
        try (CausalLm lm = CausalLm.load(agent.toString(), null, Device.CPU)) {
            MAGRPOConfig args = MAGRPOConfig.builder().numAgents(2)
                    .stopStringsPerAgent(Arrays.asList(List.of("A", "B"), null)).build();
            GenerationSettings.Resolved own = AgentGeneration.resolve(0, lm, args, 2);
            GenerationSettings.Resolved model = AgentGeneration.resolve(1, lm, args, 2);
            assertThat(own.sampling().stopStrings()).containsExactly("A", "B");
            assertThat(own.settings().get("stop_strings").source()).isEqualTo("run config");
            assertThat(model.sampling().stopStrings()).containsExactly("</answer>");
            assertThat(model.settings().get("stop_strings").source()).isEqualTo("generation_config.json");
        }
    }
}
