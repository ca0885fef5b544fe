package comlrl.generation;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.tensor.Device;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The scores tokens are chosen from, step by step, against what transformers' {@code generate}
 * computed from the same raw logits (recorded by scripts/record-logits-processors.py): the model's
 * generation_config.json settings, the call's settings and transformers' defaults resolved the same
 * way, every processor and warper applied in the same order.
 */
class LogitsProcessorsParityTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    static List<JsonNode> cases() throws Exception {
        try (InputStream in = LogitsProcessorsParityTest.class.getResourceAsStream("/generation/hf-logits-processors.json")) {
            JsonNode root = JSON.readTree(in);
            List<JsonNode> out = new ArrayList<>();
            root.get("cases").forEach(out::add);
            return out;
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void scoresMatchTransformersStepByStep(JsonNode c, @TempDir Path dir) throws Exception {
        ObjectMapper json = new ObjectMapper();
        com.fasterxml.jackson.databind.node.ObjectNode gen = json.createObjectNode();
        gen.put("eos_token_id", 512).put("pad_token_id", 512);
        gen.setAll((com.fasterxml.jackson.databind.node.ObjectNode) c.get("model"));
        Files.writeString(dir.resolve("generation_config.json"), gen.toString());
        Map<String, Object> call = new LinkedHashMap<>(json.convertValue(c.get("call"), Map.class));
        boolean greedy = !Boolean.TRUE.equals(call.remove("do_sample"));
        JsonNode steps = c.get("steps");
        int rows = steps.get(0).get("tokens").size();
        GenerationSettings.Resolved resolved = GenerationSettings.resolve(call, "test", greedy,
                c.get("max_new_tokens").asInt(), rows, GenerationConfig.load(dir));
        long[] prompt = json.convertValue(JSON.readTree(getClass().getResourceAsStream("/generation/hf-logits-processors.json"))
                .get("prompt"), long[].class);
        List<long[]> prompts = new ArrayList<>();
        List<Rng> rngs = new ArrayList<>();
        for (int r = 0; r < rows; r++) {
            prompts.add(prompt);
            rngs.add(new Rng(r));
        }
        int vocab = steps.get(0).get("logits").get(0).size();
        try (Scope s = Scope.open();
                Sampler sampler = new Sampler(resolved.sampling(), rngs, vocab, Set.of(512L), prompts, Device.CPU)) {
            for (int t = 0; t < steps.size(); t++) {
                JsonNode step = steps.get(t);
                float[] ours = sampler.scores(Tensor.ofFloats(floats(step.get("logits")), Device.CPU, rows, vocab), t)
                        .toFloatArray();
                float[] want = floats(step.get("scores"));
                for (int i = 0; i < want.length; i++) {
                    String where = c.get("name").asText() + ", step " + t + ", row " + i / vocab + ", token " + i % vocab;
                    if (Float.isInfinite(want[i])) {
                        assertThat(ours[i]).as(where).isEqualTo(Float.NEGATIVE_INFINITY);
                    } else {
                        assertThat((double) ours[i]).as(where).isCloseTo(want[i], org.assertj.core.data.Offset.offset(2e-5));
                    }
                }
                long[] tokens = json.convertValue(step.get("tokens"), long[].class);
                sampler.observe(Tensor.ofLongs(tokens, Device.CPU, rows));
            }
        } finally {
            rngs.forEach(Rng::close);
        }
    }

    /** Rows of a JSON matrix as one float array; null stands for −inf. */
    private static float[] floats(JsonNode matrix) {
        int rows = matrix.size();
        int cols = matrix.get(0).size();
        float[] out = new float[rows * cols];
        for (int r = 0; r < rows; r++) {
            for (int j = 0; j < cols; j++) {
                JsonNode v = matrix.get(r).get(j);
                out[r * cols + j] = v.isNull() ? Float.NEGATIVE_INFINITY : (float) v.asDouble();
            }
        }
        return out;
    }
}
