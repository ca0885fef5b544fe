package comlrl.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JsonlStreamTest {
    @TempDir
    Path dir;

    private Path fiveItems() throws IOException {
        Path file = dir.resolve("stream.jsonl");
        String body = IntStream.range(0, 5)
                .mapToObj(i -> "{\"prompt\": \"p" + i + "\", \"i\": " + i + "}")
                .collect(Collectors.joining("\n\n", "", "\n"));
        Files.writeString(file, body);
        return file;
    }

    private static List<String> take(Iterator<TaskItem> it, int n) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n && it.hasNext(); i++) {
            out.add(it.next().getString("prompt"));
        }
        return out;
    }

    private static List<String> all(Iterable<TaskItem> items) {
        List<String> out = new ArrayList<>();
        for (TaskItem item : items) {
            out.add(item.getString("prompt"));
        }
        return out;
    }

    @Test
    void eachIterationRereadsTheFile() throws IOException {
        try (JsonlStream stream = JsonlStream.open(fiveItems())) {
            assertThat(stream.knownSize()).isEmpty();
            assertThat(all(stream)).containsExactly("p0", "p1", "p2", "p3", "p4");
            assertThat(stream.epoch()).isEqualTo(1);
            assertThat(stream.consumed()).isZero();
            assertThat(all(stream)).containsExactly("p0", "p1", "p2", "p3", "p4");
            assertThat(stream.epoch()).isEqualTo(2);
        }
    }

    @Test
    void stateDictResumesAfterConsumedItems() throws IOException {
        Path file = fiveItems();
        Map<String, Object> saved;
        try (JsonlStream stream = JsonlStream.open(file)) {
            Iterator<TaskItem> it = stream.iterator();
            assertThat(take(it, 2)).containsExactly("p0", "p1");
            assertThat(stream.consumed()).isEqualTo(2);
            saved = stream.stateDict();
        }
        assertThat(saved).containsEntry("consumed", 2L).containsEntry("epoch", 0L).containsEntry("file", file.toString());

        try (JsonlStream resumed = JsonlStream.open(file)) {
            resumed.loadStateDict(saved);
            assertThat(resumed.consumed()).isEqualTo(2);
            Iterator<TaskItem> it = resumed.iterator();
            assertThat(resumed.consumed()).isEqualTo(2);
            assertThat(take(it, 10)).containsExactly("p2", "p3", "p4");
            assertThat(resumed.epoch()).isEqualTo(1);
            // the next pass starts from the beginning again
            assertThat(all(resumed)).containsExactly("p0", "p1", "p2", "p3", "p4");
        }
    }

    @Test
    void stateRoundTripsThroughJsonNumbersOfAnyType() throws IOException {
        try (JsonlStream stream = JsonlStream.open(fiveItems())) {
            stream.loadStateDict(Map.of("consumed", 4, "epoch", 3.0));
            assertThat(stream.epoch()).isEqualTo(3);
            assertThat(all(stream)).containsExactly("p4");
            assertThat(stream.epoch()).isEqualTo(4);
        }
    }

    @Test
    void resumingPastTheEndFails() throws IOException {
        try (JsonlStream stream = JsonlStream.open(fiveItems())) {
            stream.loadStateDict(Map.of("consumed", 6));
            assertThatThrownBy(stream::iterator)
                    .isInstanceOf(DatasetException.class)
                    .hasMessageContaining("cannot resume after 6 consumed items")
                    .hasMessageContaining("holds only 5");
        }
    }

    @Test
    void badStateIsRejected() throws IOException {
        try (JsonlStream stream = JsonlStream.open(fiveItems())) {
            assertThatThrownBy(() -> stream.loadStateDict(Map.of("epoch", 1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("no 'consumed'");
            assertThatThrownBy(() -> stream.loadStateDict(Map.of("consumed", -1)))
                    .hasMessageContaining("whole number >= 0");
            assertThatThrownBy(() -> stream.loadStateDict(Map.of("consumed", "3")))
                    .hasMessageContaining("whole number >= 0");
        }
    }

    @Test
    void aNewPassSupersedesTheOldOne() throws IOException {
        try (JsonlStream stream = JsonlStream.open(fiveItems())) {
            Iterator<TaskItem> first = stream.iterator();
            take(first, 3);
            Iterator<TaskItem> second = stream.iterator();
            assertThat(stream.consumed()).isZero();
            assertThat(first.hasNext()).isFalse();
            assertThat(take(second, 1)).containsExactly("p0");
            assertThat(stream.consumed()).isEqualTo(1);
            assertThat(stream.epoch()).isZero();
        }
    }

    @Test
    void malformedLineFailsWhenReachedWithItsLineNumber() throws IOException {
        Path file = dir.resolve("bad.jsonl");
        Files.writeString(file, "{\"prompt\": \"a\"}\n\"just a string\"\n");
        try (JsonlStream stream = JsonlStream.open(file)) {
            Iterator<TaskItem> it = stream.iterator();
            assertThat(it.next().getString("prompt")).isEqualTo("a");
            assertThatThrownBy(it::hasNext)
                    .isInstanceOf(DatasetException.class)
                    .hasMessageStartingWith(file + " line 2: not a JSON object (found a string)");
        }
    }

    @Test
    void openFailsForMissingFile() {
        assertThatThrownBy(() -> JsonlStream.open(dir.resolve("missing.jsonl")))
                .hasMessageContaining("file not found");
    }
}
