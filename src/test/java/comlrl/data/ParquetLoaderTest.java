package comlrl.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import blue.strategic.parquet.Dehydrator;
import blue.strategic.parquet.ParquetWriter;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ParquetLoaderTest {
    @TempDir
    Path dir;

    private record Task(String prompt, double targetMin, long id, boolean hard) {}

    @Test
    void readsFlatColumnsWrittenBySnappyWriter() throws IOException {
        MessageType schema = Types.buildMessage()
                .required(PrimitiveTypeName.BINARY).as(LogicalTypeAnnotation.stringType()).named("prompt")
                .required(PrimitiveTypeName.DOUBLE).named("target_min")
                .required(PrimitiveTypeName.INT64).named("id")
                .required(PrimitiveTypeName.BOOLEAN).named("hard")
                .named("task");
        Dehydrator<Task> dehydrator = (task, out) -> {
            out.write("prompt", task.prompt());
            out.write("target_min", task.targetMin());
            out.write("id", task.id());
            out.write("hard", task.hard());
        };
        Path file = dir.resolve("tasks.parquet");
        try (ParquetWriter<Task> writer = ParquetWriter.writeFile(schema, file.toFile(), dehydrator)) {
            writer.write(new Task("Describe a city in the clouds.", 2.0, 7, false));
            writer.write(new Task("Invent a new holiday.", 2.5, 8, true));
            writer.write(new Task("Design a playground on Mars. ünïcødé", 3.0, 9, false));
        }

        Dataset d = Dataset.load(file);
        assertThat(d.size()).isEqualTo(3);
        assertThat(d.columnNames()).containsExactly("prompt", "target_min", "id", "hard");
        assertThat(d.get(0).get("prompt")).isEqualTo("Describe a city in the clouds.");
        assertThat(d.get(1).get("target_min")).isEqualTo(2.5);
        assertThat(d.get(1).get("id")).isEqualTo(8L);
        assertThat(d.get(1).get("hard")).isEqualTo(true);
        assertThat(d.get(2).getString("prompt")).endsWith("ünïcødé");
        assertThat(d.source()).isEqualTo(file.toString());
    }

    @Test
    void readsNullsListsStructsMapsAndDecimals() throws IOException {
        MessageType schema = MessageTypeParser.parseMessageType("message task {\n"
                + "  required binary prompt (STRING);\n"
                + "  optional int32 level;\n"
                + "  optional float weight;\n"
                + "  optional group tests (LIST) {\n"
                + "    repeated group list {\n"
                + "      optional binary element (STRING);\n"
                + "    }\n"
                + "  }\n"
                + "  optional group meta {\n"
                + "    optional binary source (STRING);\n"
                + "    optional group tags (LIST) { repeated group list { required int64 element; } }\n"
                + "  }\n"
                + "  optional group attrs (MAP) {\n"
                + "    repeated group key_value {\n"
                + "      required binary key (STRING);\n"
                + "      optional int32 value;\n"
                + "    }\n"
                + "  }\n"
                + "  optional int64 price (DECIMAL(10,2));\n"
                + "  optional binary raw;\n"
                + "  repeated int32 legacy;\n"
                + "}");
        SimpleGroupFactory groups = new SimpleGroupFactory(schema);
        Group first = groups.newGroup()
                .append("prompt", "p0")
                .append("level", 3)
                .append("weight", 0.5f)
                .append("price", 1234L)
                .append("raw", org.apache.parquet.io.api.Binary.fromConstantByteArray(new byte[] {1, 2}));
        Group tests = first.addGroup("tests");
        tests.addGroup("list").append("element", "assert f(1) == 2");
        tests.addGroup("list"); // a null element
        tests.addGroup("list").append("element", "assert f(2) == 3");
        Group meta = first.addGroup("meta");
        meta.append("source", "leetcode");
        Group tags = meta.addGroup("tags");
        tags.addGroup("list").append("element", 5L);
        tags.addGroup("list").append("element", 6L);
        Group attrs = first.addGroup("attrs");
        attrs.addGroup("key_value").append("key", "a").append("value", 1);
        attrs.addGroup("key_value").append("key", "b");
        first.append("legacy", 10).append("legacy", 11);
        Group second = groups.newGroup().append("prompt", "p1");
        second.addGroup("tests"); // an empty list

        Path file = dir.resolve("nested.parquet");
        try (org.apache.parquet.hadoop.ParquetWriter<Group> writer = ExampleParquetWriter
                .builder(new LocalOutputFile(file))
                .withType(schema)
                .withCompressionCodec(CompressionCodecName.SNAPPY)
                .withRowGroupSize(1024L)
                .build()) {
            writer.write(first);
            writer.write(second);
        }

        Dataset d = Dataset.fromParquet(file);
        assertThat(d.columnNames())
                .containsExactly("prompt", "level", "weight", "tests", "meta", "attrs", "price", "raw", "legacy");
        TaskItem a = d.get(0);
        assertThat(a.get("level")).isEqualTo(3L);
        assertThat(a.get("weight")).isEqualTo(0.5);
        assertThat(a.get("tests")).isEqualTo(java.util.Arrays.asList("assert f(1) == 2", null, "assert f(2) == 3"));
        assertThat(a.get("meta")).isEqualTo(Map.of("source", "leetcode", "tags", List.of(5L, 6L)));
        assertThat(a.get("attrs")).isEqualTo(new java.util.LinkedHashMap<>(Map.of("a", 1L)) {
            {
                put("b", null);
            }
        });
        assertThat(a.get("price")).isEqualTo(new BigDecimal("12.34"));
        assertThat((byte[]) a.get("raw")).containsExactly(1, 2);
        assertThat(a.get("legacy")).isEqualTo(List.of(10L, 11L));
        TaskItem b = d.get(1);
        assertThat(b.get("level")).isNull();
        assertThat(b.get("tests")).isEqualTo(List.of());
        assertThat(b.get("meta")).isNull();
        assertThat(b.get("legacy")).isEqualTo(List.of());
    }

    @Test
    void manyRowGroupsKeepOrder() throws IOException {
        MessageType schema = MessageTypeParser.parseMessageType(
                "message t { required binary prompt (STRING); required int32 i; }");
        SimpleGroupFactory groups = new SimpleGroupFactory(schema);
        Path file = dir.resolve("groups.parquet");
        try (org.apache.parquet.hadoop.ParquetWriter<Group> writer = ExampleParquetWriter
                .builder(new LocalOutputFile(file))
                .withType(schema)
                .withRowGroupSize(512L)
                .withPageSize(128)
                .build()) {
            for (int i = 0; i < 2000; i++) {
                writer.write(groups.newGroup().append("prompt", "prompt number " + i).append("i", i));
            }
        }
        try (org.apache.parquet.hadoop.ParquetFileReader reader = org.apache.parquet.hadoop.ParquetFileReader
                .open(new org.apache.parquet.io.LocalInputFile(file))) {
            assertThat(reader.getRowGroups().size()).isGreaterThan(1);
        }
        Dataset d = Dataset.fromParquet(file);
        assertThat(d.size()).isEqualTo(2000);
        for (int i = 0; i < 2000; i++) {
            assertThat(d.get(i).getLong("i")).isEqualTo(i);
        }
    }

    @Test
    void notAParquetFileSaysSo() throws IOException {
        Path file = dir.resolve("fake.parquet");
        Files.writeString(file, "prompt,answer\na,b\n");
        assertThatThrownBy(() -> Dataset.fromParquet(file))
                .isInstanceOf(DatasetException.class)
                .hasMessageStartingWith(file + ": cannot read Parquet")
                .hasMessageContaining("complete Parquet file");
    }
}
