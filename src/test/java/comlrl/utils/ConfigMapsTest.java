package comlrl.utils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ConfigMapsTest {
    @Test
    void levenshtein() {
        assertThat(ConfigMaps.levenshtein("kitten", "sitting")).isEqualTo(3);
        assertThat(ConfigMaps.levenshtein("", "abc")).isEqualTo(3);
        assertThat(ConfigMaps.levenshtein("same", "same")).isZero();
    }

    @Test
    void closestKey() {
        List<String> keys = List.of("num_generations", "num_agents", "num_turns", "max_new_tokens");
        assertThat(ConfigMaps.closest("num_generation", keys)).isEqualTo("num_generations");
        assertThat(ConfigMaps.closest("NUM-TURNS", keys)).isEqualTo("num_turns");
    }

    @Test
    void unknownKeys() {
        assertThatThrownBy(() -> ConfigMaps.requireKnownKeys("Demo", Map.of("num_turn", 1),
                List.of("num_turns", "num_agents"), Map.of()))
                .hasMessage("Unknown Demo key 'num_turn'; did you mean 'num_turns'? Valid keys: num_agents, num_turns");
        assertThatThrownBy(() -> ConfigMaps.requireKnownKeys("Demo", Map.of("lr", 1),
                List.of("agent_learning_rate"), Map.of("lr", "use 'agent_learning_rate'.")))
                .hasMessageContaining("Unknown Demo key 'lr': use 'agent_learning_rate'.");
        ConfigMaps.requireKnownKeys("Demo", Map.of("num_turns", 1), List.of("num_turns"), Map.of());
    }

    @Test
    void integers() {
        assertThat(ConfigMaps.toInt("C", "k", 4)).isEqualTo(4);
        assertThat(ConfigMaps.toInt("C", "k", 4L)).isEqualTo(4);
        assertThat(ConfigMaps.toInt("C", "k", 4.0)).isEqualTo(4);
        assertThat(ConfigMaps.toInt("C", "k", " 4 ")).isEqualTo(4);
        assertThat(ConfigMaps.toInt("C", "k", new BigDecimal("4"))).isEqualTo(4);
        assertThat(ConfigMaps.toLong("C", "seed", "12345678901")).isEqualTo(12345678901L);
        assertThat(ConfigMaps.toNullableInt("C", "k", "None")).isNull();
        assertThatThrownBy(() -> ConfigMaps.toInt("C", "k", 4.5)).hasMessage("C key 'k' must be an integer, got 4.5 (Double)");
        assertThatThrownBy(() -> ConfigMaps.toInt("C", "k", "four")).hasMessage("C key 'k' must be an integer, got \"four\" (String)");
        assertThatThrownBy(() -> ConfigMaps.toInt("C", "k", true)).hasMessageContaining("(Boolean)");
        assertThatThrownBy(() -> ConfigMaps.toInt("C", "k", 1L << 40)).hasMessageContaining("int range");
        assertThatThrownBy(() -> ConfigMaps.toInt("C", "k", null)).hasMessageContaining("got null (null)");
    }

    @Test
    void doublesBooleansStrings() {
        assertThat(ConfigMaps.toDouble("C", "lr", "5e-6")).isEqualTo(5e-6);
        assertThat(ConfigMaps.toDouble("C", "lr", 1)).isEqualTo(1.0);
        assertThat(ConfigMaps.toDouble("C", "x", ".inf")).isInfinite();
        assertThat(ConfigMaps.toNullableDouble("C", "x", null)).isNull();
        assertThatThrownBy(() -> ConfigMaps.toDouble("C", "x", List.of())).hasMessageContaining("must be a number");
        assertThat(ConfigMaps.toBoolean("C", "b", "TRUE")).isTrue();
        assertThat(ConfigMaps.toBoolean("C", "b", false)).isFalse();
        assertThatThrownBy(() -> ConfigMaps.toBoolean("C", "b", 1)).hasMessageContaining("must be true or false");
        assertThat(ConfigMaps.toStr("C", "s", "x")).isEqualTo("x");
        assertThatThrownBy(() -> ConfigMaps.toStr("C", "s", 3)).hasMessageContaining("must be a string");
        assertThat(ConfigMaps.toNullableStringList("C", "d", "cuda:0")).containsExactly("cuda:0");
        assertThat(ConfigMaps.toNullableStringList("C", "d", List.of("cuda:0", "cuda:1"))).containsExactly("cuda:0", "cuda:1");
        assertThat(ConfigMaps.toNullableStringList("C", "d", null)).isNull();
        assertThatThrownBy(() -> ConfigMaps.toNullableStringList("C", "d", List.of("cuda:0", 1)))
                .hasMessage("C key 'd' must be a string or a list of strings; element 1 is 1 (Integer)");
    }

    @Test
    void argumentListsTakeScalarsAsText() {
        // a number in a command line is an argument, not a mistake (it used to be rejected with a
        // message that printed the list as if it were valid)
        assertThat(ConfigMaps.toNullableArgumentList("C", "run", List.of("python3", "reward.py", 3, 1.5, true, 10L)))
                .containsExactly("python3", "reward.py", "3", "1.5", "true", "10");
        assertThat(ConfigMaps.toNullableArgumentList("C", "run", "prog")).containsExactly("prog");
        assertThat(ConfigMaps.toNullableArgumentList("C", "run", null)).isNull();
        assertThatThrownBy(() -> ConfigMaps.toNullableArgumentList("C", "run", List.of("node", Map.of("a", 1))))
                .hasMessage("C key 'run' must be a program and its arguments (strings; numbers and booleans are taken "
                        + "as text); element 1 is {a=1} (" + Map.of("a", 1).getClass().getSimpleName() + ")");
        assertThatThrownBy(() -> ConfigMaps.toNullableArgumentList("C", "run", java.util.Arrays.asList("node", null)))
                .hasMessageContaining("element 1 is null (null)");
        assertThatThrownBy(() -> ConfigMaps.toNullableArgumentList("C", "run", 3))
                .hasMessage("C key 'run' must be a string or a list of program arguments, got 3 (Integer)");
    }

    @Test
    void enums() {
        assertThat(ParallelTraining.parse(null)).isEqualTo(ParallelTraining.NONE);
        assertThat(ParallelTraining.parse("none")).isEqualTo(ParallelTraining.NONE);
        assertThat(ParallelTraining.parse("null")).isEqualTo(ParallelTraining.NONE);
        assertThat(ParallelTraining.parse("MP")).isEqualTo(ParallelTraining.MP);
        assertThat(ParallelTraining.parse(" ddp ")).isEqualTo(ParallelTraining.DDP);
        for (String invalid : List.of("auto", "invalid")) {
            assertThatThrownBy(() -> ParallelTraining.parse(invalid))
                    .hasMessageContaining("parallel_training must be \"none\", \"mp\" or \"ddp\" (got \"" + invalid + "\")");
        }
        assertThat(CollaborationMode.parse("Centralized")).isEqualTo(CollaborationMode.CENTRALIZED);
        assertThatThrownBy(() -> CollaborationMode.parse("hybrid")).hasMessageContaining("\"hybrid\"");
    }
}
