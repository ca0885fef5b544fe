package comlrl.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TextLoadersTest {
    @TempDir
    Path dir;

    private Path write(String name, String content) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, content, StandardCharsets.UTF_8);
        return file;
    }

    // ------------------------------------------------------------------ JSON Lines

    @Test
    void jsonlReadsOneObjectPerLineSkippingBlankLines() throws IOException {
        Path file = write("tasks.jsonl", "{\"prompt\": \"a\", \"n\": 3, \"x\": 1.5, \"ok\": true}\n"
                + "\n"
                + "   \n"
                + "{\"prompt\": \"b\", \"tests\": [\"t1\", \"t2\"], \"meta\": {\"k\": null}}\n");
        Dataset d = Dataset.fromJsonl(file);
        assertThat(d.size()).isEqualTo(2);
        assertThat(d.columnNames()).containsExactly("prompt", "n", "x", "ok", "tests", "meta");
        TaskItem first = d.get(0);
        assertThat(first.get("n")).isEqualTo(3L);
        assertThat(first.get("x")).isEqualTo(1.5);
        assertThat(first.get("ok")).isEqualTo(true);
        assertThat(first.get("tests")).isNull();
        TaskItem second = d.get(1);
        assertThat(second.get("tests")).isEqualTo(List.of("t1", "t2"));
        assertThat(second.get("meta")).isEqualTo(java.util.Collections.singletonMap("k", null));
        assertThat(d.source()).isEqualTo(file.toString());
    }

    @Test
    void jsonlNamesTheLineOfANonObject() throws IOException {
        Path file = write("x.jsonl", "{\"prompt\": \"a\"}\n\n[1, 2]\n");
        assertThatThrownBy(() -> Dataset.fromJsonl(file))
                .isInstanceOf(DatasetException.class)
                .hasMessageStartingWith(file + " line 3: not a JSON object (found an array)")
                .hasMessageContaining("{\"prompt\": \"...\"}");
    }

    @Test
    void jsonlNamesTheLineOfInvalidJson() throws IOException {
        Path file = write("x.jsonl", "{\"prompt\": \"a\"}\n{\"prompt\": \"b\",}\n");
        assertThatThrownBy(() -> Dataset.fromJsonl(file))
                .hasMessageStartingWith(file + " line 2: invalid JSON");
        Path two = write("two.jsonl", "{\"a\": 1} {\"a\": 2}\n");
        assertThatThrownBy(() -> Dataset.fromJsonl(two))
                .hasMessageStartingWith(two + " line 1: invalid JSON")
                .hasMessageContaining("exactly one JSON object");
    }

    @Test
    void jsonlIgnoresByteOrderMarkAndHandlesCrlf() throws IOException {
        Path file = write("bom.jsonl", "\uFEFF{\"prompt\": \"a\"}\r\n{\"prompt\": \"b\"}\r\n");
        assertThat(Dataset.fromJsonl(file).column("prompt")).containsExactly("a", "b");
    }

    @Test
    void missingFileSaysSo() {
        Path missing = dir.resolve("nope.jsonl");
        assertThatThrownBy(() -> Dataset.fromJsonl(missing))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining(missing.toString())
                .hasMessageContaining("file not found");
        assertThatThrownBy(() -> Dataset.load(dir)).hasMessageContaining("unknown task set format");
        assertThatThrownBy(() -> Dataset.fromCsv(dir)).hasMessageContaining("is a directory");
    }

    // ------------------------------------------------------------------ JSON

    @Test
    void jsonArrayOfRows() throws IOException {
        Path file = write("rows.json", "[{\"prompt\": \"a\", \"t\": 1}, {\"prompt\": \"b\"}]");
        Dataset d = Dataset.fromJson(file);
        assertThat(d.size()).isEqualTo(2);
        assertThat(d.columnNames()).containsExactly("prompt", "t");
        assertThat(d.get(1).get("t")).isNull();
    }

    @Test
    void jsonObjectOfColumns() throws IOException {
        Path file = write("cols.json", "{\"prompt\": [\"a\", \"b\", \"c\"], \"target_min\": [2.0, 2, 2.5]}");
        Dataset d = Dataset.fromJson(file);
        assertThat(d.size()).isEqualTo(3);
        assertThat(d.get(2).getDouble("target_min")).isEqualTo(2.5);
        assertThat(d.get(1).get("target_min")).isEqualTo(2L);
    }

    @Test
    void jsonDataField() throws IOException {
        Path file = write("data.json", "{\"version\": \"1.0\", \"data\": [{\"prompt\": \"a\"}, {\"prompt\": \"b\"}]}");
        Dataset d = Dataset.fromJson(file);
        assertThat(d.columnNames()).containsExactly("prompt");
        assertThat(d.column("prompt")).containsExactly("a", "b");
    }

    @Test
    void jsonColumnNamedDataHoldingPlainValuesIsAColumn() throws IOException {
        Path file = write("c.json", "{\"data\": [1, 2], \"prompt\": [\"a\", \"b\"]}");
        Dataset d = Dataset.fromJson(file);
        assertThat(d.columnNames()).containsExactly("data", "prompt");
    }

    @Test
    void jsonErrorsNameTheProblem() throws IOException {
        Path badElement = write("bad.json", "[{\"prompt\": \"a\"}, 3]");
        assertThatThrownBy(() -> Dataset.fromJson(badElement))
                .hasMessageStartingWith(badElement + ": element 1 (0-based) is a number");
        Path unequal = write("unequal.json", "{\"prompt\": [\"a\", \"b\"], \"answer\": [\"x\"]}");
        assertThatThrownBy(() -> Dataset.fromJson(unequal))
                .hasMessageStartingWith(unequal.toString())
                .hasMessageContaining("prompt=2, answer=1");
        Path notColumn = write("nc.json", "{\"prompt\": [\"a\"], \"name\": \"x\"}");
        assertThatThrownBy(() -> Dataset.fromJson(notColumn))
                .hasMessageContaining("field \"name\" is a string");
        Path lines = write("lines.json", "{\"prompt\": \"a\"}\n{\"prompt\": \"b\"}\n");
        assertThatThrownBy(() -> Dataset.fromJson(lines)).hasMessageContaining(".jsonl");
        Path syntax = write("syntax.json", "[\n{\"prompt\": \"a\"},\n{\"prompt\" \"b\"}\n]");
        assertThatThrownBy(() -> Dataset.fromJson(syntax)).hasMessageStartingWith(syntax + " line 3: invalid JSON");
        Path scalar = write("scalar.json", "42");
        assertThatThrownBy(() -> Dataset.fromJson(scalar)).hasMessageContaining("top-level value is a number");
        Path empty = write("empty.json", "");
        assertThatThrownBy(() -> Dataset.fromJson(empty)).hasMessageContaining("empty file");
    }

    // ------------------------------------------------------------------ CSV / TSV

    @Test
    void csvKeepsStringsAndParsesNumbersOnRequest() throws IOException {
        Path file = write("t.csv", "prompt,target_min,target_max\n"
                + "\"Describe a city, in the clouds.\",2.0,3\n"
                + "\"Say \"\"hi\"\"\",2,3.5\n");
        Dataset d = Dataset.fromCsv(file);
        assertThat(d.columnNames()).containsExactly("prompt", "target_min", "target_max");
        assertThat(d.get(0).get("prompt")).isEqualTo("Describe a city, in the clouds.");
        assertThat(d.get(0).get("target_min")).isEqualTo("2.0");
        assertThat(d.get(0).getDouble("target_min")).isEqualTo(2.0);
        assertThat(d.get(1).get("prompt")).isEqualTo("Say \"hi\"");
        assertThat(d.get(1).getLong("target_min")).isEqualTo(2L);
    }

    @Test
    void csvQuotedLineBreaksEmptyFieldsCrlfAndBom() throws IOException {
        Path file = write("t.csv", "\uFEFFprompt,answer,note\r\n"
                + "\"line one\r\nline two\",,\"\"\r\n"
                + "\r\n"
                + "b,x,y");
        Dataset d = Dataset.fromCsv(file);
        assertThat(d.columnNames()).containsExactly("prompt", "answer", "note");
        assertThat(d.size()).isEqualTo(2);
        assertThat(d.get(0).get("prompt")).isEqualTo("line one\r\nline two");
        assertThat(d.get(0).get("answer")).isNull();
        assertThat(d.get(0).get("note")).isEqualTo("");
        assertThat(d.get(1).get("note")).isEqualTo("y");
    }

    @Test
    void csvWrongFieldCountNamesThePhysicalLine() throws IOException {
        Path file = write("x.csv", "prompt,answer\n\"multi\nline\",a\nb,c,d\n");
        assertThatThrownBy(() -> Dataset.fromCsv(file))
                .isInstanceOf(DatasetException.class)
                .hasMessageStartingWith(file + " line 4: 3 fields, but the header has 2 columns [prompt, answer]")
                .hasMessageContaining("quote fields");
    }

    @Test
    void csvHeaderProblemsAndUnclosedQuotes() throws IOException {
        Path dup = write("dup.csv", "a,b,a\n1,2,3\n");
        assertThatThrownBy(() -> Dataset.fromCsv(dup)).hasMessageStartingWith(dup + " line 1: header names column 'a' twice");
        Path noName = write("noname.csv", "a,,c\n1,2,3\n");
        assertThatThrownBy(() -> Dataset.fromCsv(noName)).hasMessageContaining("header column 2 has no name");
        Path empty = write("empty.csv", "");
        assertThatThrownBy(() -> Dataset.fromCsv(empty)).hasMessageContaining("empty CSV file");
        Path open = write("open.csv", "a,b\n1,\"never closed\n2,3\n");
        assertThatThrownBy(() -> Dataset.fromCsv(open)).hasMessageStartingWith(open + " line 2: a quoted field is never closed");
        Path stray = write("stray.csv", "a,b\n\"x\"y,2\n");
        assertThatThrownBy(() -> Dataset.fromCsv(stray)).hasMessageStartingWith(stray + " line 2: unexpected character 'y'");
    }

    @Test
    void csvHeaderOnlyGivesEmptySetWithColumns() throws IOException {
        Dataset d = Dataset.fromCsv(write("h.csv", "prompt,answer\n"));
        assertThat(d.size()).isZero();
        assertThat(d.columnNames()).containsExactly("prompt", "answer");
    }

    @Test
    void tsvUsesTabs() throws IOException {
        Dataset d = Dataset.load(write("t.tsv", "prompt\tanswer\nhello, world\t42\n"));
        assertThat(d.get(0).get("prompt")).isEqualTo("hello, world");
        assertThat(d.get(0).getLong("answer")).isEqualTo(42L);
    }

    // ------------------------------------------------------------------ load()

    @Test
    void loadChoosesByExtension() throws IOException {
        assertThat(Dataset.load(write("a.jsonl", "{\"prompt\": \"j\"}\n")).get(0).get("prompt")).isEqualTo("j");
        assertThat(Dataset.load(write("a.NDJSON", "{\"prompt\": \"n\"}\n")).get(0).get("prompt")).isEqualTo("n");
        assertThat(Dataset.load(write("a.json", "[{\"prompt\": \"o\"}]")).get(0).get("prompt")).isEqualTo("o");
        assertThat(Dataset.load(write("a.csv", "prompt\nc\n")).get(0).get("prompt")).isEqualTo("c");
        Path txt = write("a.txt", "hello");
        assertThatThrownBy(() -> Dataset.load(txt))
                .hasMessageContaining(txt.toString())
                .hasMessageContaining(".jsonl (.ndjson), .json, .csv, .tsv and .parquet");
    }
}
