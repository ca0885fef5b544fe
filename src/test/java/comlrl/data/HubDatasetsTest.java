package comlrl.data;

import static comlrl.data.TestParquet.ids;
import static comlrl.data.TestParquet.range;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.model.io.HubCache;
import comlrl.model.io.HubException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Hub datasets by id against {@link FakeDatasetHub}, a local server in the hub's layout. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HubDatasetsTest {
    private static final String TASKS_COMMIT = "1111111111111111111111111111111111111111";
    private static final String PLAIN_COMMIT = "2222222222222222222222222222222222222222";
    private static final String JSON_COMMIT = "3333333333333333333333333333333333333333";
    private static final String CONVERTED_COMMIT = "4444444444444444444444444444444444444444";

    /** A dataset card declaring two configs, as {@code push_to_hub} writes them. */
    private static final String CARD = "---\n"
            + "license: mit\n"
            + "configs:\n"
            + "- config_name: main\n"
            + "  data_files:\n"
            + "  - split: train\n"
            + "    path: main/train-*\n"
            + "  - split: test\n"
            + "    path: main/test-*\n"
            + "- config_name: socratic\n"
            + "  data_files:\n"
            + "  - split: train\n"
            + "    path: socratic/train-*\n"
            + "---\n"
            + "# Tasks\n";

    @TempDir
    Path tmp;

    private FakeDatasetHub hub;

    @BeforeEach
    void startHub() throws IOException {
        hub = new FakeDatasetHub();
        Map<String, byte[]> tasks = new LinkedHashMap<>();
        tasks.put(".gitattributes", bytes("*.parquet filter=lfs"));
        tasks.put("README.md", bytes(CARD));
        tasks.put("main/train-00000-of-00002.parquet", parquet("t0", 0, 6));
        tasks.put("main/train-00001-of-00002.parquet", parquet("t1", 6, 10));
        tasks.put("main/test-00000-of-00001.parquet", parquet("t2", 100, 103));
        tasks.put("socratic/train-00000-of-00001.parquet", parquet("t3", 200, 202));
        hub.put("org/tasks", "main", TASKS_COMMIT, tasks);

        hub.put("org/plain", "main", PLAIN_COMMIT, Map.of(
                "data/train-00000-of-00001.parquet", parquet("p0", 0, 4),
                "data/test-00000-of-00001.parquet", parquet("p1", 50, 52)));

        hub.put("org/jsonl", "main", JSON_COMMIT, Map.of(
                "README.md", bytes("---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n"
                        + "    path: data/train.jsonl\n---\n"),
                "data/train.jsonl", bytes("{\"prompt\": \"from json\", \"i\": 0}\n")));
        hub.put("org/jsonl", HubDatasets.PARQUET_CONVERSION, CONVERTED_COMMIT, Map.of(
                "default/train/0000.parquet", parquet("c0", 0, 3),
                "default/test/0000.parquet", parquet("c1", 10, 12)));
    }

    @AfterEach
    void stopHub() {
        hub.close();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** The bytes of a Parquet file of rows {@code {prompt: "p<i>", i}}, {@code i} in {@code [from, to)}. */
    private byte[] parquet(String name, int from, int to) throws IOException {
        return Files.readAllBytes(TestParquet.write(tmp.resolve("written").resolve(name + ".parquet"), from, to, 256));
    }

    private HubDatasets datasets(String... extraEnv) {
        return HubDatasets.of(HubCache.of(hub.env(tmp.resolve("cache"), extraEnv)));
    }

    /** Checks that a failure is a {@link HubException} of {@code kind}. */
    private static Consumer<Throwable> hubFailure(HubException.Kind kind) {
        return e -> assertThat(e).isInstanceOfSatisfying(HubException.class, h -> assertThat(h.kind()).isEqualTo(kind));
    }

    @Test
    void loadsASplitByIdIntoTheCacheThenOfflineFromIt() throws IOException {
        HubSplit train = HubSplit.of("org/tasks").withConfig("main");
        Dataset online = datasets().load(train);

        assertThat(ids(online)).isEqualTo(range(0, 10));
        assertThat(online.columnNames()).containsExactly("prompt", "i");
        assertThat(online.get(7).getString("prompt")).isEqualTo("p7");
        assertThat(online.source()).isEqualTo("hub dataset org/tasks, config main, split train, revision main (commit "
                + TASKS_COMMIT + ")");
        Path folder = tmp.resolve("cache/datasets--org--tasks");
        assertThat(Files.readString(folder.resolve("refs/main"))).isEqualTo(TASKS_COMMIT);
        Path snapshot = folder.resolve("snapshots").resolve(TASKS_COMMIT);
        assertThat(Files.isSymbolicLink(snapshot.resolve("main/train-00000-of-00002.parquet"))).isTrue();
        assertThat(snapshot.resolve("README.md")).exists();
        assertThat(snapshot.resolve("main/test-00000-of-00001.parquet")).as("other splits are not fetched").doesNotExist();
        assertThat(hub.requests()).containsExactly(
                "/api/datasets/org/tasks/revision/main",
                "/datasets/org/tasks/resolve/" + TASKS_COMMIT + "/README.md",
                "/datasets/org/tasks/resolve/" + TASKS_COMMIT + "/main/train-00000-of-00002.parquet",
                "/datasets/org/tasks/resolve/" + TASKS_COMMIT + "/main/train-00001-of-00002.parquet");

        // online again: the file list is asked for (at the cached commit), no file is downloaded again
        int before = hub.requests().size();
        assertThat(ids(datasets().load(train))).isEqualTo(range(0, 10));
        assertThat(hub.requests().subList(before, hub.requests().size()))
                .containsExactly("/api/datasets/org/tasks/revision/" + TASKS_COMMIT);

        // offline: the same rows from the cache, without a single request
        before = hub.requests().size();
        HubDatasets offline = datasets("HF_HUB_OFFLINE", "1");
        Dataset cached = offline.load(train);
        assertThat(cached.items()).isEqualTo(online.items());
        assertThat(cached.source()).isEqualTo(online.source());
        assertThat(ids(offline.stream(train))).isEqualTo(range(0, 10));
        assertThat(hub.requests()).hasSize(before);
        // a split never loaded is not in the cache, and the message says so
        assertThatThrownBy(() -> offline.load(train.withSplit("test")))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("split 'test' of config 'main'")
                .hasMessageContaining("Hugging Face cache");
        assertThatThrownBy(() -> offline.load(HubSplit.of("org/plain")))
                .satisfies(hubFailure(HubException.Kind.NOT_CACHED_OFFLINE))
                .hasMessageContaining("dataset 'org/plain'")
                .hasMessageContaining("HF_HUB_OFFLINE");
    }

    @Test
    void aMissingConfigOrSplitNamesTheOnesThatExist() {
        HubDatasets datasets = datasets();
        assertThatThrownBy(() -> datasets.load(HubSplit.of("org/tasks").withConfig("mian")))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("dataset 'org/tasks'")
                .hasMessageContaining("no config 'mian'")
                .hasMessageContaining("main (train, test); socratic (train)");
        assertThatThrownBy(() -> datasets.load(HubSplit.of("org/tasks").withConfig("main").withSplit("validation")))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("config 'main' of dataset 'org/tasks'")
                .hasMessageContaining("no split 'validation'")
                .hasMessageContaining("its splits: train, test");
        assertThatThrownBy(() -> datasets.load(HubSplit.of("org/tasks")))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("several configs")
                .hasMessageContaining("main (train, test); socratic (train)");
        assertThatThrownBy(() -> datasets.load(HubSplit.of("org/missing")))
                .satisfies(hubFailure(HubException.Kind.REPO_NOT_FOUND))
                .hasMessageContaining("org/missing")
                .hasMessageContaining("dataset id");
        assertThatThrownBy(() -> datasets.load(HubSplit.of("org/tasks").withRevision("v9")))
                .satisfies(hubFailure(HubException.Kind.REVISION_NOT_FOUND));
        assertThat(datasets.load(HubSplit.of("org/tasks").withConfig("socratic")).size()).isEqualTo(2);
    }

    @Test
    void infersTheDefaultConfigFromDataFileNamesWithoutACard() {
        HubDatasets.Resolved resolved = datasets().resolve(HubSplit.of("org/plain"));
        assertThat(resolved.config()).isEqualTo("default");
        assertThat(resolved.files()).containsExactly("data/train-00000-of-00001.parquet");
        assertThat(resolved.converted()).isFalse();
        assertThat(ids(datasets().load(HubSplit.of("org/plain").withSplit("test")))).containsExactly(50L, 51L);
        assertThatThrownBy(() -> datasets().load(HubSplit.of("org/plain").withSplit("dev")))
                .hasMessageContaining("its splits: test, train");
    }

    @Test
    void aRepositoryOfJsonFilesIsReadFromTheParquetConversionBranch() throws IOException {
        HubSplit train = HubSplit.of("org/jsonl");
        Dataset tasks = datasets().load(train);

        assertThat(ids(tasks)).containsExactly(0L, 1L, 2L);
        assertThat(tasks.source()).contains("revision refs/convert/parquet (commit " + CONVERTED_COMMIT + ")");
        HubDatasets.Resolved resolved = datasets().resolve(train);
        assertThat(resolved.converted()).isTrue();
        assertThat(resolved.files()).containsExactly("default/train/0000.parquet");
        assertThat(hub.requests()).contains(
                "/api/datasets/org/jsonl/revision/main",
                "/api/datasets/org/jsonl/revision/refs%2Fconvert%2Fparquet",
                "/datasets/org/jsonl/resolve/" + CONVERTED_COMMIT + "/default/train/0000.parquet");
        assertThat(hub.requests()).noneMatch(p -> p.endsWith("/data/train.jsonl"));
        Path folder = tmp.resolve("cache/datasets--org--jsonl");
        assertThat(Files.readString(folder.resolve("refs/refs/convert/parquet"))).isEqualTo(CONVERTED_COMMIT);
        assertThat(folder.resolve("snapshots").resolve(CONVERTED_COMMIT).resolve("default/train/0000.parquet")).exists();

        assertThatThrownBy(() -> datasets().load(train.withSplit("validation")))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("Parquet conversion")
                .hasMessageContaining("its splits: test, train");
        // and offline from the cache
        assertThat(datasets("HF_HUB_OFFLINE", "1").load(train).items()).isEqualTo(tasks.items());
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aStalledFileListOrDataFileFailsAfterTheDownloadTimeout() {
        HubSplit train = HubSplit.of("org/tasks").withConfig("main");
        HubDatasets.Resolved resolved = datasets().resolve(train); // under the long timeout: loads the HTTP classes
        HubDatasets datasets = datasets("HF_HUB_DOWNLOAD_TIMEOUT", "2");
        hub.stallOn("/api/datasets/org/plain/");
        long start = System.nanoTime();
        assertThatThrownBy(() -> datasets.resolve(HubSplit.of("org/plain")))
                .isInstanceOf(HubException.class)
                .hasMessageContaining("file list of org/plain")
                .hasMessageContaining("no data for 2 s")
                .hasMessageContaining("HF_HUB_DOWNLOAD_TIMEOUT");
        hub.stallOn(resolved.files().get(0));
        assertThatThrownBy(() -> datasets.load(train))
                .isInstanceOf(HubException.class)
                .hasMessageContaining(resolved.files().get(0))
                .hasMessageContaining("no data for 2 s");
        assertThat((System.nanoTime() - start) / 1e9).isLessThan(2 * (2 + 5.0)); // two timeouts, with slack
        assertThat(tmp.resolve("cache/datasets--org--tasks/snapshots").resolve(TASKS_COMMIT)
                .resolve(resolved.files().get(0))).doesNotExist();
    }

    @Test
    void streamsAHubSplitFetchingEachFileWhenReachedAndResumesAtTheSameRow() {
        HubSplit train = HubSplit.of("org/tasks").withConfig("main");
        Map<String, Object> saved;
        List<Long> before;
        try (ParquetStream stream = datasets().stream(train)) {
            assertThat(stream.files()).containsExactly("main/train-00000-of-00002.parquet",
                    "main/train-00001-of-00002.parquet");
            assertThat(hub.requests()).noneMatch(p -> p.endsWith(".parquet"));
            Iterator<TaskItem> items = stream.iterator();
            before = new ArrayList<>(ids(items, 4));
            assertThat(hub.requests()).as("the second file is not needed yet")
                    .noneMatch(p -> p.endsWith("train-00001-of-00002.parquet"));
            before.addAll(ids(items, 3));
            saved = stream.stateDict();
        }
        assertThat(saved).containsEntry("consumed", 7L).containsEntry("epoch", 0L);
        assertThat((String) saved.get("source")).contains("org/tasks");
        try (ParquetStream resumed = datasets("HF_HUB_OFFLINE", "1").stream(train)) {
            resumed.loadStateDict(saved);
            List<Long> joined = new ArrayList<>(before);
            joined.addAll(ids(resumed));
            assertThat(joined).isEqualTo(range(0, 10));
        }
    }

    @Test
    void anEmptyHubSplitIsRefusedNamingTheSplitWhetherLoadedOrStreamed() throws IOException {
        hub.put("org/empty", "main", PLAIN_COMMIT, Map.of(
                "data/train-00000-of-00002.parquet", parquet("e0", 0, 0),
                "data/train-00001-of-00002.parquet", parquet("e1", 0, 0)));
        HubSplit train = HubSplit.of("org/empty");
        Dataset loaded = datasets().load(train);
        String described = "hub dataset org/empty, config default, split train, revision main (commit " + PLAIN_COMMIT + ")";
        assertThatThrownBy(() -> loaded.requireRows(RequiredFields.none()))
                .isInstanceOf(DatasetException.class).hasMessageStartingWith(described + ": holds no rows");
        try (ParquetStream stream = datasets().stream(train)) {
            assertThatThrownBy(() -> stream.requireRows(RequiredFields.none()))
                    .isInstanceOf(DatasetException.class).hasMessageStartingWith(described + ": holds no rows");
        }
    }
}
