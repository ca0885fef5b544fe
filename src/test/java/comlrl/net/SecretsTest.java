package comlrl.net;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.checkpoint.Checkpoints;
import comlrl.logging.JsonlMetricSink;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The registry of secrets, and the writers that scrub with it. (The registry is process-wide: each test uses its own values.) */
class SecretsTest {
    @Test
    void scrubReplacesEveryRegisteredValueAndItsJsonForm() throws IOException {
        String key = "sk-unit-\"quoted\\-secret-42";
        Secrets.register("  " + key + "\n");
        assertThat(Secrets.scrub("a " + key + " b " + key)).isEqualTo("a *** b ***");
        String json = new ObjectMapper().writeValueAsString(Map.of("completion", "echo " + key));
        assertThat(Secrets.scrub(json)).isEqualTo("{\"completion\":\"echo ***\"}");
        assertThat(Secrets.scrub(null)).isNull();
    }

    @Test
    void aLongerSecretIsReplacedWholeBeforeAShorterOneInsideIt() {
        Secrets.register("tok-inner-7788");
        Secrets.register("outer-tok-inner-7788-end");
        assertThat(Secrets.scrub("x outer-tok-inner-7788-end y tok-inner-7788")).isEqualTo("x *** y ***");
    }

    @Test
    void valuesTooShortToBeKeysAreNotRegistered() {
        Secrets.register("abc1234"); // 7 characters
        Secrets.register(null);
        Secrets.register("   ");
        assertThat(Secrets.scrub("xabc1234x")).isEqualTo("xabc1234x");
    }

    @Test
    void theConsoleStreamScrubsASecretSplitAcrossWritesAndPassesTheRest() {
        String token = "hf_console_token_5522";
        Secrets.register(token);
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        PrintStream console = Secrets.scrubbing(sink);
        console.print("token=" + token.substring(0, 6));
        String held = sink.toString(StandardCharsets.UTF_8);
        assertThat(held).isEqualTo("token="); // "hf_con" might begin the token: held back
        console.print(token.substring(6) + " end");
        console.println();
        console.print("\rprogress 50% ");
        console.flush();
        console.printf("%s and more%n", token);
        assertThat(sink.toString(StandardCharsets.UTF_8))
                .isEqualTo("token=*** end" + System.lineSeparator() + "\rprogress 50% *** and more" + System.lineSeparator());
    }

    @Test
    void theRunWritersScrub(@TempDir Path dir) throws IOException {
        String key = "sk-writer-secret-9001";
        Secrets.register(key);
        Path json = dir.resolve("shard.json");
        Checkpoints.writeJson(json, Map.of("winner_texts", java.util.List.of("echo: Bearer " + key)));
        assertThat(Files.readString(json)).doesNotContain(key).contains("echo: Bearer ***");
        Path metrics = dir.resolve("metrics.jsonl");
        try (JsonlMetricSink sink = new JsonlMetricSink(metrics)) {
            sink.log(1, Map.of("odd/" + key, 1.0));
        }
        assertThat(Files.readString(metrics)).doesNotContain(key).contains("odd/***");
        // a report of a run directory written by something that did not scrub
        Path run = Files.createDirectories(dir.resolve("run"));
        Files.writeString(run.resolve("config.json"), "{\"algorithm\": \"magrpo\", \"agents\": [\"org/" + key + "\"]}");
        Files.writeString(run.resolve("metrics.jsonl"), "{\"env_step\": 1, \"turn_1/reward_mean\": 0.5}\n");
        Path report = dir.resolve("report.html");
        comlrl.report.HtmlReport.write(java.util.List.of(run), report);
        assertThat(Files.readString(report)).doesNotContain(key).contains("org/***");
    }
}
