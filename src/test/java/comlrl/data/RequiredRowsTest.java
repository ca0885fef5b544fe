package comlrl.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link TaskSet#requireRows}: every format refuses an empty set and a row lacking a field its
 * readers need (missing, null, or of the wrong kind), naming the file, the row and the field; a
 * stream checks its schema and first rows up front and every later row as it is read.
 */
class RequiredRowsTest {
    private static final RequiredFields PROMPT = RequiredFields.none()
            .and("prompt", RequiredFields.Kind.TEXT, "the default formatter");
    private static final RequiredFields TARGETS = PROMPT
            .and("target_min", RequiredFields.Kind.NUMBER, "reward length_ratio (target_min_field)");

    @TempDir
    Path dir;

    @Test
    void aJsonlRowWithoutAStringPromptIsRefusedNamingTheLineAndTheField() throws IOException {
        // line 2 is blank: row 2 is on line 3
        for (String bad : List.of("{\"question\": \"q\"}", "{\"prompt\": null}", "{\"prompt\": 42}")) {
            Path file = Files.writeString(dir.resolve("tasks.jsonl"), "{\"prompt\": \"a\"}\n\n" + bad + "\n{\"prompt\": \"c\"}\n");
            Dataset tasks = Dataset.fromJsonl(file);
            assertThatThrownBy(() -> tasks.requireRows(PROMPT))
                    .isInstanceOf(DatasetException.class)
                    .hasMessageStartingWith(file + " line 3 (row 2): field 'prompt' (read by the default formatter) ")
                    .hasMessageContaining(bad.contains("{\"prompt\"") && !bad.contains("null")
                            ? "is a number (42), not a string" : "is null or missing");
        }
        Path good = Files.writeString(dir.resolve("good.jsonl"), "{\"prompt\": \"a\", \"target_min\": 2}\n");
        Dataset.fromJsonl(good).requireRows(TARGETS);
    }

    @Test
    void numbersMayBeNumericStringsAndRowsOfASplitAreNamedAsTheFileCountsThem() throws IOException {
        Path csv = Files.writeString(dir.resolve("tasks.csv"), "prompt,target_min\na,2\nb,\"2.5\"\nc,two\nd,\n");
        Dataset tasks = Dataset.fromCsv(csv);
        assertThatThrownBy(() -> tasks.requireRows(TARGETS))
                .isInstanceOf(DatasetException.class)
                .hasMessageStartingWith(csv + " line 4 (row 3): field 'target_min' (read by reward length_ratio "
                        + "(target_min_field)) is a string (\"two\"), not a number");
        // the rows a derived set holds are named by the loaded file's count
        Dataset lastTwo = tasks.select(new int[] {3, 0});
        assertThatThrownBy(() -> lastTwo.requireRows(TARGETS))
                .hasMessageStartingWith(csv + " line 5 (row 4): field 'target_min' (read by reward length_ratio "
                        + "(target_min_field)) is null or missing");
        tasks.select(new int[] {0, 1}).requireRows(TARGETS);
        // formats without lines count rows
        Dataset rows = Dataset.fromRows(List.of(Map.of("prompt", "a"), Map.of("prompt", List.of("x"))));
        assertThatThrownBy(() -> rows.requireRows(PROMPT))
                .hasMessageStartingWith("rows row 2: field 'prompt' (read by the default formatter) is a list ([x]), not a string");
    }

    @Test
    void anEmptySetIsRefusedInEveryFormat() throws IOException {
        List<Dataset> empty = new ArrayList<>();
        empty.add(Dataset.fromJsonl(Files.writeString(dir.resolve("e.jsonl"), "\n")));
        empty.add(Dataset.fromJson(Files.writeString(dir.resolve("e.json"), "[]")));
        empty.add(Dataset.fromCsv(Files.writeString(dir.resolve("e.csv"), "prompt,target_min\n")));
        empty.add(Dataset.fromParquet(TestParquet.write(dir.resolve("e.parquet"), 0, 0, 1 << 12)));
        Dataset.fromColumns(Map.of("prompt", List.of())).saveToDisk(dir.resolve("disk"));
        empty.add(Dataset.loadFromDisk(dir.resolve("disk")));
        for (Dataset set : empty) {
            assertThatThrownBy(() -> set.requireRows(RequiredFields.none()))
                    .isInstanceOf(DatasetException.class)
                    .hasMessageStartingWith(set.source() + ": holds no rows; a task set needs at least one row");
        }
        Dataset one = Dataset.fromJsonl(Files.writeString(dir.resolve("one.jsonl"), "{\"prompt\": \"a\"}\n"));
        assertThatThrownBy(() -> one.filter(item -> false).requireRows(PROMPT))
                .hasMessageContaining("holds no rows (after the split or selection; the loaded set has 1)");
        assertThatThrownBy(() -> JsonlStream.open(dir.resolve("e.jsonl")).requireRows(PROMPT))
                .isInstanceOf(DatasetException.class).hasMessageStartingWith(dir.resolve("e.jsonl") + ": holds no rows");
        assertThatThrownBy(() -> ParquetStream.open(dir.resolve("e.parquet")).requireRows(PROMPT))
                .isInstanceOf(DatasetException.class).hasMessageStartingWith(dir.resolve("e.parquet") + ": holds no rows");
    }

    @Test
    void aJsonlStreamChecksItsFirstRowsUpFrontAndLaterRowsAsTheyAreRead() throws IOException {
        int badAhead = RowStream.CHECKED_AHEAD / 2;
        Path early = writeJsonl("early.jsonl", 2 * RowStream.CHECKED_AHEAD, badAhead);
        try (JsonlStream stream = JsonlStream.open(early)) {
            assertThatThrownBy(() -> stream.requireRows(PROMPT))
                    .isInstanceOf(DatasetException.class)
                    .hasMessageStartingWith(early + " line " + badAhead + ": field 'prompt' (read by the default "
                            + "formatter) is null or missing");
        }
        // a stream's rows hold only their line's fields: a missing one is named as such
        Path question = Files.writeString(dir.resolve("question.jsonl"), "{\"prompt\": \"a\"}\n{\"question\": \"q\"}\n");
        try (JsonlStream stream = JsonlStream.open(question)) {
            assertThatThrownBy(() -> stream.requireRows(PROMPT))
                    .hasMessageStartingWith(question + " line 2: field 'prompt' (read by the default formatter) is missing "
                            + "(the row has [question])");
        }
        int badLater = RowStream.CHECKED_AHEAD + 500;
        Path late = writeJsonl("late.jsonl", 2 * RowStream.CHECKED_AHEAD, badLater);
        try (JsonlStream stream = JsonlStream.open(late)) {
            stream.requireRows(PROMPT); // the first rows are fine
            Iterator<TaskItem> items = stream.iterator();
            for (int row = 1; row < badLater; row++) {
                items.next();
            }
            assertThatThrownBy(items::hasNext)
                    .isInstanceOf(DatasetException.class)
                    .hasMessageStartingWith(late + " line " + badLater + ": field 'prompt' (read by the default formatter) "
                            + "is null or missing");
        }
    }

    @Test
    void aParquetStreamChecksItsColumnsUpFrontAndNullsRowByRow() throws IOException {
        Path ints = TestParquet.write(dir.resolve("tasks.parquet"), 0, 10, 1 << 12);
        RequiredFields idAsText = RequiredFields.none().and("i", RequiredFields.Kind.TEXT, "formatters template \"{i}\"");
        try (ParquetStream stream = ParquetStream.open(ints)) {
            assertThatThrownBy(() -> stream.requireRows(idAsText))
                    .isInstanceOf(DatasetException.class)
                    .hasMessageStartingWith(ints + ": column 'i' (read by formatters template \"{i}\") is of Parquet type "
                            + "required int64 i, which cannot hold a string");
            assertThatThrownBy(() -> stream.requireRows(RequiredFields.none()
                    .and("question", RequiredFields.Kind.TEXT, "formatters template \"{question}\"")))
                    .hasMessageStartingWith(ints + ": has no column 'question', which formatters template \"{question}\" "
                            + "reads; its columns: [prompt, i]");
            stream.requireRows(PROMPT.and("i", RequiredFields.Kind.NUMBER, "reward length_ratio (target_min_field)"));
            assertThat(TestParquet.ids(stream)).isEqualTo(TestParquet.range(0, 10));
        }
        // an optional prompt column: a null in a later row group fails when the pass reaches it
        int rows = 3 * RowStream.CHECKED_AHEAD;
        int nullAt = 2 * RowStream.CHECKED_AHEAD + 7; // 0-based
        Path optional = writeOptionalPrompts(dir.resolve("optional.parquet"), rows, nullAt);
        try (ParquetStream stream = ParquetStream.open(optional)) {
            stream.requireRows(PROMPT);
            Iterator<TaskItem> items = stream.iterator();
            for (int row = 0; row < nullAt; row++) {
                items.next();
            }
            assertThatThrownBy(items::hasNext)
                    .isInstanceOf(DatasetException.class)
                    .hasMessageStartingWith(optional + " row " + (nullAt + 1) + " (row group ")
                    .hasMessageContaining("field 'prompt' (read by the default formatter) is null or missing");
        }
    }

    /** {@code rows} lines {@code {"prompt": "p<line>"}}, line {@code nullLine} (1-based) holding a null prompt. */
    private Path writeJsonl(String name, int rows, int nullLine) throws IOException {
        StringBuilder text = new StringBuilder();
        for (int line = 1; line <= rows; line++) {
            text.append(line == nullLine ? "{\"prompt\": null}" : "{\"prompt\": \"p" + line + "\"}").append('\n');
        }
        return Files.writeString(dir.resolve(name), text);
    }

    /** {@code rows} rows of an optional string prompt, null at row {@code nullAt}, in small row groups. */
    private static Path writeOptionalPrompts(Path file, int rows, int nullAt) {
        MessageType schema = MessageTypeParser.parseMessageType("message task { optional binary prompt (STRING); }");
        SimpleGroupFactory groups = new SimpleGroupFactory(schema);
        try (ParquetWriter<Group> writer = ExampleParquetWriter.builder(new LocalOutputFile(file)).withType(schema)
                .withRowGroupSize(4096).withPageSize(1024).build()) {
            for (int i = 0; i < rows; i++) {
                Group row = groups.newGroup();
                if (i != nullAt) {
                    row.append("prompt", "p" + i);
                }
                writer.write(row);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        assertThat(TestParquet.rowGroups(file)).as("the null lies past the first row group").isGreaterThan(1);
        return file;
    }
}
