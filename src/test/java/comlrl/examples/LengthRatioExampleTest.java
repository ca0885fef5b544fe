package comlrl.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LengthRatioExampleTest {
    @Test
    void theSeedExampleInJavaTrainsAndSavesBothAgents(@TempDir Path out) {
        Map<String, Double> metrics = LengthRatioExample.run("builtin:tiny", out, 1, 2, 8);
        double reward = metrics.get("eval/turn_1/reward_mean");
        assertThat(reward).isBetween(0.0, 1.0);
        assertThat(metrics).containsKey("eval/turn_1/expected_return");
        assertThat(Files.isRegularFile(out.resolve("agent_0/model.safetensors"))).isTrue();
        assertThat(Files.isRegularFile(out.resolve("agent_1/tokenizer.json"))).isTrue();
    }
}
