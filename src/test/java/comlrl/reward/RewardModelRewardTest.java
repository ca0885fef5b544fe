package comlrl.reward;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import comlrl.data.TaskItem;
import comlrl.generation.BuiltinModels;
import comlrl.model.ClassifierBatches;
import comlrl.model.SequenceClassifier;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.GradMode;
import comlrl.tokenizer.Tokenizer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RewardModelRewardTest {
    private static final String TEMPLATE = "{prompt}\n\nBrief: {completion_0}\n\nDetailed: {completion_1}";
    private static final List<TaskItem> ITEM = List.of(TaskItem.of(Map.of("prompt", "Explain tides.", "topic", "sea")));
    private static final List<List<String>> COMPLETIONS = List.of(
            List.of("Moon.", "The moon pulls water.", "", "Gravity of the moon and sun", "tides", "x", "Water rises."),
            List.of("The moon's gravity pulls the oceans, making bulges that the earth rotates through.", "Long text "
                    + "about tides and the moon and the sun and the earth's rotation.", "Something", "?", "a b c d e f",
                    "y", "Twice a day the water rises and falls."));

    @TempDir
    static Path tmp;
    private static Path model;

    @BeforeAll
    static void writeModel() {
        model = tmp.resolve("rm");
        BuiltinModels.writeSequenceClassifier("qwen2", "tiny", 2, 4, DType.F32, model);
    }

    private static RewardModelReward reward(Map<String, Object> extra) {
        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("type", "reward_model");
        spec.put("model", model.toString());
        spec.put("template", TEMPLATE);
        spec.putAll(extra);
        return (RewardModelReward) RewardFunctions.fromConfig(spec, null);
    }

    @Test
    void batchedEqualsOneAtATime() {
        try (RewardModelReward batched = reward(Map.of("batch_size", 3));
                RewardModelReward single = reward(Map.of("batch_size", 1))) {
            List<Double> a = batched.score(COMPLETIONS, ITEM);
            List<Double> b = single.score(COMPLETIONS, ITEM);
            assertThat(a).hasSize(7);
            for (int k = 0; k < a.size(); k++) {
                assertThat(a.get(k)).as("joint response %d", k).isCloseTo(b.get(k), within(1e-5));
            }
            assertThat(a.stream().distinct().count()).as("different texts score differently").isEqualTo(7);
        }
    }

    @Test
    void rewardsAreTheLabelsLogitOfTheFilledTemplate() {
        try (RewardModelReward label1 = reward(Map.of("label", 1));
                SequenceClassifier classifier = SequenceClassifier.load(model, null, Device.CPU);
                Tokenizer tokenizer = Tokenizer.load(model); GradMode g = GradMode.inference()) {
            List<String> texts = label1.texts(COMPLETIONS, ITEM);
            assertThat(texts.get(1)).isEqualTo("Explain tides.\n\nBrief: The moon pulls water.\n\nDetailed: Long text "
                    + "about tides and the moon and the sun and the earth's rotation.");
            List<Double> rewards = label1.score(COMPLETIONS, ITEM);
            for (int k = 0; k < texts.size(); k++) {
                double[] logits = ClassifierBatches.logits(classifier, tokenizer.encode(texts.get(k), true));
                assertThat(rewards.get(k)).as("joint response %d", k).isCloseTo(logits[1], within(1e-5));
                assertThat(logits[0]).isNotCloseTo(logits[1], within(1e-6));
            }
        }
    }

    @Test
    void labelNamesAndTheDefaultTemplate() {
        try (RewardModelReward named = reward(Map.of("label", "LABEL_1"));
                RewardModelReward byIndex = reward(Map.of("label", 1))) {
            assertThat(named.score(COMPLETIONS, ITEM)).isEqualTo(byIndex.score(COMPLETIONS, ITEM));
        }
        Map<String, Object> spec = new HashMap<>(Map.of("type", "reward_model", "model", model.toString()));
        try (RewardModelReward plain = (RewardModelReward) RewardFunctions.fromConfig(spec, null)) {
            assertThat(plain.texts(List.of(List.of("a"), List.of("b")), ITEM)).containsExactly("Explain tides.\n\na\n\nb");
        }
    }

    @Test
    void longTextsKeepTheirFirstMaxLengthTokens() {
        try (RewardModelReward truncated = reward(Map.of("max_length", 6, "label", 1));
                RewardModelReward full = reward(Map.of("label", 1));
                SequenceClassifier classifier = SequenceClassifier.load(model, null, Device.CPU);
                Tokenizer tokenizer = Tokenizer.load(model); GradMode g = GradMode.inference()) {
            List<String> texts = truncated.texts(COMPLETIONS, ITEM);
            List<Double> rewards = truncated.score(COMPLETIONS, ITEM);
            for (int k = 0; k < texts.size(); k++) {
                long[] ids = tokenizer.encode(texts.get(k), true);
                assertThat(ids.length).isGreaterThan(6);
                double[] logits = ClassifierBatches.logits(classifier, java.util.Arrays.copyOf(ids, 6));
                assertThat(rewards.get(k)).isCloseTo(logits[1], within(1e-5));
            }
            assertThat(rewards).isNotEqualTo(full.score(COMPLETIONS, ITEM));
        }
    }

    @Test
    void theModelLoadsAtTheFirstCallAndIsFreedByClose() {
        RewardModelReward r = reward(Map.of());
        assertThat(r.isLoaded()).isFalse();
        r.score(COMPLETIONS, ITEM);
        assertThat(r.isLoaded()).isTrue();
        r.close();
        assertThat(r.isLoaded()).isFalse();
        assertThatThrownBy(() -> r.score(COMPLETIONS, ITEM)).hasMessageContaining("is closed");
    }

    @Test
    void aModelWithoutPadTokenScoresOneTextAtATime(@TempDir Path dir) {
        Path noPad = dir.resolve("nopad");
        BuiltinModels.writeSequenceClassifier("llama", "tiny", 1, 3, DType.F32, noPad);
        ClassifierBatches.editConfig(noPad, json -> json.putNull("pad_token_id"));
        Map<String, Object> spec = Map.of("type", "reward_model", "model", noPad.toString(), "template", TEMPLATE,
                "batch_size", 4);
        try (RewardModelReward r = (RewardModelReward) RewardFunctions.fromConfig(spec, null)) {
            assertThat(r.score(COMPLETIONS, ITEM)).hasSize(7);
        }
    }

    @Test
    void relativeModelPathsResolveAgainstTheConfigDirectory() {
        Map<String, Object> spec = Map.of("type", "reward_model", "model", "rm");
        try (RewardModelReward r = (RewardModelReward) RewardFunctions.fromConfig(spec, tmp)) {
            assertThat(r.source()).isEqualTo(model.toString());
        }
        assertThatThrownBy(() -> RewardFunctions.fromConfig(Map.of("type", "reward_model", "model", "./missing"), tmp))
                .hasMessageContaining("reward_model model directory not found: " + tmp.resolve("missing"))
                .hasMessageContaining("resolved against the config file's directory");
    }

    // ---------------------------------------------------------------- config errors

    private static String error(Map<String, Object> extra) {
        Map<String, Object> spec = new LinkedHashMap<>(Map.of("type", "reward_model", "model", model.toString()));
        spec.putAll(extra);
        try {
            RewardFunctions.fromConfig(spec, null);
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
        throw new AssertionError("no error for " + spec);
    }

    @Test
    void configErrorsNameTheKey(@TempDir Path dir) {
        assertThat(error(Map.of("model_name", "x"))).contains("Unknown reward reward_model key 'model_name': use 'model'.");
        assertThat(error(Map.of("batch_sise", 2))).contains("key 'batch_sise'; did you mean 'batch_size'?");
        assertThat(error(Map.of("batch_size", 0))).contains("batch_size must be at least 1, got 0");
        assertThat(error(Map.of("batch_size", "many"))).contains("batch_size");
        assertThat(error(Map.of("max_length", 0))).contains("max_length must be at least 1, got 0");
        assertThat(error(Map.of("device", "tpu"))).contains("device: Bad device 'tpu'");
        assertThat(error(Map.of("dtype", "float8"))).contains("dtype");
        assertThat(error(Map.of("label", 2))).contains("label 2 is out of range: the model has 2 labels");
        assertThat(error(Map.of("label", -1))).contains("label must be a non-negative index, got -1");
        assertThat(error(Map.of("label", "helpful"))).contains("neither a label index nor one of its label names");
        assertThat(error(Map.of("label", List.of(0)))).contains("label must be a label index");
        assertThat(error(Map.of("template", "{prompt"))).contains("Malformed formatter template");
        assertThat(error(Map.of("template", "{completion}"))).contains("{completion} is not a completion");
        assertThat(error(Map.of("template", 3))).contains("template");
        assertThat(error(Map.of("model", "builtin:tiny"))).contains("built-in models are causal LMs");
        Map<String, Object> noModel = new HashMap<>(Map.of("type", "reward_model"));
        assertThatThrownBy(() -> RewardFunctions.fromConfig(noModel, null)).hasMessageContaining("needs 'model'");

        Path lm = dir.resolve("lm");
        BuiltinModels.write("qwen2", "tiny", 0, DType.F32, lm);
        assertThat(error(Map.of("model", lm.toString())))
                .contains("is not a sequence-classification model: no score.weight; its architectures say "
                        + "[\"Qwen2ForCausalLM\"]; use a *ForSequenceClassification checkpoint");
    }

    @Test
    void templateFieldsAreCheckedWhenScoring() {
        try (RewardModelReward three = reward(Map.of("template", "{completion_0} {completion_2}"));
                RewardModelReward field = reward(Map.of("template", "{question}: {completion_0}"))) {
            assertThatThrownBy(() -> three.score(COMPLETIONS, ITEM))
                    .hasMessageContaining("uses {completion_2} but there are 2 agents ({completion_0} .. {completion_1})");
            assertThatThrownBy(() -> field.score(COMPLETIONS, ITEM))
                    .hasMessageContaining("placeholder {question} names a field the task item does not have; fields "
                            + "present: [");
            assertThat(three.isLoaded()).isFalse();
        }
    }

    @Test
    void oneItemPerJointResponseIsUsedInOrder() {
        List<TaskItem> items = new ArrayList<>();
        for (int k = 0; k < 2; k++) {
            items.add(TaskItem.of(Map.of("prompt", "p" + k)));
        }
        try (RewardModelReward r = reward(Map.of("template", "{prompt}|{completion_0}"))) {
            assertThat(r.texts(List.of(List.of("a", "b")), items)).containsExactly("p0|a", "p1|b");
        }
    }
}
