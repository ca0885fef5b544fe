package comlrl.utils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class ConfigNamesTest {
    private enum Shape {
        ROUND("round", "circle", "disc"), SQUARE("square");

        private final String configName;
        private final List<String> aliases;

        Shape(String configName, String... aliases) {
            this.configName = configName;
            this.aliases = List.of(aliases);
        }
    }

    private static Shape parse(String value) {
        return ConfigNames.parse("shape", value, Shape.SQUARE, Shape.values(), s -> s.configName, s -> s.aliases,
                "; see the docs");
    }

    @Test
    void readsNamesAndAliasesIgnoringCaseAndBlanks() {
        assertThat(parse(null)).isEqualTo(Shape.SQUARE);
        assertThat(parse(" Round ")).isEqualTo(Shape.ROUND);
        assertThat(parse("DISC")).isEqualTo(Shape.ROUND);
        assertThat(parse("square")).isEqualTo(Shape.SQUARE);
        assertThat(ConfigNames.parse("shape", "round", Shape.SQUARE, Shape.values(), s -> s.configName, ""))
                .isEqualTo(Shape.ROUND);
    }

    @Test
    void unknownNameListsEveryNameWithItsAliases() {
        assertThatThrownBy(() -> parse("oval")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("shape must be one of: round (or circle, disc), square (got \"oval\"); see the docs");
        assertThatThrownBy(() -> ConfigNames.parse("shape", "circle", Shape.SQUARE, Shape.values(), s -> s.configName,
                "")).hasMessage("shape must be one of: round, square (got \"circle\")");
    }
}
