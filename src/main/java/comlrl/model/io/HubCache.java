package comlrl.model.io;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Resolves a model id such as {@code Qwen/Qwen2.5-0.5B} (or a local directory) to a directory of
 * model files, through the standard Hugging Face cache, downloading what is missing.
 *
 * <p><b>Local directories win</b>: a string naming an existing directory is used as it is.
 *
 * <p><b>Datasets</b> ({@link #datasetRepo}) share all of this, in the dataset layout of
 * {@link HubRepoType#DATASET}: {@code datasets--org--name/} in the cache, files from
 * {@code ${HF_ENDPOINT}/datasets/{repo}/resolve/{revision}/{file}}, and the list of a revision's
 * files from {@code ${HF_ENDPOINT}/api/datasets/{repo}/revision/{revision}}
 * ({@link HubRepo#listFiles}).
 *
 * <p><b>Cache layout</b> (the one {@code huggingface_hub} writes, so the two share a cache):
 * <pre>
 * &lt;cache&gt;/models--Qwen--Qwen2.5-0.5B/
 *     refs/main                      the commit hash that revision "main" resolved to
 *     blobs/&lt;etag&gt;                  file contents, named by the hub's etag
 *     snapshots/&lt;commit&gt;/config.json  relative symlink to ../../blobs/&lt;etag&gt; (a copy where
 *                                    symlinks cannot be made)
 *     .no_exist/&lt;commit&gt;/&lt;file&gt;     empty marker: the file does not exist at that commit
 * </pre>
 *
 * <p><b>Environment</b> (read from an injected map, so tests need no real variables):
 * <ul>
 *   <li>cache root: {@code HF_HUB_CACHE}, else {@code HUGGINGFACE_HUB_CACHE}, else
 *       {@code $HF_HOME/hub}, else {@code $XDG_CACHE_HOME/huggingface/hub}, else
 *       {@code ~/.cache/huggingface/hub}; a leading {@code ~} means the home directory;
 *   <li>{@code HF_HUB_OFFLINE} (or {@code TRANSFORMERS_OFFLINE}) = {@code 1/true/yes/on}: never
 *       download; files not in the cache are errors (optional ones are simply absent);
 *   <li>{@code HF_ENDPOINT}: the hub, default {@code https://huggingface.co}. Plain
 *       {@code http://} endpoints are refused unless {@code COMLRL_ALLOW_HTTP_ENDPOINT=1} (or the
 *       system property {@code comlrl.allowHttpEndpoint=true}) is set, for a local mirror;
 *   <li>{@code HF_TOKEN} (or {@code HUGGING_FACE_HUB_TOKEN}, or the token file
 *       {@code $HF_TOKEN_PATH}, default {@code $HF_HOME/token}, that {@code huggingface-cli
 *       login} writes): sent as {@code Authorization: Bearer} to the endpoint's host only, never
 *       to the storage host a download redirects to, and never in clear text: over plain
 *       {@code http://} only to a loopback address (127.0.0.1, ::1, localhost), whose traffic
 *       does not leave the machine;
 *   <li>{@code HF_HUB_DOWNLOAD_TIMEOUT}: seconds to wait for a server's response headers, and
 *       for each piece of a body: a transfer that delivers nothing for that long fails and stores
 *       nothing (default 30). It is a stall limit, not a limit on the whole download, which may
 *       take as long as a large file over a slow link takes while data keeps coming; progress goes
 *       to {@link #withProgress}.
 * </ul>
 *
 * <p><b>Cache first</b>: a file present under {@code snapshots/<refs/revision>/} is used without
 * any request, so a second resolve of a complete model makes none. The flip side: a branch such as
 * {@code main} stays at the commit first downloaded; delete {@code refs/main} (or pass a commit
 * hash as revision) to move on. Within one {@link HubRepo}, every file comes from the same commit:
 * after the first download the commit hash, not the branch name, is requested.
 *
 * <p><b>Downloads</b>: {@code GET ${HF_ENDPOINT}/{repo}/resolve/{revision}/{file}} (the
 * revision percent-encoded as one path segment), following
 * redirects (never from {@code https} down to {@code http} unless plain http is allowed); the
 * commit comes from the {@code X-Repo-Commit} header, which must be a 40-hex-digit commit hash
 * (and the requested one, when a commit was requested), the blob name from {@code X-Linked-Etag}
 * or {@code ETag} (quotes and {@code W/} stripped) when it is a 40- or 64-hex-digit hash, else the
 * SHA-256 of the content. Nothing the server sends can name a path outside the repository's
 * folder. The body goes to a temporary file under {@code <cache>/.incomplete/}, is checked against
 * every size announced ({@code X-Linked-Size}, {@code Content-Length}; a body running past it stops
 * there) and against the hash the hub announces: the SHA-256 ({@code X-Linked-Etag}) of LFS files,
 * the git SHA-1 of the blob ({@code ETag}) of the others; a mismatch deletes it and fails. A file
 * sent with neither a size nor a hash is refused, as a transfer cut short could not be told from a
 * whole one. Then it is moved atomically into {@code blobs/} and linked into
 * {@code snapshots/<commit>/}; {@code refs/<revision>} is written last. A broken or stalled
 * transfer leaves nothing in {@code blobs/} or {@code snapshots/}. Concurrent downloads of one file
 * by several processes are safe (each renames a complete file into place) but not deduplicated.
 *
 * <p><b>Cached files are checked</b> each time they are used, when their blob is named by a hash
 * and holds at most 64 MiB (configs, tokenizers; not model weights, whose SHA-256 was checked when
 * they were downloaded): one whose content has another hash (cut short and kept by an older
 * version, damaged on disk) is removed and downloaded again, or, offline, is an error.
 *
 * <p><b>The token</b> is registered with {@link comlrl.net.Secrets}, so nothing the run writes
 * contains it.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class HubCache {
    /** The public Hugging Face hub. */
    public static final String DEFAULT_ENDPOINT = "https://huggingface.co";

    /** The variable that allows a plain {@code http://} endpoint (a local mirror). */
    public static final String ALLOW_HTTP_VARIABLE = "COMLRL_ALLOW_HTTP_ENDPOINT";
    /** The system property equivalent of {@link #ALLOW_HTTP_VARIABLE}. */
    public static final String ALLOW_HTTP_PROPERTY = "comlrl.allowHttpEndpoint";

    private static final Pattern REPO_PART = Pattern.compile("[A-Za-z0-9_]([A-Za-z0-9_.\\-]*[A-Za-z0-9_])?");
    private static final Pattern COMMIT_HASH = Pattern.compile("[0-9a-f]{40}");
    /** One segment of a branch or tag name: git's rules, restricted to characters safe in paths. */
    private static final Pattern REVISION_PART = Pattern.compile("[A-Za-z0-9_+\\-][A-Za-z0-9_.+\\-]*");

    private final Path cacheDir;
    private final String endpoint;
    private final String token;
    private final String offlineVariable;
    private final Duration timeout;
    private final HttpClient httpClient;
    private final HubProgress progress;
    private final boolean symlinks;
    private final boolean allowHttp;

    private HubCache(Path cacheDir, String endpoint, String token, String offlineVariable, Duration timeout,
                     HttpClient httpClient, HubProgress progress, boolean symlinks, boolean allowHttp) {
        this.cacheDir = cacheDir;
        this.endpoint = endpoint;
        this.token = token;
        this.offlineVariable = offlineVariable;
        this.timeout = timeout;
        this.httpClient = httpClient;
        this.progress = progress;
        this.symlinks = symlinks;
        this.allowHttp = allowHttp;
    }

    /** A cache configured from the process environment ({@link System#getenv()}). */
    public static HubCache fromEnvironment() {
        return of(System.getenv());
    }

    /**
     * A cache configured from {@code env} (see the class docs for the variables read).
     *
     * @throws HubException when a variable holds an unusable value
     */
    public static HubCache of(Map<String, String> env) {
        Objects.requireNonNull(env, "env");
        String home = nonBlank(env.get("HOME")).orElse(System.getProperty("user.home"));
        Path hfHome = nonBlank(env.get("HF_HOME")).map(v -> path(v, home, "HF_HOME"))
                .orElseGet(() -> nonBlank(env.get("XDG_CACHE_HOME"))
                        .map(v -> path(v, home, "XDG_CACHE_HOME").resolve("huggingface"))
                        .orElseGet(() -> Path.of(home, ".cache", "huggingface")));
        Path cache = nonBlank(env.get("HF_HUB_CACHE")).map(v -> path(v, home, "HF_HUB_CACHE"))
                .or(() -> nonBlank(env.get("HUGGINGFACE_HUB_CACHE")).map(v -> path(v, home, "HUGGINGFACE_HUB_CACHE")))
                .orElseGet(() -> hfHome.resolve("hub"));

        String endpoint = nonBlank(env.get("HF_ENDPOINT")).orElse(DEFAULT_ENDPOINT).trim();
        while (endpoint.endsWith("/")) {
            endpoint = endpoint.substring(0, endpoint.length() - 1);
        }
        if (!endpoint.startsWith("http://") && !endpoint.startsWith("https://")) {
            throw new HubException(HubException.Kind.INVALID_ID, "HF_ENDPOINT=" + endpoint
                    + " is not an http(s) URL; set it to e.g. " + DEFAULT_ENDPOINT + " or unset it");
        }
        boolean allowHttp = allowsHttp(env);
        if (endpoint.startsWith("http://") && !allowHttp) {
            throw new HubException(HubException.Kind.INVALID_ID, "HF_ENDPOINT=" + endpoint + " is plain http: "
                    + "downloads could be altered on the way and a token read. Use an https:// endpoint, or, for a "
                    + "local mirror you trust, set " + ALLOW_HTTP_VARIABLE + "=1 (HF_TOKEN is then sent only to a "
                    + "loopback address)");
        }
        try {
            URI parsed = URI.create(endpoint);
            if (parsed.getHost() == null || parsed.getRawQuery() != null || parsed.getRawFragment() != null) {
                throw new IllegalArgumentException("no host, or a query or fragment");
            }
        } catch (IllegalArgumentException e) {
            throw new HubException(HubException.Kind.INVALID_ID, "HF_ENDPOINT=" + endpoint + " is not a valid URL ("
                    + e.getMessage() + "); set it to e.g. " + DEFAULT_ENDPOINT + " or unset it", e);
        }

        String token = nonBlank(env.get("HF_TOKEN"))
                .or(() -> nonBlank(env.get("HUGGING_FACE_HUB_TOKEN")))
                .or(() -> readTokenFile(nonBlank(env.get("HF_TOKEN_PATH"))
                        .map(v -> path(v, home, "HF_TOKEN_PATH"))
                        .orElse(hfHome.resolve("token"))))
                .map(String::trim)
                .orElse(null);
        comlrl.net.Secrets.register(token);

        String offlineVariable = null;
        for (String name : List.of("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")) {
            if (isTrue(env.get(name))) {
                offlineVariable = name;
                break;
            }
        }

        Duration timeout = Duration.ofSeconds(30);
        Optional<String> timeoutValue = nonBlank(env.get("HF_HUB_DOWNLOAD_TIMEOUT"));
        if (timeoutValue.isPresent()) {
            try {
                double seconds = Double.parseDouble(timeoutValue.get().trim());
                if (!(seconds > 0)) {
                    throw new NumberFormatException("not positive");
                }
                timeout = Duration.ofMillis((long) Math.ceil(seconds * 1000));
            } catch (NumberFormatException e) {
                throw new HubException(HubException.Kind.INVALID_ID, "HF_HUB_DOWNLOAD_TIMEOUT="
                        + timeoutValue.get() + " is not a positive number of seconds; fix or unset it", e);
            }
        }
        return new HubCache(cache.toAbsolutePath().normalize(), endpoint, token, offlineVariable, timeout, null,
                HubProgress.NONE, true, allowHttp);
    }

    /** The same cache, reporting download progress to {@code listener}. */
    public HubCache withProgress(HubProgress listener) {
        return new HubCache(cacheDir, endpoint, token, offlineVariable, timeout, httpClient,
                Objects.requireNonNull(listener, "listener"), symlinks, allowHttp);
    }

    /**
     * The same cache, downloading with {@code client} (e.g. one with a proxy). The client must not
     * follow redirects itself ({@link HttpClient.Redirect#NEVER}): the cache follows them so that
     * the token is not sent to other hosts.
     */
    public HubCache withHttpClient(HttpClient client) {
        Objects.requireNonNull(client, "client");
        if (client.followRedirects() != HttpClient.Redirect.NEVER) {
            throw new IllegalArgumentException("the HttpClient must use Redirect.NEVER; HubCache follows redirects "
                    + "itself so that HF_TOKEN is sent only to " + endpoint);
        }
        return new HubCache(cacheDir, endpoint, token, offlineVariable, timeout, client, progress, symlinks,
                allowHttp);
    }

    /**
     * The same cache, placing copies of the blobs in {@code snapshots/} instead of symlinks (what
     * happens anyway where the file system refuses symlinks); for tests of that fallback.
     */
    HubCache withoutSymlinks() {
        return new HubCache(cacheDir, endpoint, token, offlineVariable, timeout, httpClient, progress, false,
                allowHttp);
    }

    /**
     * Whether {@code env}'s {@value #ALLOW_HTTP_VARIABLE} (or the system property
     * {@value #ALLOW_HTTP_PROPERTY}) allows plain http.
     */
    public static boolean allowsHttp(Map<String, String> env) {
        return isTrue(env.get(ALLOW_HTTP_VARIABLE)) || isTrue(System.getProperty(ALLOW_HTTP_PROPERTY));
    }

    /** Interprets an offline flag the way {@code huggingface_hub} does: 1, true, yes, on (any case). */
    static boolean isTrue(String value) {
        if (value == null) {
            return false;
        }
        String v = value.trim().toLowerCase(Locale.ROOT);
        return v.equals("1") || v.equals("true") || v.equals("yes") || v.equals("on");
    }

    private static Optional<String> nonBlank(String value) {
        return value == null || value.isBlank() ? Optional.empty() : Optional.of(value);
    }

    private static Path path(String value, String home, String variable) {
        String v = value.trim();
        if (v.equals("~")) {
            v = home;
        } else if (v.startsWith("~/")) {
            v = home + v.substring(1);
        }
        try {
            return Path.of(v);
        } catch (InvalidPathException e) {
            throw new HubException(HubException.Kind.INVALID_ID, variable + "=" + value + " is not a valid path", e);
        }
    }

    private static Optional<String> readTokenFile(Path file) {
        try {
            if (Files.isRegularFile(file)) {
                return nonBlank(Files.readString(file, StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            // an unreadable token file is the same as none; requests go unauthenticated
        }
        return Optional.empty();
    }

    // ------------------------------------------------------------------ settings

    /** The cache root ({@code .../hub}). */
    public Path cacheDir() {
        return cacheDir;
    }

    /** The hub's base URL, without a trailing slash. */
    public String endpoint() {
        return endpoint;
    }

    /** Whether downloads are disabled ({@code HF_HUB_OFFLINE}). */
    public boolean offline() {
        return offlineVariable != null;
    }

    /** Whether a token will be sent. */
    public boolean hasToken() {
        return token != null;
    }

    /** The folder of model {@code repoId} in the cache, e.g. {@code <cache>/models--Qwen--Qwen2.5-0.5B}. */
    public Path repoFolder(String repoId) {
        return repoFolder(HubRepoType.MODEL, repoId);
    }

    /** The folder of {@code repoId} in the cache, e.g. {@code <cache>/datasets--openai--gsm8k}. */
    public Path repoFolder(HubRepoType type, String repoId) {
        Objects.requireNonNull(type, "type");
        validateRepoId(type, repoId, repoId);
        return cacheDir.resolve(type.folderName(repoId));
    }

    // ------------------------------------------------------------------ resolution

    /**
     * The directory holding {@code requiredFiles} and whichever {@code optionalFiles} exist: the
     * directory itself when {@code modelIdOrPath} is one, else the cached snapshot of the model id
     * (revision {@code main}, or the one after {@code @}, as in {@code Qwen/Qwen2.5-0.5B@v1}),
     * downloading missing files unless offline.
     *
     * @throws HubException naming the repository, the file and the remedy when a required file
     *     cannot be had
     */
    public Path resolve(String modelIdOrPath, List<String> requiredFiles, List<String> optionalFiles) {
        return resolve(repo(modelIdOrPath), requiredFiles, optionalFiles);
    }

    /** As {@link #resolve(String, List, List)} at {@code revision} (branch, tag or commit hash). */
    public Path resolve(String modelIdOrPath, String revision, List<String> requiredFiles,
                        List<String> optionalFiles) {
        return resolve(repo(modelIdOrPath, revision), requiredFiles, optionalFiles);
    }

    private static Path resolve(HubRepo repo, List<String> requiredFiles, List<String> optionalFiles) {
        Objects.requireNonNull(requiredFiles, "requiredFiles");
        Objects.requireNonNull(optionalFiles, "optionalFiles");
        for (String file : requiredFiles) {
            repo.file(file, true);
        }
        for (String file : optionalFiles) {
            repo.file(file, false);
        }
        return repo.directory();
    }

    /**
     * A handle on {@code modelIdOrPath} at revision {@code main} (or the revision after {@code @});
     * nothing is read or downloaded until {@link HubRepo#file} is called.
     *
     * @throws HubException ({@link HubException.Kind#INVALID_ID}) when the string is neither an
     *     existing directory nor a valid model id
     */
    public HubRepo repo(String modelIdOrPath) {
        Objects.requireNonNull(modelIdOrPath, "modelIdOrPath");
        Optional<Path> local = localDirectory(modelIdOrPath);
        if (local.isPresent()) {
            return HubRepo.local(local.get());
        }
        int at = modelIdOrPath.lastIndexOf('@');
        if (at > 0) {
            return repo(modelIdOrPath.substring(0, at), modelIdOrPath.substring(at + 1));
        }
        return repo(modelIdOrPath, "main");
    }

    /** A handle on {@code modelIdOrPath} at {@code revision}; see {@link #repo(String)}. */
    public HubRepo repo(String modelIdOrPath, String revision) {
        Objects.requireNonNull(modelIdOrPath, "modelIdOrPath");
        Objects.requireNonNull(revision, "revision");
        Optional<Path> local = localDirectory(modelIdOrPath);
        if (local.isPresent()) {
            return HubRepo.local(local.get());
        }
        validateRepoId(HubRepoType.MODEL, modelIdOrPath, modelIdOrPath);
        validateRevision(modelIdOrPath, revision);
        return HubRepo.cached(this, HubRepoType.MODEL, modelIdOrPath, revision, repoFolder(modelIdOrPath));
    }

    /**
     * A handle on dataset {@code repoId} (such as {@code openai/gsm8k}) at {@code revision} (a
     * branch, a tag, a commit hash, or {@code refs/convert/parquet}, the hub's Parquet conversion);
     * always a hub id, never a local directory. Nothing is read or downloaded until
     * {@link HubRepo#file} or {@link HubRepo#listFiles} is called.
     *
     * @throws HubException ({@link HubException.Kind#INVALID_ID}) when the id or the revision is invalid
     */
    public HubRepo datasetRepo(String repoId, String revision) {
        Objects.requireNonNull(repoId, "repoId");
        Objects.requireNonNull(revision, "revision");
        validateRepoId(HubRepoType.DATASET, repoId, repoId);
        validateRevision(repoId, revision);
        return HubRepo.cached(this, HubRepoType.DATASET, repoId, revision, repoFolder(HubRepoType.DATASET, repoId));
    }

    private static Optional<Path> localDirectory(String modelIdOrPath) {
        String s = modelIdOrPath;
        if (s.equals("~") || s.startsWith("~/")) {
            s = System.getProperty("user.home") + s.substring(1);
        }
        try {
            Path p = Path.of(s);
            return Files.isDirectory(p) ? Optional.of(p.toAbsolutePath().normalize()) : Optional.empty();
        } catch (InvalidPathException e) {
            return Optional.empty();
        }
    }

    private static void validateRepoId(HubRepoType type, String repoId, String asGiven) {
        String[] parts = repoId.split("/", -1);
        boolean valid = repoId.length() <= 96 && parts.length <= 2 && !repoId.contains("--")
                && !repoId.contains("..") && !repoId.endsWith(".git");
        for (String part : parts) {
            valid &= REPO_PART.matcher(part).matches();
        }
        if (!valid && type == HubRepoType.MODEL) {
            throw new HubException(HubException.Kind.INVALID_ID, "'" + asGiven + "' is neither an existing directory "
                    + "(working directory: " + Path.of("").toAbsolutePath() + ") nor a valid Hugging Face model id "
                    + "such as '" + type.exampleId() + "'; check the path or the id");
        }
        if (!valid) {
            throw new HubException(HubException.Kind.INVALID_ID, "'" + asGiven + "' is not a valid Hugging Face "
                    + type.noun() + " id such as '" + type.exampleId() + "' (owner/name: letters, digits, '_', '-', "
                    + "'.'); check the id");
        }
    }

    /**
     * A branch, tag ({@code v1.0}, {@code refs/pr/1}) or commit hash: slash-separated segments of
     * letters, digits and {@code _ + - .}, none starting with a dot or ending in {@code .lock}, so
     * that {@code refs/<revision>} always stays inside the repository's folder.
     */
    static boolean isValidRevision(String revision) {
        if (revision.isEmpty() || revision.length() > 255) {
            return false;
        }
        for (String part : revision.split("/", -1)) {
            if (!REVISION_PART.matcher(part).matches() || part.endsWith(".lock")) {
                return false;
            }
        }
        return true;
    }

    private static void validateRevision(String repoId, String revision) {
        if (!isValidRevision(revision)) {
            throw new HubException(HubException.Kind.INVALID_ID, "revision '" + revision + "' of " + repoId
                    + " is not a valid branch, tag or commit hash (letters, digits, '_', '+', '-', '.' and '/' "
                    + "between parts; no part may start with '.')");
        }
    }

    static boolean isCommitHash(String revision) {
        return COMMIT_HASH.matcher(revision).matches();
    }

    // ------------------------------------------------------------------ for HubRepo / HubDownload

    String offlineVariable() {
        return offlineVariable;
    }

    String token() {
        return token;
    }

    Duration timeout() {
        return timeout;
    }

    HubProgress progress() {
        return progress;
    }

    boolean symlinks() {
        return symlinks;
    }

    /** Whether plain http (an http endpoint, a redirect from https to http) is allowed. */
    boolean allowHttp() {
        return allowHttp;
    }

    /**
     * Whether a request to {@code uri} may carry the token: only to the endpoint's own origin, and
     * over plain http only to a loopback address.
     */
    boolean sendsTokenTo(URI uri) {
        if (token == null || !HubDownload.sameOrigin(uri, URI.create(endpoint))) {
            return false;
        }
        return "https".equalsIgnoreCase(uri.getScheme()) || isLoopback(uri.getHost());
    }

    /** 127.x.x.x, ::1 or localhost, judged from the text alone (no name lookup). */
    public static boolean isLoopback(String host) {
        if (host == null) {
            return false;
        }
        String h = host.toLowerCase(Locale.ROOT);
        if (h.startsWith("[") && h.endsWith("]")) {
            h = h.substring(1, h.length() - 1);
        }
        return h.equals("localhost") || h.equals("::1") || h.equals("0:0:0:0:0:0:0:1")
                || h.matches("127\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}");
    }

    /** The client to use: the injected one, or a shared default that does not follow redirects. */
    HttpClient httpClient() {
        return httpClient != null ? httpClient : DefaultClient.INSTANCE;
    }

    /** Created on first download only, so offline use never starts the HTTP machinery. */
    private static final class DefaultClient {
        static final HttpClient INSTANCE = HttpClient.newBuilder()
                .followRedirects(HttpClient.Redirect.NEVER)
                .connectTimeout(Duration.ofSeconds(30))
                .build();
    }

    @Override
    public String toString() {
        return "HubCache(cache=" + cacheDir + ", endpoint=" + endpoint + (offline() ? ", offline" : "")
                + (hasToken() ? ", token set" : "") + ")";
    }
}
