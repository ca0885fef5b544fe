package comlrl.trainers.preference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.rl.PairSelection;
import comlrl.rl.ReplayMode;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/** MADPOIterConfig: the iterative defaults of §7.4 and every cross-field rule with its message. */
class MADPOIterConfigTest {
    @Test
    void defaultsAreTheIterativeOnes() {
        MADPOIterConfig c = MADPOIterConfig.builder().build();
        assertThat(c.algorithmName()).isEqualTo("MADPOIter");
        assertThat(c.numIterations()).isEqualTo(6);
        assertThat(c.numTrainEpochs()).isEqualTo(1);
        assertThat(c.preferenceNumCandidates()).isEqualTo(20);
        assertThat(c.preferencePairsPerSample()).isEqualTo(4);
        assertThat(c.pairSelection()).isEqualTo(PairSelection.COMPARATOR_REWARD);
        assertThat(c.preferenceReplayMode()).isEqualTo(ReplayMode.CURRENT);
        assertThat(c.comparatorPolicy()).isEqualTo(ComparatorPolicy.CURRENT);
        assertThat(c.comparatorNumCandidates()).isEqualTo(20); // null follows preference_num_candidates
        assertThat(c.comparatorHistoryK()).isEqualTo(1);
        assertThat(c.comparatorApiFields()).containsEntry("comparator_api_timeout", 120.0)
                .containsEntry("comparator_api_key_header", "Authorization").containsEntry("comparator_api_key_prefix", "Bearer")
                .containsEntry("comparator_api_response_field", "completions").containsEntry("comparator_api_format", comlrl.generation.api.ApiFormat.GENERIC);
        assertThat(c.dpoReference()).isEqualTo(DpoReference.NONE);
    }

    @Test
    void aliasesAndTheKeyIsNeverWrittenOut() {
        MADPOIterConfig c = MADPOIterConfig.fromMap(Map.of("preference_replay_mode", "td_lambda", "preference_replay_lambda",
                0.5, "comparator_policy", "api", "comparator_api_url", "http://127.0.0.1:9/x", "comparator_api_key", "sk-123"));
        assertThat(c.preferenceReplayMode()).isEqualTo(ReplayMode.LAMBDA_DECAY);
        assertThat(c.comparatorApiFields()).containsEntry("comparator_api_key", "sk-123");
        assertThat(c.toMap().get("comparator_api_key")).isEqualTo("***");
        assertThat(c.toString()).doesNotContain("sk-123");
    }

    @Test
    void comparatorRewardIsRefusedByTheNonIterativeConfigs() {
        assertThatThrownBy(() -> MADPOConfig.fromMap(Map.of("pair_selection", "comparator_reward")))
                .hasMessageContaining("pair_selection=\"comparator_reward\" ranks the current policy against a comparator");
    }

    static List<Arguments> rules() {
        return List.of(
                Arguments.of(Map.of("preference_replay_mode", "nearest_k"), "requires preference_replay_k"),
                Arguments.of(Map.of("preference_replay_mode", "lambda_decay"), "requires preference_replay_lambda in [0, 1]"),
                Arguments.of(Map.of("preference_replay_lambda", 1.5), "preference_replay_lambda must be in [0, 1]"),
                Arguments.of(Map.of("comparator_model_name", "m"), "comparator_model_name and comparator_agents are only used with comparator_policy=\"model\""),
                Arguments.of(Map.of("comparator_policy", "model"), "comparator_policy=\"model\" requires comparator_model_name"),
                Arguments.of(Map.of("comparator_policy", "model", "comparator_agents", List.of("a")), "comparator_agents length (1) must match the number of agents (2)"),
                Arguments.of(Map.of("comparator_history_k", 2), "comparator_history_k is only used with comparator_policy=\"history\""),
                Arguments.of(Map.of("comparator_devices", List.of("cpu")), "comparator_devices places frozen comparator models"),
                Arguments.of(Map.of("comparator_api_model", "gpt"), "comparator_api_model is only used with comparator_policy=\"api\""),
                Arguments.of(Map.of("comparator_policy", "api"), "comparator_policy=\"api\" requires comparator_api_url"),
                // the comparator_api_* fields are the API comparator's own: its rules apply when the config is built
                Arguments.of(Map.of("comparator_policy", "api", "comparator_api_url", "https://a.example/g",
                        "comparator_api_format", "grpc"), "comparator_api_format must be one of: generic"),
                Arguments.of(Map.of("comparator_policy", "api", "comparator_api_url", "https://a.example/g",
                        "comparator_api_headers", Map.of("Host", "x")), "comparator_api_headers: header 'Host' cannot be sent"),
                Arguments.of(Map.of("comparator_policy", "api", "comparator_api_url", "https://a.example/g",
                        "comparator_api_key_header", " "), "comparator_api_key_header must be a header name"),
                Arguments.of(Map.of("collaboration_mode", "centralized"), "requires comparator_generation_mode=\"centralized\""),
                Arguments.of(Map.of("comparator_generation_mode", "centralized", "comparator_centralized_agent_index", 2),
                        "comparator_centralized_agent_index (2) must name one of the 2 agents"),
                Arguments.of(Map.of("comparator_policy", "nobody"), "comparator_policy must be one of: current (or self), current_copy (or copy)"),
                Arguments.of(Map.of("num_iterations", 0), "num_iterations must be >= 1"));
    }

    @ParameterizedTest
    @MethodSource("rules")
    void eachRuleRejectsWithItsMessage(Map<String, ?> values, String message) {
        assertThatThrownBy(() -> MADPOIterConfig.fromMap(values)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message);
    }

    @Test
    void aValidModelAndHistoryConfig() {
        assertThat(MADPOIterConfig.fromMap(Map.of("comparator_policy", "model", "comparator_agents", List.of("a", "b"),
                "comparator_devices", List.of("cpu"))).comparatorAgents()).containsExactly("a", "b");
        assertThat(MADPOIterConfig.fromMap(Map.of("comparator_policy", "past", "comparator_history_k", 2))
                .comparatorHistoryK()).isEqualTo(2);
    }

    /**
     * The config holds the API comparator's own fields: values read and cleaned as the comparator
     * reads them (a null prefix = none, blanks trimmed, the format parsed), headers and key written
     * out as "***", and the settings built from them equal to those read from the same map.
     */
    @Test
    void theComparatorApiFieldsAreTheComparatorsOwn() {
        Map<String, Object> api = new java.util.HashMap<>(Map.of("comparator_api_url", " https://a.example/g ",
                "comparator_api_format", "Chat", "comparator_api_model", "m", "comparator_api_headers",
                Map.of("X-Org", "secret-org"), "comparator_api_key", " sk-9 ", "comparator_api_key_header", " api-key "));
        api.put("comparator_api_key_prefix", null);
        Map<String, Object> config = new java.util.HashMap<>(api);
        config.put("comparator_policy", "api");
        MADPOIterConfig c = MADPOIterConfig.fromMap(config);
        assertThat(c.comparatorApiFields()).containsEntry("comparator_api_url", "https://a.example/g")
                .containsEntry("comparator_api_format", comlrl.generation.api.ApiFormat.OPENAI_CHAT)
                .containsEntry("comparator_api_key", "sk-9").containsEntry("comparator_api_key_header", "api-key")
                .containsEntry("comparator_api_key_prefix", "");
        assertThat(c.toMap()).containsEntry("comparator_api_headers", Map.of("X-Org", "***"))
                .containsEntry("comparator_api_key", "***").containsEntry("comparator_api_format", "openai");
        assertThat(c.toString()).doesNotContain("secret-org").doesNotContain("sk-9");
        assertThat(comlrl.generation.api.ApiComparatorSettings.fromMap(c.comparatorApiFields()).toMap())
                .isEqualTo(comlrl.generation.api.ApiComparatorSettings.fromMap(api).toMap());
    }
}
