package comlrl.cli;

import static comlrl.cli.CliTest.run;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.model.SequenceClassifier;
import comlrl.model.io.Safetensors;
import comlrl.tensor.Device;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code init-model --head score}: a random sequence-classification model directory. */
class InitModelScoreHeadTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @ParameterizedTest
    @CsvSource({"qwen2,Qwen2ForSequenceClassification,1", "llama,LlamaForSequenceClassification,3",
            "qwen3,Qwen3ForSequenceClassification,2", "mistral,MistralForSequenceClassification,1"})
    void writesASequenceClassificationDirectory(String arch, String architecture, int labels, @TempDir Path tmp)
            throws Exception {
        Path dir = tmp.resolve(arch);
        CliTest.Result r = run("init-model", "--arch", arch, "--head", "score", "--num-labels", Integer.toString(labels),
                "--out", dir.toString());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("sequence-classification model (" + labels + " label");
        JsonNode config = JSON.readTree(dir.resolve("config.json").toFile());
        assertThat(config.get("architectures").get(0).asText()).isEqualTo(architecture);
        assertThat(config.get("id2label").size()).isEqualTo(labels);
        assertThat(config.get("label2id").get("LABEL_0").asInt()).isZero();
        assertThat(config.get("pad_token_id").isIntegralNumber()).isTrue();
        Map<String, long[]> shapes = Safetensors.modelTensorShapes(dir);
        assertThat(shapes).doesNotContainKey("lm_head.weight");
        assertThat(shapes.get("score.weight")).containsExactly(labels, config.get("hidden_size").asLong());
        assertThat(dir.resolve("tokenizer.json")).isRegularFile();
        try (SequenceClassifier m = SequenceClassifier.load(dir, null, Device.CPU)) {
            assertThat(m.numLabels()).isEqualTo(labels);
        }
    }

    @Test
    void oneLabelByDefaultAndBadOptionsAreUsageErrors(@TempDir Path tmp) throws Exception {
        Path dir = tmp.resolve("rm");
        assertThat(run("init-model", "--head", "score", "--out", dir.toString()).code()).isZero();
        assertThat(JSON.readTree(dir.resolve("config.json").toFile()).get("id2label").size()).isEqualTo(1);
        CliTest.Result bogus = run("init-model", "--head", "value", "--out", tmp.resolve("x").toString());
        assertThat(bogus.code()).isEqualTo(2);
        assertThat(bogus.err()).contains("--head must be lm or score, got 'value'");
        CliTest.Result lm = run("init-model", "--num-labels", "2", "--out", tmp.resolve("y").toString());
        assertThat(lm.code()).isEqualTo(2);
        assertThat(lm.err()).contains("--num-labels needs --head score");
        CliTest.Result zero = run("init-model", "--head", "score", "--num-labels", "0", "--out", tmp.resolve("z").toString());
        assertThat(zero.code()).isEqualTo(2);
        assertThat(zero.err()).contains("--num-labels must be at least 1, got 0");
    }
}
