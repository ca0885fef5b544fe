package comlrl.model.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Environment handling and resolution from a pre-made cache, without any network. */
class HubCacheTest {
    private static final String COMMIT = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678";

    @TempDir
    Path tmp;

    private static Map<String, String> env(String... pairs) {
        Map<String, String> env = new HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            env.put(pairs[i], pairs[i + 1]);
        }
        return env;
    }

    @Test
    void cacheRootFollowsTheHuggingFaceOrderOfVariables() {
        Path home = tmp.resolve("home");
        assertThat(HubCache.of(env("HOME", home.toString())).cacheDir())
                .isEqualTo(home.resolve(".cache/huggingface/hub").toAbsolutePath());
        assertThat(HubCache.of(env("HOME", home.toString(), "XDG_CACHE_HOME", tmp.resolve("xdg").toString())).cacheDir())
                .isEqualTo(tmp.resolve("xdg/huggingface/hub"));
        assertThat(HubCache.of(env("HF_HOME", tmp.resolve("hf").toString(),
                "XDG_CACHE_HOME", tmp.resolve("xdg").toString())).cacheDir())
                .isEqualTo(tmp.resolve("hf/hub"));
        assertThat(HubCache.of(env("HF_HUB_CACHE", tmp.resolve("direct").toString(),
                "HF_HOME", tmp.resolve("hf").toString())).cacheDir())
                .isEqualTo(tmp.resolve("direct"));
        assertThat(HubCache.of(env("HOME", home.toString(), "HF_HOME", "~/hfhome")).cacheDir())
                .isEqualTo(home.resolve("hfhome/hub").toAbsolutePath());
    }

    @Test
    void offlineAcceptsTheHuggingFaceTruthyValues() {
        for (String yes : List.of("1", "true", "TRUE", "yes", "On", " on ")) {
            assertThat(HubCache.of(env("HF_HUB_OFFLINE", yes)).offline()).as(yes).isTrue();
        }
        for (String no : List.of("0", "false", "no", "off", "", "2")) {
            assertThat(HubCache.of(env("HF_HUB_OFFLINE", no)).offline()).as(no).isFalse();
        }
        assertThat(HubCache.of(env()).offline()).isFalse();
        assertThat(HubCache.of(env("TRANSFORMERS_OFFLINE", "1")).offline()).isTrue();
    }

    @Test
    void endpointAndTokenSettings() throws IOException {
        HubCache defaults = HubCache.of(env("HOME", tmp.toString()));
        assertThat(defaults.endpoint()).isEqualTo("https://huggingface.co");
        assertThat(defaults.hasToken()).isFalse();
        assertThat(HubCache.of(env("HF_ENDPOINT", "http://127.0.0.1:9/mirror/", "COMLRL_ALLOW_HTTP_ENDPOINT", "1")).endpoint())
                .isEqualTo("http://127.0.0.1:9/mirror");
        assertThatThrownBy(() -> HubCache.of(env("HF_ENDPOINT", "ftp://x")))
                .hasMessageContaining("HF_ENDPOINT=ftp://x");
        assertThat(HubCache.of(env("HF_TOKEN", "hf_x")).hasToken()).isTrue();
        Path hfHome = Files.createDirectories(tmp.resolve("hf"));
        Files.writeString(hfHome.resolve("token"), "hf_from_file\n");
        assertThat(HubCache.of(env("HF_HOME", hfHome.toString())).hasToken()).isTrue();
        assertThatThrownBy(() -> HubCache.of(env("HF_HUB_DOWNLOAD_TIMEOUT", "soon")))
                .hasMessageContaining("HF_HUB_DOWNLOAD_TIMEOUT=soon");
    }

    @Test
    void repoFolderUsesTheHubNaming() {
        HubCache hub = HubCache.of(env("HF_HUB_CACHE", tmp.toString()));
        assertThat(hub.repoFolder("Qwen/Qwen2.5-0.5B")).isEqualTo(tmp.resolve("models--Qwen--Qwen2.5-0.5B"));
        assertThat(hub.repoFolder("gpt2")).isEqualTo(tmp.resolve("models--gpt2"));
    }

    /** A cache as huggingface_hub leaves it: refs/main, blobs, relative symlinks in the snapshot. */
    private Path premadeCache(String... files) throws IOException {
        Path cache = tmp.resolve("hub");
        Path repo = cache.resolve("models--Qwen--Qwen2.5-0.5B");
        Files.createDirectories(repo.resolve("refs"));
        Files.writeString(repo.resolve("refs/main"), COMMIT);
        Path snapshot = Files.createDirectories(repo.resolve("snapshots").resolve(COMMIT));
        Files.createDirectories(repo.resolve("blobs"));
        int i = 0;
        for (String file : files) {
            Path blob = repo.resolve("blobs").resolve("etag" + i++);
            Files.writeString(blob, "content of " + file);
            Path link = snapshot.resolve(file);
            Files.createDirectories(link.getParent());
            Files.createSymbolicLink(link, link.getParent().relativize(blob));
        }
        return cache;
    }

    @Test
    void resolvesFromAPremadeCacheWithoutNetwork() throws IOException {
        Path cache = premadeCache("config.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors");
        // offline, and an endpoint nothing listens on: any request would fail
        for (String offline : List.of("1", "0")) {
            HubCache hub = HubCache.of(env("HF_HUB_CACHE", cache.toString(), "HF_HUB_OFFLINE", offline,
                    "HF_ENDPOINT", "http://127.0.0.1:9", "COMLRL_ALLOW_HTTP_ENDPOINT", "1"));
            Path dir = hub.resolve("Qwen/Qwen2.5-0.5B",
                    List.of("config.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors"),
                    offline.equals("1") ? List.of("generation_config.json") : List.of());
            assertThat(dir).isEqualTo(cache.resolve("models--Qwen--Qwen2.5-0.5B/snapshots").resolve(COMMIT));
            assertThat(Files.readString(dir.resolve("config.json"))).isEqualTo("content of config.json");
        }
        HubCache hub = HubCache.of(env("HF_HUB_CACHE", cache.toString(), "HF_HUB_OFFLINE", "1"));
        HubRepo repo = hub.repo("Qwen/Qwen2.5-0.5B");
        assertThat(repo.commit()).hasValue(COMMIT);
        assertThat(repo.file("generation_config.json", false)).isNull();
        assertThat(repo.findFile("config.json")).isPresent();
        // a commit hash as revision needs no ref
        assertThat(hub.repo("Qwen/Qwen2.5-0.5B", COMMIT).file("config.json", true))
                .isEqualTo(cache.resolve("models--Qwen--Qwen2.5-0.5B/snapshots").resolve(COMMIT).resolve("config.json"));
        assertThat(hub.repo("Qwen/Qwen2.5-0.5B@" + COMMIT).commit()).hasValue(COMMIT);
    }

    @Test
    void offlineAndNotCachedNamesRepoFileCacheAndVariable() throws IOException {
        Path cache = premadeCache("config.json");
        HubCache hub = HubCache.of(env("HF_HUB_CACHE", cache.toString(), "HF_HUB_OFFLINE", "yes"));
        assertThatThrownBy(() -> hub.resolve("Qwen/Qwen2.5-0.5B", List.of("config.json", "model.safetensors"), List.of()))
                .isInstanceOf(HubException.class)
                .satisfies(e -> assertThat(((HubException) e).kind()).isEqualTo(HubException.Kind.NOT_CACHED_OFFLINE))
                .hasMessageContaining("Qwen/Qwen2.5-0.5B")
                .hasMessageContaining("model.safetensors")
                .hasMessageContaining(cache.toString())
                .hasMessageContaining("HF_HUB_OFFLINE");
        // a model never downloaded at all
        assertThatThrownBy(() -> hub.resolve("meta-llama/Llama-3.2-1B", List.of("config.json"), List.of()))
                .hasMessageContaining("meta-llama/Llama-3.2-1B")
                .hasMessageContaining("config.json")
                .hasMessageContaining("HF_HUB_OFFLINE");
        assertThatThrownBy(() -> hub.repo("meta-llama/Llama-3.2-1B").directory())
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void localDirectoryAlwaysWins() throws IOException {
        Path model = Files.createDirectories(tmp.resolve("my-model"));
        Files.writeString(model.resolve("config.json"), "{}");
        HubCache hub = HubCache.of(env("HF_HUB_CACHE", tmp.resolve("hub").toString(), "HF_HUB_OFFLINE", "1"));
        assertThat(hub.resolve(model.toString(), List.of("config.json"), List.of("generation_config.json")))
                .isEqualTo(model.toAbsolutePath());
        HubRepo repo = hub.repo(model.toString());
        assertThat(repo.isLocal()).isTrue();
        assertThat(repo.file("generation_config.json", false)).isNull();
        assertThatThrownBy(() -> repo.file("model.safetensors", true))
                .isInstanceOf(HubException.class)
                .hasMessageContaining(model.toString())
                .hasMessageContaining("model.safetensors");
    }

    @Test
    void invalidIdsAndFilenamesAreRejected() {
        HubCache hub = HubCache.of(env("HF_HUB_CACHE", tmp.toString(), "HF_HUB_OFFLINE", "1"));
        for (String bad : List.of("./no/such/dir", "/abs/missing", "a/b/c", "org--x/y", "x/../y", "has space/x", "-x/y")) {
            assertThatThrownBy(() -> hub.repo(bad)).as(bad)
                    .isInstanceOf(HubException.class)
                    .hasMessageContaining("neither an existing directory")
                    .hasMessageContaining("nor a valid Hugging Face model id");
        }
        HubRepo repo = hub.repo("org/model");
        for (String bad : List.of("../x", "/etc/passwd", "a/../../b", "", "dir/")) {
            assertThatThrownBy(() -> repo.file(bad, false)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
        assertThatThrownBy(() -> hub.repo("org/model", "../main")).hasMessageContaining("revision '../main'");
    }

    @Test
    void encodesUrlSegments() {
        assertThat(HubDownload.encodeSegment("refs/pr/1")).isEqualTo("refs%2Fpr%2F1");
        assertThat(HubDownload.encodePath("onnx/model file.onnx")).isEqualTo("onnx/model%20file.onnx");
        assertThat(HubDownload.normalizeEtag("W/\"abc\"")).isEqualTo("abc");
        assertThat(HubDownload.normalizeEtag("\"abc\"")).isEqualTo("abc");
        assertThat(HubDownload.normalizeEtag("abc")).isEqualTo("abc");
        assertThat(HubDownload.normalizeEtag("\"\"")).isNull();
    }

    @Test
    void readsTokenOnlyWhenPresent() throws IOException {
        Path hfHome = Files.createDirectories(tmp.resolve("empty-home"));
        Files.writeString(hfHome.resolve("token"), "   \n", StandardCharsets.UTF_8);
        assertThat(HubCache.of(env("HF_HOME", hfHome.toString())).hasToken()).isFalse();
    }

    @Test
    void aPlainHttpEndpointNeedsTheAllowVariable() {
        assertThatThrownBy(() -> HubCache.of(env("HF_ENDPOINT", "http://mirror.example:8080")))
                .isInstanceOf(HubException.class)
                .hasMessageContaining("HF_ENDPOINT=http://mirror.example:8080 is plain http")
                .hasMessageContaining("COMLRL_ALLOW_HTTP_ENDPOINT=1");
        assertThat(HubCache.of(env("HF_ENDPOINT", "http://mirror.example:8080", "COMLRL_ALLOW_HTTP_ENDPOINT", "1"))
                .endpoint()).isEqualTo("http://mirror.example:8080");
        System.setProperty(HubCache.ALLOW_HTTP_PROPERTY, "true");
        try {
            assertThat(HubCache.of(env("HF_ENDPOINT", "http://mirror.example:8080")).endpoint())
                    .isEqualTo("http://mirror.example:8080");
        } finally {
            System.clearProperty(HubCache.ALLOW_HTTP_PROPERTY);
        }
        assertThatThrownBy(() -> HubCache.of(env("HF_ENDPOINT", "https://hub.example/?x=1")))
                .hasMessageContaining("not a valid URL");
    }

    @Test
    void theTokenNeverTravelsInClearToAnotherMachine() {
        java.net.URI mirror = java.net.URI.create("http://10.0.0.5:8080/org/model/resolve/main/config.json");
        HubCache lan = HubCache.of(env("HF_ENDPOINT", "http://10.0.0.5:8080", "COMLRL_ALLOW_HTTP_ENDPOINT", "1",
                "HF_TOKEN", "hf_x"));
        assertThat(lan.sendsTokenTo(mirror)).isFalse();
        for (String local : List.of("http://127.0.0.1:5", "http://localhost:5", "http://[::1]:5")) {
            HubCache hub = HubCache.of(env("HF_ENDPOINT", local, "COMLRL_ALLOW_HTTP_ENDPOINT", "1", "HF_TOKEN", "hf_x"));
            assertThat(hub.sendsTokenTo(java.net.URI.create(local + "/a/b/resolve/main/c"))).as(local).isTrue();
        }
        HubCache https = HubCache.of(env("HF_TOKEN", "hf_x"));
        assertThat(https.sendsTokenTo(java.net.URI.create("https://huggingface.co/a/b/resolve/main/c"))).isTrue();
        assertThat(https.sendsTokenTo(java.net.URI.create("https://cdn-lfs.hf.co/a"))).isFalse();
        assertThat(https.sendsTokenTo(java.net.URI.create("http://huggingface.co/a"))).isFalse();
        assertThat(HubCache.of(env()).sendsTokenTo(java.net.URI.create("https://huggingface.co/a"))).isFalse();
    }

    @Test
    void redirectsNeverDowngradeToPlainHttp() {
        HubCache https = HubCache.of(env());
        java.net.URI from = java.net.URI.create("https://huggingface.co/org/m/resolve/main/model.safetensors");
        assertThat(HubDownload.redirectTarget(https, from, "https://cdn-lfs.hf.co/x?sig=1", "f").getHost())
                .isEqualTo("cdn-lfs.hf.co");
        assertThatThrownBy(() -> HubDownload.redirectTarget(https, from, "http://cdn.example/x", "model.safetensors"))
                .isInstanceOf(HubException.class)
                .hasMessageContaining("model.safetensors")
                .hasMessageContaining("plain http");
        assertThatThrownBy(() -> HubDownload.redirectTarget(https, from, "file:///etc/passwd", "f"))
                .hasMessageContaining("not http(s)");
        HubCache allowed = HubCache.of(env("COMLRL_ALLOW_HTTP_ENDPOINT", "1"));
        assertThat(HubDownload.redirectTarget(allowed, from, "http://cdn.example/x", "f").getScheme()).isEqualTo("http");
    }

    @Test
    void revisionsAreBranchTagOrCommitNamesOnly() {
        HubCache hub = HubCache.of(env("HF_HUB_CACHE", tmp.toString(), "HF_HUB_OFFLINE", "1"));
        for (String good : List.of("main", "v1.0", "refs/pr/1", COMMIT, "release-2024_01+x")) {
            assertThat(hub.repo("org/model", good).revision()).isEqualTo(good);
        }
        for (String bad : List.of("../main", ".hidden", "a/.b", "x.lock", "a b", "a//b", "/a", "a/", "a\\b", "a:b",
                "~1", "@{-1}", "a/./b", "")) {
            assertThatThrownBy(() -> hub.repo("org/model", bad)).as(bad)
                    .isInstanceOf(HubException.class)
                    .hasMessageContaining("is not a valid branch, tag or commit hash");
        }
        assertThatThrownBy(() -> hub.repo("org/model.git")).hasMessageContaining("nor a valid Hugging Face model id");
    }

    @Test
    void aRefThatIsNotACommitHashIsReported() throws IOException {
        Path cache = premadeCache("config.json");
        Files.writeString(cache.resolve("models--Qwen--Qwen2.5-0.5B/refs/main"), "../../../../tmp");
        HubCache hub = HubCache.of(env("HF_HUB_CACHE", cache.toString(), "HF_HUB_OFFLINE", "1"));
        assertThatThrownBy(() -> hub.repo("Qwen/Qwen2.5-0.5B").commit())
                .isInstanceOf(HubException.class)
                .hasMessageContaining("refs/main should hold a commit hash")
                .hasMessageContaining("delete it");
    }
}
