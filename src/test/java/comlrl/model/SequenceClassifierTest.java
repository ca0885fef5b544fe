package comlrl.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import comlrl.generation.BuiltinModels;
import comlrl.generation.CausalLm;
import comlrl.model.io.Safetensors;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.GradMode;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SequenceClassifierTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long PAD = 0;

    // ---------------------------------------------------------------- pooling (hand-worked)

    @Test
    void poolsTheLastNonPadPositionWithRightPadding() {
        // rows: [5 6 7 0 0] -> 2 ; [8 9 0 0 0] -> 1 ; [4 4 4 4 4] -> 4
        long[] ids = {5, 6, 7, 0, 0, 8, 9, 0, 0, 0, 4, 4, 4, 4, 4};
        assertThat(SequenceClassifier.poolingPositions(ids, 3, 5, PAD)).containsExactly(2, 1, 4);
    }

    @Test
    void poolsTheLastPositionWithLeftPadding() {
        // rows: [0 0 5 6 7] -> 4 ; [0 0 0 8 9] -> 4 ; [0 0 0 0 3] -> 4
        long[] ids = {0, 0, 5, 6, 7, 0, 0, 0, 8, 9, 0, 0, 0, 0, 3};
        assertThat(SequenceClassifier.poolingPositions(ids, 3, 5, PAD)).containsExactly(4, 4, 4);
    }

    @Test
    void aPadIdInsideTheTextIsSkippedOnlyAtItsEndAsInTransformers() {
        // (arange(S) * (ids != pad)).argmax(-1):
        //   [5 0 7 0 0] -> mask [1 0 1 0 0] -> [0 0 2 0 0] -> 2   (a pad in the middle changes nothing)
        //   [5 6 0 0 0] where the text itself ended in the pad id -> 1 (the text's own pad is skipped)
        //   [0 0 0 0 0] -> all zeros -> argmax 0
        //   [9 0 0 0 0] -> [0 0 0 0 0] -> 0
        long[] ids = {5, 0, 7, 0, 0, 5, 6, 0, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0};
        assertThat(SequenceClassifier.poolingPositions(ids, 4, 5, PAD)).containsExactly(2, 1, 0, 0);
    }

    @Test
    void withoutAPadTokenTheLastPositionOfASingleRowAndNoBatches() {
        assertThat(SequenceClassifier.poolingPositions(new long[] {3, 0, 0, 7}, 1, 4, -1)).containsExactly(3);
        assertThatThrownBy(() -> SequenceClassifier.poolingPositions(new long[] {3, 4, 5, 6}, 2, 2, -1))
                .hasMessageContaining("Cannot handle batch sizes > 1 if no padding token is defined.");
    }

    // ---------------------------------------------------------------- parity with a float64 forward

    @ParameterizedTest
    @ValueSource(strings = {"qwen2", "llama", "qwen3", "mistral"})
    void aModelWrittenByInitModelScoresAsTheReferenceForward(String arch, @TempDir Path tmp) {
        Path dir = tmp.resolve(arch);
        BuiltinModels.writeSequenceClassifier(arch, "tiny", 3, 5, DType.F32, dir);
        try (SequenceClassifier m = SequenceClassifier.load(dir, null, Device.CPU)) {
            assertThat(m.numLabels()).isEqualTo(3);
            assertThat(m.config().raw().get("architectures").get(0).asText()).endsWith("ForSequenceClassification");
            assertThat(m.padTokenId()).isNotNegative();
            checkAgainstReference(m, weightsOf(m));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"qwen2", "llama", "qwen3", "mistral"})
    void aCheckpointBuiltByTheTestScoresAsTheReferenceForward(String arch, @TempDir Path tmp) throws Exception {
        ModelConfig config = TinyConfigs.of(arch, arch.equals("qwen3"), "float32");
        Map<String, Tensor> weights = new LinkedHashMap<>();
        try (Rng rng = new Rng(arch.hashCode())) {
            for (Map.Entry<String, long[]> e : DecoderLm.expectedShapes(config).entrySet()) {
                if (e.getKey().equals("lm_head.weight")) {
                    continue; // a sequence-classification checkpoint has none
                }
                double mean = e.getKey().endsWith("norm.weight") ? 1 : 0;
                double std = e.getKey().endsWith("norm.weight") || e.getKey().endsWith(".bias") ? 0.3 : 0.1;
                weights.put(e.getKey(), Tensor.randn(rng, std, DType.F32, Device.CPU, e.getValue()).add(mean));
            }
            weights.put("score.weight", Tensor.randn(rng, 0.5, DType.F32, Device.CPU, 2, config.hiddenSize()));
        }
        Path dir = tmp.resolve(arch);
        Files.createDirectories(dir);
        Safetensors.save(weights, dir.resolve("model.safetensors"));
        ObjectNode json = config.raw().deepCopy();
        json.putArray("architectures").add(Character.toUpperCase(arch.charAt(0)) + arch.substring(1)
                + "ForSequenceClassification");
        json.putObject("id2label").put("0", "good").put("1", "bad");
        json.put("pad_token_id", PAD);
        Files.writeString(dir.resolve("config.json"), JSON.writeValueAsString(json));
        try (SequenceClassifier m = SequenceClassifier.load(dir, null, Device.CPU)) {
            assertThat(m.labels()).containsExactly("good", "bad");
            checkAgainstReference(m, weights);
        } finally {
            weights.values().forEach(Tensor::close);
        }
    }

    /**
     * Right- and left-padded batches and single sequences all give, per row,
     * hidden[last real token] · score.weight^T computed in float64 by {@link ReferenceForward}.
     * Our float32 forward sums at most K = max(hidden, intermediate) terms per product over L layers,
     * so a logit is off by at most u·K·L·max|z| (u = 2^-24): 9e-5 for the tiny preset's logits of up
     * to 6 (measured: up to 3.6e-6 on AVX2 and AVX-512 kernels).
     */
    private static void checkAgainstReference(SequenceClassifier m, Map<String, Tensor> weights) {
        List<long[]> sequences = List.of(new long[] {5, 17, 3, 42, 9, 11}, new long[] {7, 2, 30},
                new long[] {8, 9, 10, 11, 12, 13, 14, 15}, new long[] {21});
        ReferenceForward reference = new ReferenceForward(m.config(), weights);
        double[] score = weights.get("score.weight").toDoubleArray();
        int e = m.config().hiddenSize();
        int c = m.numLabels();
        double[][] expected = new double[sequences.size()][c];
        for (int b = 0; b < sequences.size(); b++) {
            long[] seq = sequences.get(b);
            double[] last = reference.hidden(seq)[seq.length - 1];
            for (int j = 0; j < c; j++) {
                for (int i = 0; i < e; i++) {
                    expected[b][j] += last[i] * score[j * e + i];
                }
            }
        }
        double largest = java.util.Arrays.stream(expected).flatMapToDouble(java.util.Arrays::stream).map(Math::abs).max()
                .orElseThrow();
        double tolerance = comlrl.tensor.Rounding.forwardBound(Math.max(e, m.config().intermediateSize()),
                m.config().numLayers(), largest);
        try (Scope s = Scope.open(); GradMode g = GradMode.inference()) {
            double[][] right = ClassifierBatches.logits(m, sequences, false);
            double[][] left = ClassifierBatches.logits(m, sequences, true);
            for (int b = 0; b < sequences.size(); b++) {
                double[] single = ClassifierBatches.logits(m, sequences.get(b));
                assertThat(right[b]).as("right-padded row %d", b).containsExactly(expected[b], within(tolerance));
                assertThat(left[b]).as("left-padded row %d", b).containsExactly(expected[b], within(tolerance));
                assertThat(single).as("row %d alone", b).containsExactly(expected[b], within(tolerance));
            }
        }
    }

    private static Map<String, Tensor> weightsOf(SequenceClassifier m) {
        return m.namedParameters();
    }

    @Test
    void savedModelsLoadBackWithTheSameScores(@TempDir Path tmp) {
        Path dir = tmp.resolve("rm");
        BuiltinModels.writeSequenceClassifier("llama", "tiny", 1, 9, DType.F32, dir);
        List<long[]> sequences = List.of(new long[] {5, 6, 7}, new long[] {9});
        try (SequenceClassifier a = SequenceClassifier.load(dir, null, Device.CPU);
                GradMode g = GradMode.inference()) {
            a.save(tmp.resolve("again"), 1 << 20); // small shards: the sharded layout loads too
            try (SequenceClassifier b = SequenceClassifier.load(tmp.resolve("again"), null, Device.CPU)) {
                assertThat(ClassifierBatches.logits(b, sequences, false))
                        .isDeepEqualTo(ClassifierBatches.logits(a, sequences, false));
                assertThat(b.config().toJson()).isEqualTo(a.config().toJson());
            }
        }
    }

    @Test
    void aScoreStoredAsIntegersIsRefusedAtLoadAndResume(@TempDir Path tmp) {
        Path dir = tmp.resolve("rm");
        BuiltinModels.writeSequenceClassifier("qwen2", "tiny", 2, 9, DType.F32, dir);
        Path file = dir.resolve(Safetensors.SINGLE_FILE);
        try (SequenceClassifier model = SequenceClassifier.load(dir, null, Device.CPU); Scope s = Scope.open()) {
            Map<String, Tensor> w = new LinkedHashMap<>(Safetensors.load(file));
            w.put("score.weight", Tensor.zerosOf(DType.I32, Device.CPU, w.get("score.weight").shape()));
            Safetensors.save(w, file);
            String expected = file + ": tensor 'score.weight' is stored as I32, an integer type";
            assertThatThrownBy(() -> SequenceClassifier.load(dir, null, Device.CPU)).hasMessageContaining(expected)
                    .hasMessageContaining("F32 here");
            assertThatThrownBy(() -> model.loadParameters(dir)).hasMessageContaining(expected);
        }
    }

    @Test
    void noPadTokenScoresOneSequenceAtATimeOnly(@TempDir Path tmp) {
        Path dir = tmp.resolve("rm");
        BuiltinModels.writeSequenceClassifier("qwen2", "tiny", 1, 2, DType.F32, dir);
        ClassifierBatches.editConfig(dir, json -> json.putNull("pad_token_id"));
        try (SequenceClassifier m = SequenceClassifier.load(dir, null, Device.CPU); GradMode g = GradMode.inference()) {
            assertThat(m.padTokenId()).isEqualTo(-1);
            assertThat(ClassifierBatches.logits(m, new long[] {5, 6, 7})).hasSize(1);
            assertThatThrownBy(() -> ClassifierBatches.logits(m, List.of(new long[] {5, 6, 7}, new long[] {8}), false))
                    .hasMessageContaining("Cannot handle batch sizes > 1 if no padding token is defined.");
        }
    }

    // ---------------------------------------------------------------- errors

    @Test
    void aCausalLmDirectoryIsNotASequenceClassifier(@TempDir Path tmp) {
        Path dir = tmp.resolve("lm");
        BuiltinModels.write("qwen2", "tiny", 0, DType.F32, dir);
        assertThatThrownBy(() -> SequenceClassifier.load(dir, null, Device.CPU))
                .hasMessageContaining(dir + " is not a sequence-classification model: no score.weight; its "
                        + "architectures say [\"Qwen2ForCausalLM\"]; use a *ForSequenceClassification checkpoint");
    }

    @Test
    void aSequenceClassifierIsNotACausalLm(@TempDir Path tmp) {
        Path dir = tmp.resolve("rm");
        BuiltinModels.writeSequenceClassifier("qwen2", "tiny", 1, 0, DType.F32, dir);
        assertThatThrownBy(() -> CausalLm.load(dir.toString(), null, Device.CPU))
                .hasMessageContaining("it is a sequence-classification model (score.weight")
                .hasMessageContaining("type: reward_model");
    }

    @Test
    void numLabelsMustMatchTheScoreMatrix(@TempDir Path tmp) {
        Path dir = tmp.resolve("rm");
        BuiltinModels.writeSequenceClassifier("qwen2", "tiny", 3, 0, DType.F32, dir);
        ClassifierBatches.editConfig(dir, json -> json.putObject("id2label").put("0", "LABEL_0").put("1", "LABEL_1"));
        assertThatThrownBy(() -> SequenceClassifier.load(dir, null, Device.CPU))
                .hasMessageContaining("score.weight has shape [3, 64] but config.json implies [2, 64] (2 labels from "
                        + "id2label");
        ClassifierBatches.editConfig(dir, json -> json.remove(List.of("id2label", "label2id")));
        assertThatThrownBy(() -> SequenceClassifier.describe(dir))
                .hasMessageContaining("implies [2, 64] (2 labels from the default num_labels");
        ClassifierBatches.editConfig(dir, json -> json.put("num_labels", 3));
        assertThat(SequenceClassifier.describe(dir).numLabels()).isEqualTo(3);
    }

    @Test
    void labelsAreIndicesOrNamesWithinNumLabels() {
        List<String> labels = List.of("LABEL_0", "LABEL_1");
        assertThat(SequenceClassifier.labelIndex(1, labels, "m")).isEqualTo(1);
        assertThat(SequenceClassifier.labelIndex("1", labels, "m")).isEqualTo(1);
        assertThat(SequenceClassifier.labelIndex("LABEL_0", labels, "m")).isZero();
        assertThatThrownBy(() -> SequenceClassifier.labelIndex(2, labels, "m"))
                .hasMessageContaining("label 2 is out of range: the model has 2 labels (num_labels 2: indices 0..1");
        assertThatThrownBy(() -> SequenceClassifier.labelIndex("helpful", labels, "m"))
                .hasMessageContaining("neither a label index nor one of its label names [LABEL_0, LABEL_1]");
    }

    @Test
    void malformedId2LabelIsRefused() {
        ObjectNode json = TinyConfigs.of("qwen2", false, "float32").raw().deepCopy();
        json.putObject("id2label").put("0", "a").put("2", "b");
        ModelConfig config = ModelConfig.fromJson(json, "cfg");
        assertThatThrownBy(() -> SequenceClassifier.labels(config, "cfg"))
                .hasMessageContaining("id2label's keys must be the label indices 0..1, each once; got [0, 2]");
    }

    @Test
    void aHeadlessDecoderComputesHiddenStatesOnly(@TempDir Path tmp) {
        Path dir = tmp.resolve("rm");
        BuiltinModels.writeSequenceClassifier("qwen2", "tiny", 1, 0, DType.F32, dir);
        try (SequenceClassifier m = SequenceClassifier.load(dir, null, Device.CPU); Scope s = Scope.open();
                GradMode g = GradMode.inference()) {
            Tensor ids = Tensor.ofLongs(new long[] {1, 2, 3}, Device.CPU, 1, 3);
            Tensor pos = Tensor.arangeOf(3, Device.CPU).view(1, -1);
            assertThat(m.decoder().forward(ids, pos, null, null, 3).hidden().shape()).containsExactly(1, 3, 64);
            assertThatThrownBy(() -> m.decoder().forward(ids, pos, null, null, 0))
                    .hasMessageContaining("without an LM head");
        }
    }
}
