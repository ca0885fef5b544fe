package comlrl.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class DatasetTest {
    private static final List<String> PROMPTS = List.of(
            "Describe a city in the clouds.",
            "Invent a new holiday.",
            "Write a bedtime story for a dragon.",
            "Explain how teleportation might work.",
            "Tell a story about dinosaurs.",
            "Describe a world without electricity.",
            "Create a superhero with a unique power.",
            "Write a scene where the moon talks.",
            "Invent a new type of fruit.",
            "Design a playground on Mars.");

    /** The spec's task set: 10 prompts with target_min 2.0 and target_max 3.0. */
    static Dataset specTasks() {
        Map<String, List<?>> columns = new LinkedHashMap<>();
        columns.put("prompt", PROMPTS);
        columns.put("target_min", List.of(2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0));
        columns.put("target_max", List.of(3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0));
        return Dataset.fromColumns(columns);
    }

    @Test
    void theBuiltinLengthRatioTaskSetIsTheSpecsTaskSet() {
        Dataset builtin = BuiltinTasks.lengthRatio();
        Dataset spec = specTasks();
        assertThat(builtin.size()).isEqualTo(spec.size());
        for (int i = 0; i < spec.size(); i++) {
            assertThat(builtin.get(i)).isEqualTo(spec.get(i));
        }
    }

    private static Set<String> prompts(Dataset d) {
        return d.stream().map(t -> t.getString("prompt")).collect(Collectors.toSet());
    }

    private static List<String> promptList(Dataset d) {
        return d.stream().map(t -> t.getString("prompt")).collect(Collectors.toList());
    }

    @Test
    void fromColumnsBuildsRowsInColumnOrder() {
        Dataset tasks = specTasks();
        assertThat(tasks.size()).isEqualTo(10);
        assertThat(tasks.columnNames()).containsExactly("prompt", "target_min", "target_max");
        assertThat(tasks.get(0).getString("prompt")).isEqualTo("Describe a city in the clouds.");
        assertThat(tasks.get(9).getDouble("target_max")).isEqualTo(3.0);
        assertThat(new ArrayList<>(tasks.get(3).asMap().keySet())).containsExactly("prompt", "target_min", "target_max");
        assertThat(tasks.knownSize()).hasValue(10);
        assertThat(tasks.column("prompt")).containsExactlyElementsOf(PROMPTS);
    }

    @Test
    void fromColumnsRejectsUnequalLengthsNamingTheColumns() {
        Map<String, List<?>> columns = new LinkedHashMap<>();
        columns.put("prompt", List.of("a", "b", "c"));
        columns.put("answer", List.of("x", "y"));
        assertThatThrownBy(() -> Dataset.fromColumns(columns))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("prompt=3")
                .hasMessageContaining("answer=2")
                .hasMessageContaining("one value per row");
    }

    @Test
    void fromRowsUnionsColumnsAndFillsMissingWithNull() {
        Map<String, Object> second = new LinkedHashMap<>();
        second.put("prompt", "q2");
        second.put("label", 1);
        Dataset d = Dataset.fromRows(List.of(Map.of("prompt", "q1"), second));
        assertThat(d.columnNames()).containsExactly("prompt", "label");
        assertThat(d.get(0).has("label")).isTrue();
        assertThat(d.get(0).get("label")).isNull();
        assertThat(d.get(1).getLong("label")).isEqualTo(1);
    }

    @Test
    void fromRowsRejectsNullRow() {
        List<Map<String, ?>> rows = new ArrayList<>();
        rows.add(Map.of("prompt", "a"));
        rows.add(null);
        assertThatThrownBy(() -> Dataset.fromRows(rows)).hasMessageContaining("row 1 is null");
    }

    @Test
    void getOutOfRangeSaysTheSize() {
        assertThatThrownBy(() -> specTasks().get(10))
                .isInstanceOf(IndexOutOfBoundsException.class)
                .hasMessageContaining("index 10")
                .hasMessageContaining("10 rows");
    }

    @Test
    void iteratorWalksRowsInOrder() {
        List<String> seen = new ArrayList<>();
        for (TaskItem item : specTasks()) {
            seen.add(item.getString("prompt"));
        }
        assertThat(seen).containsExactlyElementsOf(PROMPTS);
    }

    @Test
    void selectByIndicesAndRange() {
        Dataset tasks = specTasks();
        assertThat(promptList(tasks.select(new int[] {9, 0, 0})))
                .containsExactly(PROMPTS.get(9), PROMPTS.get(0), PROMPTS.get(0));
        assertThat(promptList(tasks.select(List.of(2, 4)))).containsExactly(PROMPTS.get(2), PROMPTS.get(4));
        assertThat(promptList(tasks.selectRange(3, 5))).containsExactly(PROMPTS.get(3), PROMPTS.get(4));
        assertThat(tasks.selectRange(4, 4).size()).isZero();
        assertThat(tasks.take(3).size()).isEqualTo(3);
        assertThat(tasks.take(30).size()).isEqualTo(10);
        assertThat(tasks.select(new int[] {1}).columnNames()).isEqualTo(tasks.columnNames());
        assertThatThrownBy(() -> tasks.select(new int[] {1, 12})).hasMessageContaining("index 12");
        assertThatThrownBy(() -> tasks.selectRange(5, 11)).hasMessageContaining("[5, 11)");
    }

    @Test
    void specExampleSplitsEightTrainTwoTest() {
        Dataset tasks = specTasks();
        Dataset.Split split = tasks.trainTestSplit(0.2, 42);
        assertThat(split.train().size()).isEqualTo(8);
        assertThat(split.test().size()).isEqualTo(2);
        Set<String> train = prompts(split.train());
        Set<String> test = prompts(split.test());
        assertThat(train).doesNotContainAnyElementsOf(test);
        Set<String> union = new HashSet<>(train);
        union.addAll(test);
        assertThat(union).containsExactlyInAnyOrderElementsOf(PROMPTS);
        // the split keeps every field of a task item
        TaskItem item = split.train().get(0);
        assertThat(item.getDouble("target_min")).isEqualTo(2.0);
        assertThat(item.getDouble("target_max")).isEqualTo(3.0);
    }

    @Test
    void splitIsRepeatableForASeedAndDiffersAcrossSeeds() {
        Dataset tasks = specTasks();
        Dataset.Split a = tasks.trainTestSplit(0.2, 42);
        Dataset.Split b = tasks.trainTestSplit(0.2, 42);
        assertThat(a).isEqualTo(b);
        assertThat(promptList(a.train())).isEqualTo(promptList(b.train()));
        // over a few seeds the test sets are not all the same
        Set<Set<String>> testSets = new HashSet<>();
        for (long seed = 0; seed < 8; seed++) {
            testSets.add(prompts(tasks.trainTestSplit(0.2, seed).test()));
        }
        assertThat(testSets.size()).isGreaterThan(1);
        assertThat(prompts(tasks.trainTestSplit(0.2, 42).test()))
                .isNotEqualTo(prompts(tasks.trainTestSplit(0.2, 7).test()));
    }

    @Test
    void splitTestSizeFollowsHuggingFaceCeiling() {
        Dataset hundred = Dataset.fromColumns(Map.of("prompt",
                IntStream.range(0, 100).mapToObj(i -> "p" + i).collect(Collectors.toList())));
        // 0.07 * 100 = 7.000000000000001 in binary floating point; like HF (math.ceil), 8 test rows
        assertThat(hundred.trainTestSplit(0.07, 0).test().size()).isEqualTo(8);
        assertThat(hundred.trainTestSplit(0.07, 0).train().size()).isEqualTo(92);
        assertThat(hundred.trainTestSplit(0.255, 0).test().size()).isEqualTo(26); // ceil(25.5)
        assertThat(hundred.trainTestSplit(0.5, 0).train().size()).isEqualTo(50);
    }

    @Test
    void splitAcceptsAnAbsoluteCount() {
        Dataset tasks = specTasks();
        assertThat(tasks.trainTestSplit(3, 1).test().size()).isEqualTo(3);
        assertThat(tasks.trainTestSplit(3, 1).train().size()).isEqualTo(7);
        assertThat(tasks.trainTestSplit(3.0, 1)).isEqualTo(tasks.trainTestSplit(3, 1));
    }

    @Test
    void splitRejectsBadSizes() {
        Dataset tasks = specTasks();
        assertThatThrownBy(() -> tasks.trainTestSplit(0.0, 1)).hasMessageContaining("fraction in (0, 1)");
        assertThatThrownBy(() -> tasks.trainTestSplit(-0.5, 1)).hasMessageContaining("fraction in (0, 1)");
        assertThatThrownBy(() -> tasks.trainTestSplit(2.5, 1)).hasMessageContaining("whole number");
        assertThatThrownBy(() -> tasks.trainTestSplit(0, 1)).hasMessageContaining(">= 1");
        assertThatThrownBy(() -> tasks.trainTestSplit(10, 1))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("empty train set")
                .hasMessageContaining("at most 9");
        assertThatThrownBy(() -> tasks.trainTestSplit(0.99, 1)).hasMessageContaining("empty train set");
        assertThatThrownBy(() -> Dataset.empty().trainTestSplit(0.0, 1)).hasMessageContaining("fraction in (0, 1)");
        assertThatThrownBy(() -> tasks.take(1).trainTestSplit(0.5, 1)).hasMessageContaining("1 row cannot be split");
        assertThatThrownBy(() -> tasks.shuffle(-1))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("seed=-1")
                .hasMessageContaining("non-negative");
    }

    @Test
    void anEmptySetSplitsIntoTwoEmptySetsAsInDatasets() {
        // datasets returns {"train": self, "test": self} for an empty set, whatever the test size
        for (Dataset.Split split : List.of(Dataset.empty().trainTestSplit(0.5, 1), Dataset.empty().trainTestSplit(3, 1))) {
            assertThat(split.train().isEmpty()).isTrue();
            assertThat(split.test().isEmpty()).isTrue();
        }
        assertThat(Dataset.empty().shuffle(7).isEmpty()).isTrue();
    }

    @Test
    void shuffleIsAPermutationRepeatableForASeed() {
        Dataset tasks = specTasks();
        Dataset once = tasks.shuffle(42);
        assertThat(once).isEqualTo(tasks.shuffle(42));
        assertThat(promptList(once)).containsExactlyInAnyOrderElementsOf(PROMPTS);
        assertThat(promptList(once)).isNotEqualTo(PROMPTS);
        assertThat(promptList(tasks.shuffle(43))).isNotEqualTo(promptList(once));
        // the input is unchanged
        assertThat(promptList(tasks)).containsExactlyElementsOf(PROMPTS);
    }

    @Test
    void specExampleMatchesHuggingFaceDatasets() {
        // Python: Dataset.from_dict(...).shuffle(seed=42) and .train_test_split(test_size=0.2, seed=42)
        // on the ten spec prompts (datasets 5.0.1 / numpy 2.4.6; the full tables are in
        // src/test/resources/datasets-splits/, checked by DatasetSplitGoldenTest)
        assertThat(promptList(specTasks().shuffle(42)))
                .containsExactlyElementsOf(IntStream.of(DATASETS_SHUFFLE_10_42).mapToObj(PROMPTS::get).collect(Collectors.toList()));
        Dataset.Split split = specTasks().trainTestSplit(0.2, 42);
        assertThat(promptList(split.test())).containsExactly(PROMPTS.get(5), PROMPTS.get(6));
        assertThat(promptList(split.train())).containsExactlyElementsOf(
                IntStream.of(0, 7, 3, 2, 4, 9, 1, 8).mapToObj(PROMPTS::get).collect(Collectors.toList()));
    }

    /** {@code np.random.default_rng(42).permutation(10)}. */
    static final int[] DATASETS_SHUFFLE_10_42 = {5, 6, 0, 7, 3, 2, 4, 9, 1, 8};

    @Test
    void filterAndMap() {
        Dataset tasks = specTasks();
        Dataset invent = tasks.filter(t -> t.getString("prompt").startsWith("Invent"));
        assertThat(invent.size()).isEqualTo(2);
        Dataset withId = tasks.map(t -> t.with("id", t.getString("prompt").length()));
        assertThat(withId.columnNames()).containsExactly("prompt", "target_min", "target_max", "id");
        assertThat(withId.get(1).getLong("id")).isEqualTo("Invent a new holiday.".length());
    }

    @Test
    void ofItemsAndEmpty() {
        Dataset d = Dataset.of(List.of(TaskItem.of(Map.of("prompt", "x")), TaskItem.of(Map.of("answer", "y"))));
        assertThat(d.columnNames()).containsExactly("prompt", "answer");
        assertThat(d.get(1).get("prompt")).isNull();
        assertThat(Dataset.empty().size()).isZero();
        assertThat(Dataset.empty().columnNames()).isEmpty();
        assertThat(Dataset.empty().isEmpty()).isTrue();
    }

    @Test
    void itemsAreImmutable() {
        Dataset tasks = specTasks();
        assertThatThrownBy(() -> tasks.items().add(TaskItem.of(Map.of())))
                .isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> tasks.columnNames().add("x")).isInstanceOf(UnsupportedOperationException.class);
    }
}
