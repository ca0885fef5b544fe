package comlrl.model.io;

import static comlrl.utils.HttpReplies.send;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Downloads against two local servers on 127.0.0.1: a "hub" serving the {@code /resolve/} URL
 * layout with the hub's headers, and a "storage" server (another origin) that large files redirect
 * to, as the real hub's LFS files do.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HubDownloadTest {
    private static final String REPO = "org/model";
    private static final String COMMIT = "0123456789abcdef0123456789abcdef01234567";
    private static final String TOKEN = "hf_secret_for_tests";

    /** A file the fake hub serves: small ones directly, "lfs" ones by redirect to storage. */
    private record HubFile(byte[] content, boolean lfs) {}

    @TempDir
    Path tmp;

    private HttpServer hub;
    private HttpServer storage;
    private final AtomicInteger hubRequests = new AtomicInteger();
    private final AtomicInteger storageRequests = new AtomicInteger();
    private final List<String> hubAuthorizations = Collections.synchronizedList(new ArrayList<>());
    private final List<String> storageAuthorizations = Collections.synchronizedList(new ArrayList<>());
    private final Map<String, HubFile> files = new LinkedHashMap<>();
    private final Map<String, byte[]> storageBlobs = new HashMap<>();

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String sha256(byte[] content) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The hub's etag of a small (non-LFS) file: the git object id of the blob. */
    static String smallEtag(byte[] content) {
        try {
            MessageDigest sha1 = MessageDigest.getInstance("SHA-1");
            sha1.update(("blob " + content.length + "\0").getBytes(StandardCharsets.US_ASCII));
            return HexFormat.of().formatHex(sha1.digest(content));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Released when a test ends: what a stalling reply of the fake hub waits for. */
    private final CountDownLatch testOver = new CountDownLatch(1);

    @BeforeEach
    void startServers() throws IOException {
        byte[] weights = new byte[3 * 1024 * 1024 + 17];
        for (int i = 0; i < weights.length; i++) {
            weights[i] = (byte) (i * 31 + 7);
        }
        files.put("config.json", new HubFile(bytes("{\"model_type\": \"qwen2\"}"), false));
        files.put("tokenizer.json", new HubFile(bytes("{\"version\": \"1.0\"}"), false));
        files.put("tokenizer_config.json", new HubFile(bytes("{\"chat_template\": \"\"}"), false));
        files.put("model.safetensors", new HubFile(weights, true));
        files.put("onnx/model.onnx", new HubFile(bytes("onnx bytes"), true));

        storage = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        storage.createContext("/", this::serveStorage);
        storage.start();
        hub = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        hub.createContext("/", this::serveHub);
        hub.start();
    }

    @AfterEach
    void stopServers() {
        testOver.countDown();
        hub.stop(0);
        storage.stop(0);
    }

    private String hubUrl() {
        return "http://127.0.0.1:" + hub.getAddress().getPort();
    }

    private String storageUrl() {
        return "http://127.0.0.1:" + storage.getAddress().getPort();
    }

    private Map<String, String> env(String... extra) {
        Map<String, String> env = new HashMap<>();
        env.put("HF_HUB_CACHE", tmp.resolve("hub-cache").toString());
        env.put("HF_ENDPOINT", hubUrl());
        env.put("HF_HUB_DOWNLOAD_TIMEOUT", "20");
        env.put("COMLRL_ALLOW_HTTP_ENDPOINT", "1"); // the test servers speak plain http on 127.0.0.1
        for (int i = 0; i < extra.length; i += 2) {
            env.put(extra[i], extra[i + 1]);
        }
        return env;
    }

    private Path repoFolder() {
        return tmp.resolve("hub-cache").resolve("models--org--model");
    }

    // ------------------------------------------------------------------ the fake servers

    private void serveHub(HttpExchange exchange) throws IOException {
        hubRequests.incrementAndGet();
        hubAuthorizations.add(String.valueOf(exchange.getRequestHeaders().getFirst("Authorization")));
        try (exchange) {
            String[] parts = exchange.getRequestURI().getRawPath().split("/", 6);
            // "", org, name, "resolve", revision, file
            if (parts.length < 6 || !parts[3].equals("resolve")) {
                send(exchange, 400, Map.of(), bytes("bad path"));
                return;
            }
            String repo = parts[1] + "/" + parts[2];
            String revision = java.net.URLDecoder.decode(parts[4], StandardCharsets.UTF_8);
            String file = java.net.URLDecoder.decode(parts[5], StandardCharsets.UTF_8);
            switch (repo) {
                case "org/renamed" -> {
                    send(exchange, 307, Map.of("Location", "/org/model/resolve/" + parts[4] + "/" + parts[5]), new byte[0]);
                    return;
                }
                case "org/private" -> {
                    if (!("Bearer " + TOKEN).equals(exchange.getRequestHeaders().getFirst("Authorization"))) {
                        send(exchange, 401, Map.of(), bytes("Invalid credentials"));
                        return;
                    }
                }
                case "org/plain404" -> {
                    send(exchange, 404, Map.of(), bytes("Not Found"));
                    return;
                }
                case "org/model" -> { }
                default -> {
                    send(exchange, 404, Map.of("X-Error-Code", "RepoNotFound",
                            "X-Error-Message", "Repository not found"), bytes("Repository not found"));
                    return;
                }
            }
            if (!revision.equals("main") && !revision.equals(COMMIT)) {
                send(exchange, 404, Map.of("X-Error-Code", "RevisionNotFound"), bytes("Invalid rev id"));
                return;
            }
            if (file.equals("broken.bin")) {
                // announce 1000 bytes, send 100, then drop the connection
                exchange.getResponseHeaders().add("X-Repo-Commit", COMMIT);
                exchange.getResponseHeaders().add("ETag", "\"brokenetag0000000000000000000000000000000\"");
                exchange.sendResponseHeaders(200, 1000);
                OutputStream out = exchange.getResponseBody();
                out.write(new byte[100]);
                out.flush();
                return; // closing the exchange with bytes missing closes the connection
            }
            if (file.equals("stalled.bin")) {
                // announce 1000 bytes, send 100, then nothing until the test is over
                exchange.getResponseHeaders().add("X-Repo-Commit", COMMIT);
                exchange.getResponseHeaders().add("ETag", "\"" + smallEtag(new byte[1000]) + "\"");
                exchange.sendResponseHeaders(200, 1000);
                OutputStream out = exchange.getResponseBody();
                out.write(new byte[100]);
                out.flush();
                awaitTestOver();
                return;
            }
            if (file.equals("truncated.json") || file.equals("nohash.json")) {
                // chunked, so no Content-Length; the body ends cleanly after half the file
                byte[] whole = bytes("{\"vocab\": {\"a\": 1, \"b\": 2, \"c\": 3}}");
                exchange.getResponseHeaders().add("X-Repo-Commit", COMMIT);
                exchange.getResponseHeaders().add("ETag", file.equals("nohash.json") ? "\"not-a-hash\""
                        : "\"" + smallEtag(whole) + "\"");
                exchange.sendResponseHeaders(200, 0);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(whole, 0, whole.length / 2);
                }
                return;
            }
            if (file.equals("evil.json")) {
                // a commit "hash" that walks out of the cache to a file of the victim's
                send(exchange, 200, Map.of("X-Repo-Commit", "../../../victim", "ETag", "\"" + smallEtag(bytes("x")) + "\""),
                        bytes("x"));
                return;
            }
            if (file.equals("othercommit.json")) {
                send(exchange, 200, Map.of("X-Repo-Commit", "f".repeat(40), "ETag", "\"" + smallEtag(bytes("y")) + "\""),
                        bytes("y"));
                return;
            }
            if (file.equals("dotdot.json")) {
                send(exchange, 200, Map.of("X-Repo-Commit", COMMIT, "ETag", "\"..\""), bytes("dots"));
                return;
            }
            if (file.equals("badsize.bin")) {
                send(exchange, 200, Map.of("X-Repo-Commit", COMMIT, "X-Linked-Size", "12abc",
                        "X-Linked-Etag", "\"" + sha256(bytes("z")) + "\""), bytes("z"));
                return;
            }
            if (file.equals("corrupt.bin")) {
                byte[] served = bytes("these are not the announced bytes");
                storageBlobs.put("corrupt", served);
                send(exchange, 302, Map.of("Location", storageUrl() + "/blobs/corrupt",
                        "X-Repo-Commit", COMMIT,
                        "X-Linked-Etag", "\"" + sha256(bytes("the announced bytes")) + "\"",
                        "X-Linked-Size", String.valueOf(served.length)), new byte[0]);
                return;
            }
            HubFile hubFile = files.get(file);
            if (hubFile == null) {
                send(exchange, 404, Map.of("X-Error-Code", "EntryNotFound", "X-Repo-Commit", COMMIT,
                        "X-Error-Message", "Entry not found"), bytes("Entry not found"));
                return;
            }
            if (hubFile.lfs()) {
                String sha = sha256(hubFile.content());
                storageBlobs.put(sha, hubFile.content());
                send(exchange, 302, Map.of("Location", storageUrl() + "/blobs/" + sha + "?signature=x",
                        "X-Repo-Commit", COMMIT,
                        "X-Linked-Etag", "\"" + sha + "\"",
                        "X-Linked-Size", String.valueOf(hubFile.content().length),
                        "ETag", "W/\"redirect-etag\""), new byte[0]);
                return;
            }
            send(exchange, 200, Map.of("X-Repo-Commit", COMMIT, "ETag", "\"" + smallEtag(hubFile.content()) + "\""),
                    hubFile.content());
        } catch (IOException e) {
            // the broken download ends here on purpose
        }
    }

    private void awaitTestOver() {
        try {
            testOver.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void serveStorage(HttpExchange exchange) throws IOException {
        storageRequests.incrementAndGet();
        storageAuthorizations.add(String.valueOf(exchange.getRequestHeaders().getFirst("Authorization")));
        try (exchange) {
            String name = exchange.getRequestURI().getPath().substring("/blobs/".length());
            byte[] content = storageBlobs.get(name);
            if (content == null) {
                send(exchange, 404, Map.of(), bytes("no such blob"));
                return;
            }
            send(exchange, 200, Map.of("ETag", "\"storage-etag-" + name.hashCode() + "\""), content);
        }
    }

    // ------------------------------------------------------------------ tests

    @Test
    void downloadsIntoTheHuggingFaceLayoutAndThenMakesNoRequest() throws IOException {
        List<String> progress = Collections.synchronizedList(new ArrayList<>());
        HubCache cache = HubCache.of(env())
                .withProgress((repo, file, done, total) -> progress.add(file + ":" + done + "/" + total));
        List<String> required = List.of("config.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors");
        List<String> optional = List.of("generation_config.json", "special_tokens_map.json", "onnx/model.onnx");

        Path dir = cache.resolve(REPO, required, optional);

        Path folder = repoFolder();
        assertThat(dir).isEqualTo(folder.resolve("snapshots").resolve(COMMIT));
        assertThat(Files.readString(folder.resolve("refs/main"))).isEqualTo(COMMIT);
        for (String name : List.of("config.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors",
                "onnx/model.onnx")) {
            HubFile expected = files.get(name);
            Path link = dir.resolve(name);
            assertThat(Files.isSymbolicLink(link)).as(name).isTrue();
            String etag = expected.lfs() ? sha256(expected.content()) : smallEtag(expected.content());
            Path relative = Files.readSymbolicLink(link);
            assertThat(relative.isAbsolute()).isFalse();
            assertThat(link.getParent().resolve(relative).normalize()).isEqualTo(folder.resolve("blobs").resolve(etag));
            assertThat(Files.readAllBytes(link)).isEqualTo(expected.content());
        }
        assertThat(Files.readSymbolicLink(dir.resolve("config.json")).toString())
                .isEqualTo("../../blobs/" + smallEtag(files.get("config.json").content()));
        assertThat(Files.readSymbolicLink(dir.resolve("onnx/model.onnx")).toString())
                .startsWith("../../../blobs/");
        // optional files the hub lacks are remembered as absent
        assertThat(dir.resolve("generation_config.json")).doesNotExist();
        assertThat(folder.resolve(".no_exist").resolve(COMMIT).resolve("generation_config.json")).exists();
        // the large file went through storage, without the token (none set here) and with progress reports
        assertThat(storageRequests.get()).isEqualTo(2);
        assertThat(progress).contains("model.safetensors:0/" + files.get("model.safetensors").content().length,
                "model.safetensors:" + files.get("model.safetensors").content().length + "/"
                        + files.get("model.safetensors").content().length);
        assertThat(progress.stream().filter(p -> p.startsWith("model.safetensors:")).count()).isGreaterThan(3);
        assertNoPartialFiles();

        int hubBefore = hubRequests.get();
        int storageBefore = storageRequests.get();
        Path again = HubCache.of(env()).resolve(REPO, required, optional);
        assertThat(again).isEqualTo(dir);
        assertThat(hubRequests.get()).isEqualTo(hubBefore);
        assertThat(storageRequests.get()).isEqualTo(storageBefore);
        // a missing required file that the hub reported absent fails without a request
        assertThatThrownBy(() -> HubCache.of(env()).resolve(REPO, List.of("generation_config.json"), List.of()))
                .isInstanceOf(HubException.class)
                .hasMessageContaining("generation_config.json");
        assertThat(hubRequests.get()).isEqualTo(hubBefore);
        // and the cache now works offline
        assertThat(HubCache.of(env("HF_HUB_OFFLINE", "1")).resolve(REPO, required, optional)).isEqualTo(dir);
    }

    @Test
    void fetchesShardsListedInAnIndexOneByOne() throws IOException {
        files.remove("model.safetensors");
        files.put("model.safetensors.index.json", new HubFile(bytes("{\"weight_map\": {"
                + "\"a\": \"model-00001-of-00002.safetensors\", \"b\": \"model-00002-of-00002.safetensors\"}}"), false));
        files.put("model-00001-of-00002.safetensors", new HubFile(bytes("shard one"), true));
        files.put("model-00002-of-00002.safetensors", new HubFile(bytes("shard two"), true));

        HubRepo repo = HubCache.of(env()).repo(REPO);
        assertThat(repo.file("model.safetensors", false)).isNull();
        Path index = repo.file("model.safetensors.index.json", true);
        assertThat(Files.readString(index)).contains("weight_map");
        for (String shard : List.of("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")) {
            assertThat(repo.file(shard, true).getParent()).isEqualTo(repo.directory());
        }
        assertThat(Files.readString(repo.directory().resolve("model-00002-of-00002.safetensors"))).isEqualTo("shard two");
        assertThat(repo.commit()).hasValue(COMMIT);
    }

    @Test
    void laterFilesAreRequestedAtTheResolvedCommit() throws IOException {
        List<String> paths = Collections.synchronizedList(new ArrayList<>());
        HttpServer recorder = hub;
        recorder.removeContext("/");
        recorder.createContext("/", exchange -> {
            paths.add(exchange.getRequestURI().getRawPath());
            serveHub(exchange);
        });
        HubRepo repo = HubCache.of(env()).repo(REPO);
        repo.file("config.json", true);
        repo.file("tokenizer.json", true);
        assertThat(paths).containsExactly("/org/model/resolve/main/config.json",
                "/org/model/resolve/" + COMMIT + "/tokenizer.json");
    }

    @Test
    void followsRelativeRedirectsOfRenamedRepositories() throws IOException {
        Path config = HubCache.of(env()).repo("org/renamed").file("config.json", true);
        assertThat(Files.readString(config)).contains("qwen2");
        assertThat(config.getParent()).isEqualTo(tmp.resolve("hub-cache/models--org--renamed/snapshots").resolve(COMMIT));
    }

    @Test
    void unauthorizedMentionsTheTokenAndTheTokenIsSentOnlyToTheHub() throws IOException {
        files.put("model.safetensors", new HubFile(bytes("private weights"), true));
        assertThatThrownBy(() -> HubCache.of(env()).resolve("org/private", List.of("config.json"), List.of()))
                .isInstanceOf(HubException.class)
                .satisfies(e -> assertThat(((HubException) e).kind()).isEqualTo(HubException.Kind.UNAUTHORIZED))
                .hasMessageContaining("HTTP 401")
                .hasMessageContaining("org/private")
                .hasMessageContaining("config.json")
                .hasMessageContaining("HF_TOKEN");

        Path dir = HubCache.of(env("HF_TOKEN", TOKEN))
                .resolve("org/private", List.of("config.json", "model.safetensors"), List.of());
        assertThat(Files.readString(dir.resolve("model.safetensors"))).isEqualTo("private weights");
        assertThat(hubAuthorizations).contains("Bearer " + TOKEN);
        assertThat(storageAuthorizations).isNotEmpty().allMatch(a -> a.equals("null"));
    }

    @Test
    void notFoundErrorsNameRepositoryAndFile() {
        HubCache cache = HubCache.of(env());
        assertThatThrownBy(() -> cache.resolve("org/missing", List.of("config.json"), List.of()))
                .isInstanceOf(HubException.class)
                .satisfies(e -> assertThat(((HubException) e).kind()).isEqualTo(HubException.Kind.REPO_NOT_FOUND))
                .hasMessageContaining("org/missing")
                .hasMessageContaining("not found");
        assertThatThrownBy(() -> cache.resolve(REPO, List.of("weights.bin"), List.of()))
                .satisfies(e -> assertThat(((HubException) e).kind()).isEqualTo(HubException.Kind.FILE_NOT_FOUND))
                .hasMessageContaining("org/model")
                .hasMessageContaining("weights.bin");
        assertThatThrownBy(() -> cache.resolve("org/plain404", List.of("config.json"), List.of()))
                .hasMessageContaining("org/plain404")
                .hasMessageContaining("config.json")
                .hasMessageContaining("repository or file not found");
        assertThatThrownBy(() -> cache.resolve(REPO, "v9", List.of("config.json"), List.of()))
                .satisfies(e -> assertThat(((HubException) e).kind()).isEqualTo(HubException.Kind.REVISION_NOT_FOUND))
                .hasMessageContaining("v9");
    }

    @Test
    void interruptedDownloadLeavesNoPartialFile() throws IOException {
        HubRepo repo = HubCache.of(env()).repo(REPO);
        repo.file("config.json", true);
        assertThatThrownBy(() -> repo.file("broken.bin", true))
                .isInstanceOf(HubException.class)
                .satisfies(e -> assertThat(((HubException) e).kind()).isEqualTo(HubException.Kind.NETWORK))
                .hasMessageContaining("broken.bin")
                .hasMessageContaining("broke off after 100 of 1000 bytes");
        assertThat(repoFolder().resolve("snapshots").resolve(COMMIT).resolve("broken.bin")).doesNotExist();
        try (Stream<Path> blobs = Files.list(repoFolder().resolve("blobs"))) {
            assertThat(blobs.map(p -> p.getFileName().toString()).collect(Collectors.toList()))
                    .containsExactly(smallEtag(files.get("config.json").content()));
        }
        assertNoPartialFiles();
    }

    @Test
    void corruptDownloadIsRejected() throws IOException {
        assertThatThrownBy(() -> HubCache.of(env()).repo(REPO).file("corrupt.bin", true))
                .isInstanceOf(HubException.class)
                .hasMessageContaining("corrupt")
                .hasMessageContaining("SHA-256");
        assertThat(repoFolder().resolve("blobs")).satisfiesAnyOf(
                p -> assertThat(p).doesNotExist(),
                p -> assertThat(p).isEmptyDirectory());
        assertNoPartialFiles();
    }

    @Test
    void unreachableEndpointNamesItAndTheCause() {
        HubCache cache = HubCache.of(env("HF_ENDPOINT", "http://127.0.0.1:1"));
        assertThatThrownBy(() -> cache.resolve(REPO, List.of("config.json"), List.of()))
                .isInstanceOf(HubException.class)
                .satisfies(e -> assertThat(((HubException) e).kind()).isEqualTo(HubException.Kind.NETWORK))
                .hasMessageContaining("http://127.0.0.1:1")
                .hasMessageContaining("ConnectException")
                .hasMessageContaining("HF_HUB_OFFLINE");
    }

    @Test
    void fallsBackToCopiesWithoutSymlinks() throws IOException {
        HubCache cache = HubCache.of(env()).withoutSymlinks();
        Path dir = cache.resolve(REPO, List.of("config.json", "model.safetensors"), List.of());
        for (String name : List.of("config.json", "model.safetensors")) {
            Path file = dir.resolve(name);
            assertThat(Files.isSymbolicLink(file)).isFalse();
            assertThat(Files.isRegularFile(file)).isTrue();
            assertThat(Files.readAllBytes(file)).isEqualTo(files.get(name).content());
        }
        assertThat(repoFolder().resolve("blobs").resolve(sha256(files.get("model.safetensors").content()))).exists();
        assertNoPartialFiles();
        int before = hubRequests.get();
        assertThat(HubCache.of(env()).resolve(REPO, List.of("config.json", "model.safetensors"), List.of())).isEqualTo(dir);
        assertThat(hubRequests.get()).isEqualTo(before);
    }

    @Test
    void rejectsAClientThatFollowsRedirects() {
        assertThatThrownBy(() -> HubCache.of(env()).withHttpClient(java.net.http.HttpClient.newBuilder()
                .followRedirects(java.net.http.HttpClient.Redirect.NORMAL).build()))
                .hasMessageContaining("Redirect.NEVER");
    }

    /** Neither blobs/ nor snapshots/ nor the temporary folder holds a partial download. */
    private void assertNoPartialFiles() throws IOException {
        if (!Files.exists(tmp.resolve("hub-cache"))) {
            return; // nothing was written at all
        }
        Path incomplete = tmp.resolve("hub-cache/.incomplete");
        if (Files.exists(incomplete)) {
            try (Stream<Path> walk = Files.walk(incomplete)) {
                assertThat(walk.filter(Files::isRegularFile).collect(Collectors.toList())).isEmpty();
            }
        }
        try (Stream<Path> walk = Files.walk(tmp.resolve("hub-cache"))) {
            assertThat(walk.filter(p -> !Files.isDirectory(p)).map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith(".part") || n.endsWith(".tmp") || n.endsWith(".incomplete"))
                    .collect(Collectors.toList())).isEmpty();
        }
    }

    @Test
    void aCommitHeaderCannotNameAPathOutsideTheCache() throws IOException {
        Path victim = Files.createDirectories(tmp.resolve("victim"));
        Files.writeString(victim.resolve("evil.json"), "precious");
        assertThatThrownBy(() -> HubCache.of(env()).repo(REPO).file("evil.json", true))
                .isInstanceOf(HubException.class)
                .satisfies(e -> assertThat(((HubException) e).kind()).isEqualTo(HubException.Kind.PROTOCOL))
                .hasMessageContaining("X-Repo-Commit '../../../victim'")
                .hasMessageContaining("not a commit hash");
        assertThat(Files.isSymbolicLink(victim.resolve("evil.json"))).isFalse();
        assertThat(Files.readString(victim.resolve("evil.json"))).isEqualTo("precious");
        assertThat(repoFolder().resolve("blobs")).doesNotExist();
        assertNoPartialFiles();
    }

    @Test
    void theAnswerMustBeAtTheRequestedCommit() {
        assertThatThrownBy(() -> HubCache.of(env()).repo(REPO, COMMIT).file("othercommit.json", true))
                .isInstanceOf(HubException.class)
                .hasMessageContaining("at commit " + COMMIT)
                .hasMessageContaining("with commit " + "f".repeat(40));
        assertThat(repoFolder().resolve("snapshots").resolve("f".repeat(40))).doesNotExist();
    }

    @Test
    void anEtagThatIsNoHashNeverBecomesAPath() throws IOException {
        Path file = HubCache.of(env()).repo(REPO).file("dotdot.json", true);
        assertThat(Files.readString(file)).isEqualTo("dots");
        assertThat(repoFolder().resolve("blobs").resolve(sha256(bytes("dots")))).exists();
        assertNoPartialFiles();
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aStalledDownloadFailsAfterTheTimeoutAndStoresNothing() throws IOException {
        HubCache.of(env()).repo(REPO).file("config.json", true); // loads the HTTP classes under the long timeout
        HubRepo repo = HubCache.of(env("HF_HUB_DOWNLOAD_TIMEOUT", "2")).repo(REPO);
        long start = System.nanoTime();
        assertThatThrownBy(() -> repo.file("stalled.bin", true))
                .isInstanceOf(HubException.class)
                .satisfies(e -> assertThat(((HubException) e).kind()).isEqualTo(HubException.Kind.NETWORK))
                .hasMessageContaining("stalled.bin")
                .hasMessageContaining("broke off after 100 of 1000 bytes")
                .hasMessageContaining("no data for 2 s")
                .hasMessageContaining("HF_HUB_DOWNLOAD_TIMEOUT");
        assertThat((System.nanoTime() - start) / 1e9).isLessThan(2 + 5.0); // the limit, and slack for a slow machine
        assertThat(repoFolder().resolve("snapshots").resolve(COMMIT).resolve("stalled.bin")).doesNotExist();
        assertNoPartialFiles();
    }

    @Test
    void aFileCutShortWithoutAContentLengthFailsItsGitHashAndIsNotKept() throws IOException {
        HubRepo repo = HubCache.of(env()).repo(REPO);
        assertThatThrownBy(() -> repo.file("truncated.json", true))
                .isInstanceOf(HubException.class)
                .satisfies(e -> assertThat(((HubException) e).kind()).isEqualTo(HubException.Kind.NETWORK))
                .hasMessageContaining("truncated.json")
                .hasMessageContaining("git SHA-1")
                .hasMessageContaining("nothing was stored");
        assertThat(repoFolder().resolve("snapshots").resolve(COMMIT).resolve("truncated.json")).doesNotExist();
        assertThat(repoFolder().resolve("blobs")).satisfiesAnyOf(
                p -> assertThat(p).doesNotExist(),
                p -> assertThat(p).isEmptyDirectory());
        assertNoPartialFiles();
        // without a size or a hash, completeness cannot be checked at all
        assertThatThrownBy(() -> repo.file("nohash.json", true))
                .isInstanceOf(HubException.class)
                .hasMessageContaining("nohash.json")
                .hasMessageContaining("neither its size")
                .hasMessageContaining("nor its hash");
        assertNoPartialFiles();
    }

    @Test
    void aDamagedCachedFileIsDownloadedAgainAndOfflineItIsAnError() throws IOException {
        List<String> names = List.of("config.json", "model.safetensors");
        Path dir = HubCache.of(env()).resolve(REPO, names, List.of());
        for (String name : names) {
            // what an older version kept of a transfer cut short: the first bytes, under the full file's hash
            Path blob = dir.resolve(name).toRealPath();
            Files.write(blob, java.util.Arrays.copyOf(files.get(name).content(), 5));
        }
        assertThatThrownBy(() -> HubCache.of(env("HF_HUB_OFFLINE", "1")).resolve(REPO, List.of("config.json"), List.of()))
                .isInstanceOf(HubException.class)
                .satisfies(e -> assertThat(((HubException) e).kind()).isEqualTo(HubException.Kind.IO))
                .hasMessageContaining("config.json")
                .hasMessageContaining("is damaged")
                .hasMessageContaining("Unset HF_HUB_OFFLINE");

        int hubBefore = hubRequests.get();
        assertThat(HubCache.of(env()).resolve(REPO, names, List.of())).isEqualTo(dir);
        for (String name : names) {
            assertThat(Files.readAllBytes(dir.resolve(name))).as(name).isEqualTo(files.get(name).content());
        }
        assertThat(hubRequests.get()).isEqualTo(hubBefore + 2);
        // whole again, so used without a request
        HubCache.of(env()).resolve(REPO, names, List.of());
        assertThat(hubRequests.get()).isEqualTo(hubBefore + 2);
    }

    @Test
    void malformedOrContradictorySizesAreRefused() throws IOException {
        assertThatThrownBy(() -> HubCache.of(env()).repo(REPO).file("badsize.bin", true))
                .isInstanceOf(HubException.class)
                .hasMessageContaining("X-Linked-Size '12abc'")
                .hasMessageContaining("not a size in bytes");
        assertNoPartialFiles();
    }
}
