package comlrl.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.data.TaskItem;
import comlrl.generation.BuiltinModels;
import comlrl.reward.RewardFunctions;
import comlrl.reward.RewardModelReward;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.GradMode;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Our sequence-classification models against transformers' {@code AutoModelForSequenceClassification}
 * on the same directory: it loads what {@code init-model --head score} writes (and what
 * {@link SequenceClassifier#save} writes) without a warning, and gives our pooled logits for left- and
 * right-padded batches (pad ids inside and at the end of a text included), and
 * {@link RewardModelReward} gives the logits of the texts tokenized by the model's own tokenizer
 * ({@code padding=True, truncation=True, max_length}, either padding side). Needs Python with torch and
 * transformers (found as {@link TransformersCompatibilityTest#python()} finds it). Run with
 * {@code mvn test -Dtest=SequenceClassifierPythonTest -Dtest.excludedGroups=none}.
 */
@Tag("python")
class SequenceClassifierPythonTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_LENGTH = 12;
    private static final List<String> TEXTS = List.of("Explain tides: the moon pulls the water of the oceans.",
            "Short.", "Brief: Moon.\n\nDetailed: the moon's gravity, and the sun's, make two bulges.");

    @ParameterizedTest
    @ValueSource(strings = {"qwen2", "llama", "qwen3", "mistral"})
    void scoresMatchTransformers(String arch, @TempDir Path tmp) throws Exception {
        assumeTrue(TransformersCompatibilityTest.pythonCanImport("torch, transformers"), "python with torch and transformers is not available");
        Path written = tmp.resolve(arch);
        BuiltinModels.writeSequenceClassifier(arch, "tiny", 2, 13, DType.F32, written);
        Path resaved = tmp.resolve(arch + "-resaved");
        try (SequenceClassifier m = SequenceClassifier.load(written, null, Device.CPU)) {
            m.save(resaved, 1L << 30);
            Files.copy(written.resolve("tokenizer.json"), resaved.resolve("tokenizer.json"));
            Files.copy(written.resolve("tokenizer_config.json"), resaved.resolve("tokenizer_config.json"));
        }
        for (Path dir : List.of(written, resaved)) {
            try (SequenceClassifier m = SequenceClassifier.load(dir, null, Device.CPU);
                    Scope s = Scope.open(); GradMode g = GradMode.inference()) {
                long pad = m.padTokenId();
                // right padding, with a pad id inside one text and at the end of another; then left padding
                long[][] right = {{5, 6, pad, 7, 8, 9}, {10, 11, 12, pad, pad, pad}, {13, 14, 15, 16, 17, 18}, {19, pad, pad, pad, pad, pad}};
                long[][] rightMask = {{1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 0, 0}, {1, 1, 1, 1, 1, 1}, {1, 0, 0, 0, 0, 0}};
                long[][] left = {{pad, pad, pad, 5, 6, 7}, {8, 9, pad, 10, 11, 12}, {pad, pad, pad, pad, pad, 13}, {pad, 14, 15, 16, 17, 18}};
                long[][] leftMask = {{0, 0, 0, 1, 1, 1}, {1, 1, 1, 1, 1, 1}, {0, 0, 0, 0, 0, 1}, {0, 1, 1, 1, 1, 1}};
                List<double[]> ours = List.of(logits(m, right, rightMask), logits(m, left, leftMask));

                Map<String, Object> request = new LinkedHashMap<>();
                request.put("batches", List.of(Map.of("input_ids", right, "attention_mask", rightMask),
                        Map.of("input_ids", left, "attention_mask", leftMask)));
                request.put("texts", TEXTS);
                request.put("max_length", MAX_LENGTH);
                for (String side : List.of("right", "left")) {
                    request.put("padding_side", side);
                    JsonNode out = runPython(dir, request, tmp);
                    assertThat(out.get("warnings")).as(dir + " warnings").isEmpty();
                    assertThat(out.get("num_labels").asInt()).isEqualTo(2);
                    for (int batch = 0; batch < 2; batch++) {
                        assertThat(flat(out.get("batch_logits").get(batch))).as("%s batch %d", dir, batch)
                                .containsExactly(ours.get(batch), within(1e-5));
                    }
                    JsonNode textLogits = out.get("text_logits");
                    for (int label = 0; label < 2; label++) {
                        List<Double> rewards = rewardsOf(dir, label);
                        for (int k = 0; k < TEXTS.size(); k++) {
                            assertThat(rewards.get(k)).as("%s text %d label %d (%s padding)", dir, k, label, side)
                                    .isCloseTo(textLogits.get(k).get(label).asDouble(), within(1e-5));
                        }
                    }
                }
            }
        }
    }

    /** MARLHF's learned reward model, as saved: transformers loads it (with its tokenizer) and scores as we do. */
    @org.junit.jupiter.api.Test
    void aTrainedJointRewardModelLoadsInTransformersWithTheSameScores(@TempDir Path tmp) throws Exception {
        assumeTrue(TransformersCompatibilityTest.pythonCanImport("torch, transformers"), "python with torch and transformers is not available");
        Path dir = tmp.resolve("reward_model");
        double[] ours;
        try (comlrl.reward.JointRewardModel rm = comlrl.reward.JointRewardModel.fromCausalLm(
                "builtin:tiny", DType.F32, Device.CPU, 3, false, MAX_LENGTH, 1e-2)) {
            rm.train(List.of(TEXTS.get(0), TEXTS.get(2)), List.of(TEXTS.get(1), TEXTS.get(1)), 2, 2, 5);
            rm.save(dir);
            ours = rm.score(TEXTS, 2);
        }
        Map<String, Object> request = new LinkedHashMap<>();
        request.put("texts", TEXTS);
        request.put("max_length", MAX_LENGTH);
        request.put("padding_side", "right");
        JsonNode out = runPython(dir, request, tmp);
        assertThat(out.get("warnings")).isEmpty();
        assertThat(out.get("num_labels").asInt()).isEqualTo(1);
        for (int k = 0; k < TEXTS.size(); k++) {
            assertThat(out.get("text_logits").get(k).get(0).asDouble()).as("text %d", k).isCloseTo(ours[k], within(1e-5));
        }
    }

    private static List<Double> rewardsOf(Path dir, int label) {
        Map<String, Object> spec = Map.of("type", "reward_model", "model", dir.toString(), "template", "{completion_0}",
                "label", label, "batch_size", 2, "max_length", MAX_LENGTH);
        try (RewardModelReward r = (RewardModelReward) RewardFunctions.fromConfig(spec, null)) {
            return r.score(List.of(TEXTS), List.of(TaskItem.of(Map.of("prompt", "unused"))));
        }
    }

    private static double[] logits(SequenceClassifier m, long[][] ids, long[][] mask) {
        int b = ids.length;
        int s = ids[0].length;
        long[] flatIds = new long[b * s];
        long[] flatMask = new long[b * s];
        for (int i = 0; i < b; i++) {
            System.arraycopy(ids[i], 0, flatIds, i * s, s);
            System.arraycopy(mask[i], 0, flatMask, i * s, s);
        }
        return m.logits(Tensor.ofLongs(flatIds, Device.CPU, b, s), Tensor.ofLongs(flatMask, Device.CPU, b, s))
                .toDoubleArray();
    }

    private static double[] flat(JsonNode rows) {
        List<Double> out = new ArrayList<>();
        rows.forEach(row -> row.forEach(v -> out.add(v.asDouble())));
        return out.stream().mapToDouble(Double::doubleValue).toArray();
    }

    private static JsonNode runPython(Path dir, Map<String, Object> request, Path tmp)
            throws IOException, InterruptedException {
        Path requestFile = Files.createTempFile(tmp, "request-", ".json");
        Files.writeString(requestFile, JSON.writeValueAsString(request));
        Path errors = Files.createTempFile(tmp, "python-", ".stderr");
        Process p = new ProcessBuilder(TransformersCompatibilityTest.python(), "src/test/python/sequence_classification.py",
                dir.toString(), requestFile.toString()).redirectError(errors.toFile()).start();
        byte[] stdout = p.getInputStream().readAllBytes();
        assertThat(p.waitFor(300, TimeUnit.SECONDS)).isTrue();
        String stderr = Files.readString(errors, StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as(stderr).isZero();
        return JSON.readTree(stdout);
    }
}
