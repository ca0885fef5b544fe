package comlrl.trainers.preference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class CountersTest {
    private long seen = 7;
    private long position = 42;

    private Counters counters() {
        return Counters.of("updates_seen", () -> seen, v -> seen = v).and("seed_position", () -> position,
                v -> position = v);
    }

    @Test
    void writesEachCounterUnderItsNameAndRestoresEachThroughItsSetter() {
        assertThat(counters().stateDict()).containsExactly(Map.entry("updates_seen", 7L), Map.entry("seed_position", 42L));
        counters().loadStateDict(Map.of("updates_seen", 3, "seed_position", 11L));
        assertThat(seen).isEqualTo(3);
        assertThat(position).isEqualTo(11);
    }

    @Test
    void aMissingCounterIsNamed() {
        assertThatThrownBy(() -> counters().loadStateDict(Map.of("updates_seen", 3)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("\"seed_position\"");
    }
}
