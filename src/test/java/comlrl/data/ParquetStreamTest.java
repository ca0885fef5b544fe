package comlrl.data;

import static comlrl.data.TestParquet.ids;
import static comlrl.data.TestParquet.range;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.distributed.Launcher;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ParquetStreamTest {
    @TempDir
    Path dir;

    /** Three files of 0..399, 400..999, 1000..1299, each in several row groups. */
    private List<Path> threeFiles() {
        List<Path> files = List.of(
                TestParquet.write(dir.resolve("a.parquet"), 0, 400, 1024),
                TestParquet.write(dir.resolve("b.parquet"), 400, 1000, 1024),
                TestParquet.write(dir.resolve("c.parquet"), 1000, 1300, 1024));
        for (Path file : files) {
            assertThat(TestParquet.rowGroups(file)).as(file.toString()).isGreaterThan(2);
        }
        return files;
    }

    @Test
    void streamsTheFilesInOrderAndEachPassStartsAgain() {
        try (ParquetStream stream = ParquetStream.open(threeFiles())) {
            assertThat(stream.knownSize()).isEmpty();
            assertThat(stream.files()).hasSize(3);
            assertThat(ids(stream.iterator(), Integer.MAX_VALUE)).isEqualTo(range(0, 1300));
            assertThat(stream.epoch()).isEqualTo(1);
            assertThat(stream.consumed()).isZero();
            Iterator<TaskItem> second = stream.iterator();
            TaskItem first = second.next();
            assertThat(first.asMap()).isEqualTo(Map.of("prompt", "p0", "i", 0L));
            assertThat(stream.consumed()).isEqualTo(1);
        }
    }

    @Test
    void resumingMidwayContinuesAtTheSameRow() {
        List<Path> files = threeFiles();
        List<Long> uninterrupted;
        try (ParquetStream stream = ParquetStream.open(files)) {
            uninterrupted = ids(stream.iterator(), Integer.MAX_VALUE);
        }
        // inside the first row group, inside a later one, a file boundary, the last row, the end
        for (int cut : new int[] {0, 3, 555, 400, 1000, 1299, 1300}) {
            Map<String, Object> saved;
            List<Long> before;
            try (ParquetStream stream = ParquetStream.open(files)) {
                before = ids(stream.iterator(), cut);
                saved = stream.stateDict();
            }
            assertThat(saved).containsEntry("consumed", (long) cut).containsEntry("epoch", 0L).containsKey("files");
            try (ParquetStream resumed = ParquetStream.open(files)) {
                resumed.loadStateDict(saved);
                List<Long> joined = new ArrayList<>(before);
                joined.addAll(ids(resumed.iterator(), Integer.MAX_VALUE));
                assertThat(joined).as("cut at " + cut).isEqualTo(uninterrupted);
                assertThat(resumed.epoch()).isEqualTo(1);
            }
        }
    }

    @Test
    void resumingPastTheEndFailsAndBadStateIsRejected() {
        try (ParquetStream stream = ParquetStream.open(threeFiles())) {
            stream.loadStateDict(Map.of("consumed", 1301));
            assertThatThrownBy(stream::iterator)
                    .isInstanceOf(DatasetException.class)
                    .hasMessageContaining("cannot resume after 1301 consumed items")
                    .hasMessageContaining("holds only 1300");
            assertThatThrownBy(() -> stream.loadStateDict(Map.of("epoch", 1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("ParquetStream state has no 'consumed'");
            assertThatThrownBy(() -> stream.loadStateDict(Map.of("consumed", 2.5)))
                    .hasMessageContaining("whole number >= 0");
        }
    }

    @Test
    void readsWhatTheInMemoryLoaderReads() {
        Path file = TestParquet.write(dir.resolve("one.parquet"), 0, 50, 512);
        List<TaskItem> streamed = new ArrayList<>();
        try (ParquetStream stream = ParquetStream.open(file)) {
            stream.forEach(streamed::add);
        }
        assertThat(streamed).isEqualTo(Dataset.fromParquet(file).items());
    }

    @Test
    void openFailsForAMissingFile() {
        assertThatThrownBy(() -> ParquetStream.open(dir.resolve("missing.parquet")))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("file not found");
        assertThatThrownBy(() -> ParquetStream.open(List.of()))
                .hasMessageContaining("at least one Parquet file");
    }

    /**
     * 100,000 rows of ~400 characters (about 40 MB of text, some 60 MB of live heap if the rows were
     * kept) in row groups of about 512 KiB: streaming them holds one row group at a time, so resident
     * memory, the live heap and the direct (native) buffers after the first three row groups are what
     * they are at the end. Measured in a JVM of its own ({@link ParquetStreamMemoryProbe}) whose heap
     * is fixed and touched before the stream starts: in the shared test JVM the resident set also
     * grows as the collector first touches heap pages committed earlier (by 100 MiB and more after
     * other tests), which is not the stream's. The live-heap bound catches a leak on the Java heap;
     * RSS and the direct-buffer bound catch native memory (decompression buffers) kept per row group.
     */
    @Test
    void residentMemoryStaysFlatPerRowGroup() throws Exception {
        int rows = 100_000;
        String[] words = {"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
            "juliet", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo"};
        Path file = TestParquet.write(dir.resolve("large.parquet"), 0, rows, 1L << 19, i -> {
            SplittableRandom random = new SplittableRandom(i);
            StringBuilder prompt = new StringBuilder("Task ").append(i).append(':');
            while (prompt.length() < 400) {
                prompt.append(' ').append(words[random.nextInt(words.length)]);
            }
            return prompt.toString();
        });
        int rowGroups = TestParquet.rowGroups(file);
        assertThat(rowGroups).isGreaterThanOrEqualTo(20);
        long rowsPerGroup = rows / rowGroups;

        List<String> cmd = new ArrayList<>(Launcher.javaCommand(ParquetStreamMemoryProbe.class.getName()));
        // after the inherited -Xmx, so these win
        cmd.addAll(cmd.size() - 3, List.of("-Xms384m", "-Xmx384m", "-XX:+AlwaysPreTouch"));
        cmd.addAll(List.of(file.toString(), Long.toString(3 * rowsPerGroup)));
        Path log = dir.resolve("probe.log");
        Process probe = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        assertThat(probe.waitFor(5, TimeUnit.MINUTES)).as("probe finished").isTrue();
        String output = Files.readString(log);
        assertThat(probe.exitValue()).as(output).isZero();
        Map<String, Long> m = new HashMap<>();
        output.lines().filter(l -> l.matches("\\w+: -?\\d+"))
                .forEach(l -> m.put(l.substring(0, l.indexOf(':')), Long.parseLong(l.substring(l.indexOf(' ') + 1))));
        System.out.printf("ParquetStream %d rows in %d row groups: RSS beyond the JVM's committed heap and non-heap "
                + "%d -> %d MiB, live heap %d -> %d MiB, direct buffers %d -> %d KiB%n", rows, rowGroups,
                m.get("earlyRss") >> 20, m.get("endRss") >> 20, m.get("earlyHeap") >> 20, m.get("endHeap") >> 20,
                m.get("earlyDirect") >> 10, m.get("endDirect") >> 10);
        assertThat(m.get("rows")).as(output).isEqualTo(rows);
        assertThat(m.get("text")).isGreaterThan(40_000_000L);
        // the JVM may still commit code cache or metaspace (subtracted): what is left is native memory,
        // which one row group at a time keeps flat
        assertThat(m.get("endRss") - m.get("earlyRss"))
                .as("RSS growth beyond the JVM's own after %d of %d row groups", 3, rowGroups)
                .isLessThan(24L << 20);
        assertThat(m.get("endHeap") - m.get("earlyHeap")).as("live heap growth").isLessThan(8L << 20);
        assertThat(m.get("endDirect") - m.get("earlyDirect")).as("direct buffer growth").isLessThan(4L << 20);
    }
}
