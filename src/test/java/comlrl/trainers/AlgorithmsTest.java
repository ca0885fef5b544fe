package comlrl.trainers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.trainers.actorcritic.IACConfig;
import comlrl.trainers.preference.MARLHFConfig;
import comlrl.trainers.reinforce.MAReMaxConfig;
import comlrl.utils.TrainerConfig;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AlgorithmsTest {

    @Test
    void everyAlgorithmNameMapsToItsConfig() {
        assertThat(Algorithms.all()).extracting(Algorithms.Algorithm::configName).containsExactly("magrpo", "mareinforce",
                "maremax", "marloo", "centralized_magrpo", "iac", "maac", "madpo", "madpo_iter", "marlhf", "marlhf_iter");
        for (Algorithms.Algorithm algorithm : Algorithms.all()) {
            TrainerConfig defaults = algorithm.defaults();
            assertThat(defaults.algorithmName()).as(algorithm.configName()).isEqualTo(algorithm.displayName());
            assertThat(Algorithms.parse(algorithm.configName().toUpperCase(java.util.Locale.ROOT))).isSameAs(algorithm);
            assertThat(Algorithms.byDisplayName(algorithm.displayName())).contains(algorithm);
            // fromMap(toMap()) is the same config, whatever the family
            assertThat(algorithm.fromMap(defaults.toMap())).isEqualTo(defaults);
        }
        TrainerConfig remax = Algorithms.parse("maremax").fromMap(Map.of("num_generations", 3));
        assertThat(remax).isInstanceOf(MAReMaxConfig.class);
        assertThat(remax.get(comlrl.utils.TrainerFields.ADVANTAGE_MODE)).isEqualTo(comlrl.rl.AdvantageMode.MAX);
        assertThat(Algorithms.parse("iac").fromMap(Map.of("num_turns", 1))).isInstanceOf(IACConfig.class);
    }

    @Test
    void familiesSayWhereTheAgentCountLivesAndWhoTakesCritics() {
        assertThat(Algorithms.parse("magrpo").family().argsCountAgents).isFalse();
        assertThat(Algorithms.parse("iac").family().argsCountAgents).isTrue();
        assertThat(Algorithms.parse("madpo").family().preference).isTrue();
        assertThat(Algorithms.parse("maac").family().preference).isFalse();
        Algorithms.Algorithm marlhf = Algorithms.parse("marlhf");
        assertThat(marlhf.takesCritics().test(MARLHFConfig.fromMap(Map.of("rl_algorithm", "iac")))).isTrue();
        assertThat(marlhf.takesCritics().test(MARLHFConfig.fromMap(Map.of("rl_algorithm", "magrpo")))).isFalse();
        assertThat(Algorithms.parse("iac").takesCritics().test(Algorithms.parse("iac").defaults())).isTrue();
        assertThat(Algorithms.parse("madpo").takesCritics().test(Algorithms.parse("madpo").defaults())).isFalse();
    }

    @Test
    void unknownNameSuggestsTheClosest() {
        assertThatThrownBy(() -> Algorithms.parse("madpo_itr"))
                .hasMessageStartingWith("Unknown algorithm 'madpo_itr'; did you mean 'madpo_iter'? Valid: magrpo, ");
        assertThatThrownBy(() -> Algorithms.parse("ppo")).hasMessageContaining("marlhf_iter");
    }

    @Test
    void aFieldMissingFromATableFailsByName() {
        assertThatThrownBy(() -> Algorithms.parse("magrpo").defaults().get(comlrl.utils.TrainerFields.CRITIC_DEVICES))
                .isInstanceOf(IllegalStateException.class).hasMessage("MAGRPOConfig has no field critic_devices");
        assertThat(List.of(Algorithms.parse("magrpo").defaults().has(comlrl.utils.TrainerFields.SEED))).containsOnly(true);
    }
}
