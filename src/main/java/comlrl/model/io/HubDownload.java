package comlrl.model.io;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.net.BodyTimeoutException;
import comlrl.net.ResponseBodies;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * One file's download into the cache (see {@link HubCache} for the protocol and layout): request
 * with manual redirects, stream to a temporary file, verify, move into {@code blobs/}, link into
 * {@code snapshots/<commit>/}, record {@code refs/<revision>}. Also the hub API's list of a
 * revision's files ({@link #list}), and the check of a cached file against its blob's name
 * ({@link #cachedFileProblem}).
 *
 * <p>Every body is read under {@code HF_HUB_DOWNLOAD_TIMEOUT} as a stall limit: a transfer that
 * delivers nothing for that long fails (and stores nothing), however long a large file takes while
 * data keeps coming. A whole-file deadline would fail slow but steady multi-GB downloads; progress
 * is reported about every MiB instead ({@link HubProgress}).
 */
final class HubDownload {
    private static final int MAX_REDIRECTS = 10;
    private static final long PROGRESS_STEP = 1 << 20;
    /** Etags usable as blob names: git object ids (40 hex digits) and SHA-256 sums (64). */
    private static final Pattern HASH_ETAG = Pattern.compile("[0-9a-f]{40}|[0-9a-f]{64}");
    private static final Pattern SHA256_HEX = Pattern.compile("[0-9a-f]{64}");
    private static final Pattern GIT_SHA1_HEX = Pattern.compile("[0-9a-f]{40}");
    /** Cached files up to this size are checked against their blob's name each time they are used. */
    static final long VERIFY_CACHED_LIMIT = 64L << 20;
    /** What a file list request is called in messages. */
    private static final String FILE_LIST = "the file list";
    /** The largest API answer read: a file list of some hundred thousand files. */
    private static final int MAX_API_BYTES = 64 << 20;
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * The downloaded file, or null with {@code missingReason} when the hub has no such file, and
     * the commit the hub named (null when it named none).
     */
    record Result(Path path, String commit, String missingReason) {}

    /** A revision's files as the hub API lists them, and the commit it resolved to. */
    record Listing(String commit, List<String> files) {}

    private HubDownload() {}

    /**
     * Downloads {@code filename} of {@code repo} at {@code urlRevision} (the commit when known,
     * else the requested revision).
     *
     * @return the snapshot path, or a null path when the hub answers 404 "entry not found"
     */
    static Result fetch(HubCache hub, HubRepo repo, String filename, String urlRevision) {
        String repoId = repo.repoId();
        URI uri = URI.create(hub.endpoint() + "/" + repo.type().urlPrefix() + encodePath(repoId) + "/resolve/"
                + encodeSegment(urlRevision) + "/" + encodePath(filename));
        String commit = null;
        String linkedEtag = null;
        long linkedSize = -1;
        for (int hop = 0; hop <= MAX_REDIRECTS; hop++) {
            HttpResponse<InputStream> response = send(hub, uri, hub.sendsTokenTo(uri), repoId, filename);
            try (InputStream body = response.body()) {
                if (commit == null) {
                    commit = checkedCommit(hub, header(response, "X-Repo-Commit"), urlRevision, repoId, filename);
                }
                linkedEtag = firstNonNull(linkedEtag, header(response, "X-Linked-Etag"));
                if (linkedSize < 0) {
                    linkedSize = parseSize(hub, header(response, "X-Linked-Size"), "X-Linked-Size", filename);
                }
                int status = response.statusCode();
                if (status >= 300 && status < 400) {
                    String location = header(response, "Location");
                    if (location == null) {
                        throw new HubException(HubException.Kind.PROTOCOL, "HTTP " + status + " without a Location "
                                + "header for " + uri + "; is HF_ENDPOINT=" + hub.endpoint() + " a Hugging Face hub?");
                    }
                    uri = redirectTarget(hub, uri, location, filename);
                    continue;
                }
                if (status == 200) {
                    String etag = firstNonNull(linkedEtag, header(response, "ETag"));
                    if (commit == null && HubCache.isCommitHash(urlRevision)) {
                        commit = urlRevision;
                    }
                    if (commit == null) {
                        throw new HubException(HubException.Kind.PROTOCOL, "the server at " + hub.endpoint()
                                + " sent " + filename + " of " + repoId + " without an X-Repo-Commit header, so it "
                                + "cannot be placed in the cache; is HF_ENDPOINT a Hugging Face hub or mirror?");
                    }
                    long contentLength = parseSize(hub, header(response, "Content-Length"), "Content-Length", filename);
                    if (linkedSize >= 0 && contentLength >= 0 && linkedSize != contentLength) {
                        throw new HubException(HubException.Kind.PROTOCOL, "the hub announced " + filename + " of "
                                + repoId + " as " + linkedSize + " bytes (X-Linked-Size) but the download is "
                                + contentLength + " bytes (Content-Length); try again later");
                    }
                    long expected = linkedSize >= 0 ? linkedSize : contentLength;
                    String blobEtag = normalizeEtag(etag);
                    if (expected < 0 && (blobEtag == null || !HASH_ETAG.matcher(blobEtag).matches())) {
                        throw new HubException(HubException.Kind.PROTOCOL, "the server at " + hub.endpoint() + " sent "
                                + filename + " of " + repoId + " with neither its size (Content-Length, X-Linked-Size) "
                                + "nor its hash (a git SHA-1 or SHA-256 ETag), so a download cut short could not be told "
                                + "from a whole one; nothing was stored. Is HF_ENDPOINT a Hugging Face hub or mirror?");
                    }
                    Path path = store(hub, repo, filename, urlRevision, commit, blobEtag, expected, body);
                    return new Result(path, commit, null);
                }
                String errorCode = header(response, "X-Error-Code");
                String errorMessage = header(response, "X-Error-Message");
                if (status == 404 && (errorCode == null || errorCode.equals("EntryNotFound"))) {
                    if (commit != null) {
                        writeRef(repo, urlRevision, commit);
                    }
                    String reason = errorCode != null || commit != null
                            ? "the hub has no such file (HTTP 404)"
                            // no way to tell a missing file from a missing repository: say both
                            : "repository or file not found (HTTP 404) at " + hub.endpoint();
                    return new Result(null, commit, reason);
                }
                throw httpError(hub, repo.type(), repoId, filename, urlRevision, status, errorCode, errorMessage);
            } catch (IOException e) {
                // only closing a response body gets here: the download itself is complete or failed already
                throw new HubException(HubException.Kind.NETWORK, "download of " + filename + " from " + repoId
                        + " at " + hub.endpoint() + " failed: " + describe(e), e);
            }
        }
        throw new HubException(HubException.Kind.PROTOCOL, "more than " + MAX_REDIRECTS + " redirects for "
                + filename + " of " + repoId + " (last: " + uri + ")");
    }

    /**
     * Lists the files of {@code repo} at {@code urlRevision} (the commit when known, else the
     * requested revision) through {@code GET ${HF_ENDPOINT}/api/{models|datasets}/{repo}/revision/{rev}},
     * whose JSON answer names the commit ({@code sha}) and the files ({@code siblings[].rfilename});
     * records {@code refs/<revision>}.
     */
    static Listing list(HubCache hub, HubRepo repo, String urlRevision) {
        String repoId = repo.repoId();
        URI uri = URI.create(hub.endpoint()
                + repo.type().apiRevisionPath(encodePath(repoId), encodeSegment(urlRevision)));
        for (int hop = 0; hop <= MAX_REDIRECTS; hop++) {
            HttpResponse<InputStream> response = send(hub, uri, hub.sendsTokenTo(uri), repoId, FILE_LIST);
            try (InputStream body = response.body()) {
                int status = response.statusCode();
                if (status >= 300 && status < 400 && header(response, "Location") != null) {
                    uri = redirectTarget(hub, uri, header(response, "Location"), FILE_LIST);
                    continue;
                }
                if (status != 200) {
                    throw httpError(hub, repo.type(), repoId, FILE_LIST, urlRevision, status,
                            header(response, "X-Error-Code"), header(response, "X-Error-Message"));
                }
                byte[] bytes = body.readNBytes(MAX_API_BYTES + 1); // under the stall limit of send()
                if (bytes.length > MAX_API_BYTES) {
                    throw new HubException(HubException.Kind.PROTOCOL, "the file list of " + repoId + " from "
                            + hub.endpoint() + " is larger than " + (MAX_API_BYTES >> 20) + " MiB; is HF_ENDPOINT a "
                            + "Hugging Face hub or mirror?");
                }
                Listing listing = parseListing(hub, repoId, urlRevision, bytes);
                writeRef(repo, urlRevision, listing.commit());
                return listing;
            } catch (IOException e) {
                throw new HubException(HubException.Kind.NETWORK, "reading the file list of " + repoId + " from "
                        + hub.endpoint() + " failed: " + describe(e) + stallHint(e) + "; try again", e);
            }
        }
        throw new HubException(HubException.Kind.PROTOCOL, "more than " + MAX_REDIRECTS + " redirects for "
                + FILE_LIST + " of " + repoId + " (last: " + uri + ")");
    }

    private static Listing parseListing(HubCache hub, String repoId, String urlRevision, byte[] body) {
        JsonNode root;
        try {
            root = JSON.readTree(body);
        } catch (IOException e) {
            root = null;
        }
        JsonNode siblings = root == null ? null : root.get("siblings");
        if (siblings == null || !siblings.isArray()) {
            throw new HubException(HubException.Kind.PROTOCOL, "the server at " + hub.endpoint() + " answered the "
                    + "request for " + FILE_LIST + " of " + repoId + " without a JSON 'siblings' array; is HF_ENDPOINT "
                    + "a Hugging Face hub or mirror?");
        }
        JsonNode sha = root.get("sha");
        String commit = checkedCommit(hub, sha != null && sha.isTextual() ? sha.asText() : null, urlRevision, repoId,
                FILE_LIST);
        if (commit == null && HubCache.isCommitHash(urlRevision)) {
            commit = urlRevision;
        }
        if (commit == null) {
            throw new HubException(HubException.Kind.PROTOCOL, "the server at " + hub.endpoint() + " sent "
                    + FILE_LIST + " of " + repoId + " without the commit ('sha'), so its files cannot be placed in "
                    + "the cache; is HF_ENDPOINT a Hugging Face hub or mirror?");
        }
        List<String> files = new ArrayList<>();
        for (JsonNode sibling : siblings) {
            JsonNode name = sibling.get("rfilename");
            if (name != null && name.isTextual()) {
                files.add(name.asText());
            }
        }
        files.sort(null);
        return new Listing(commit, List.copyOf(files));
    }

    /**
     * The commit an answer names: a 40-hex-digit hash, equal to the one requested when a commit
     * was requested; null when the answer names none. Anything else is refused, as it would be
     * used as a directory name in the cache.
     */
    static String checkedCommit(HubCache hub, String header, String requested, String repoId, String filename) {
        if (header == null) {
            return null;
        }
        String commit = header.trim();
        if (!HubCache.isCommitHash(commit)) {
            throw new HubException(HubException.Kind.PROTOCOL, "the server at " + hub.endpoint() + " sent "
                    + "X-Repo-Commit '" + abbreviate(commit) + "' for " + filename + " of " + repoId + ", which is not "
                    + "a commit hash (40 hex digits); refusing to store anything by that name. Is HF_ENDPOINT a "
                    + "Hugging Face hub or mirror?");
        }
        if (HubCache.isCommitHash(requested) && !requested.equals(commit)) {
            throw new HubException(HubException.Kind.PROTOCOL, "the server at " + hub.endpoint() + " answered the "
                    + "request for " + filename + " of " + repoId + " at commit " + requested + " with commit " + commit);
        }
        return commit;
    }

    /** The redirect target: http(s) only, and never from https down to plain http unless allowed. */
    static URI redirectTarget(HubCache hub, URI from, String location, String filename) {
        URI to;
        try {
            to = from.resolve(location);
        } catch (IllegalArgumentException e) {
            throw new HubException(HubException.Kind.PROTOCOL, "the server redirected " + filename + " to an invalid "
                    + "URL '" + abbreviate(location) + "'", e);
        }
        String scheme = to.getScheme() == null ? "" : to.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("https") && !(scheme.equals("http") && (hub.allowHttp()
                || !"https".equalsIgnoreCase(from.getScheme())))) {
            throw new HubException(HubException.Kind.PROTOCOL, "the server redirected " + filename + " from " + from
                    .getScheme() + "://" + from.getAuthority() + " to " + scheme + "://" + to.getAuthority()
                    + (scheme.equals("http") ? ", which is plain http; set " + HubCache.ALLOW_HTTP_VARIABLE
                    + "=1 only if you trust that network" : ", which is not http(s)"));
        }
        return to;
    }

    private static HttpResponse<InputStream> send(HubCache hub, URI uri, boolean withToken, String repoId,
                                                  String filename) {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri)
                .GET()
                .timeout(hub.timeout())
                .header("User-Agent", "comlrl-java; hub-cache")
                .header("Accept-Encoding", "identity");
        if (withToken && hub.token() != null) {
            request.header("Authorization", "Bearer " + hub.token());
        }
        HttpClient client = hub.httpClient();
        try {
            return client.send(request.build(), ResponseBodies.stallLimited(hub.timeout()));
        } catch (IOException e) {
            throw new HubException(HubException.Kind.NETWORK, "cannot reach " + hub.endpoint() + " to download "
                    + filename + " of " + repoId + " (" + uri.getScheme() + "://" + uri.getAuthority() + "): "
                    + describe(e) + ". Check the network and HF_ENDPOINT, or set HF_HUB_OFFLINE=1 to use only "
                    + "cached files.", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HubException(HubException.Kind.NETWORK, "download of " + filename + " of " + repoId
                    + " was interrupted", e);
        }
    }

    private static HubException httpError(HubCache hub, HubRepoType type, String repoId, String filename,
                                          String revision, int status, String errorCode, String errorMessage) {
        String hubSays = (errorMessage == null ? "" : " (hub: " + errorMessage + ")")
                + (hub.hasToken() && !hub.sendsTokenTo(URI.create(hub.endpoint()))
                        ? " [HF_TOKEN is set but was not sent: it never goes over plain http to another machine; "
                                + "use an https:// HF_ENDPOINT]" : "");
        String where = filename + " of '" + repoId + "' at revision " + revision + " from " + hub.endpoint();
        if ("GatedRepo".equals(errorCode)) {
            return new HubException(HubException.Kind.UNAUTHORIZED, "'" + repoId + "' is a gated " + type.noun()
                    + hubSays + ": accept its conditions on the " + type.noun() + " page, then set HF_TOKEN to a token "
                    + "of that account"
                    + (hub.hasToken() ? " (the token sent was not accepted)" : " (no token was sent)"));
        }
        if ("RepoNotFound".equals(errorCode)) {
            return new HubException(HubException.Kind.REPO_NOT_FOUND, "repository '" + repoId + "' not found at "
                    + hub.endpoint() + " (HTTP " + status + ")" + hubSays + "; check the " + type.noun()
                    + " id, or if it is private "
                    + (hub.hasToken() ? "check that HF_TOKEN grants access to it" : "set HF_TOKEN to a token with read access"));
        }
        if ("RevisionNotFound".equals(errorCode)) {
            return new HubException(HubException.Kind.REVISION_NOT_FOUND, "revision '" + revision + "' of '" + repoId
                    + "' not found (HTTP " + status + ")" + hubSays + "; check the branch, tag or commit hash");
        }
        if (status == 401 || status == 403) {
            return new HubException(HubException.Kind.UNAUTHORIZED, "access denied (HTTP " + status + ") to " + where
                    + hubSays + ": the repository may be private or gated, or may not exist; "
                    + (hub.hasToken() ? "check that HF_TOKEN is valid and grants read access to it"
                            : "set HF_TOKEN to a token with read access (no token was sent)"));
        }
        if (status == 404) {
            return new HubException(HubException.Kind.REPO_NOT_FOUND, "repository or file not found (HTTP 404): "
                    + where + hubSays + "; check the " + type.noun() + " id, the file name and the revision");
        }
        return new HubException(HubException.Kind.PROTOCOL, "HTTP " + status + " for " + where + hubSays
                + "; try again later, or set HF_HUB_OFFLINE=1 to use only cached files");
    }

    // ------------------------------------------------------------------ storing

    private static Path store(HubCache hub, HubRepo repo, String filename, String urlRevision, String commit,
                              String etag, long expectedSize, InputStream body) {
        Path repoFolder = repo.repoFolder();
        Path tmpDir = hub.cacheDir().resolve(".incomplete").resolve(repoFolder.getFileName().toString());
        Path tmp = null;
        boolean moved = false;
        try {
            Files.createDirectories(tmpDir);
            tmp = Files.createTempFile(tmpDir, "download-", ".part");
            String sha256 = copyWithDigest(body, tmp, hub.progress(), repo.repoId(), filename, expectedSize);
            long size = Files.size(tmp);
            if (expectedSize >= 0 && size != expectedSize) {
                throw new HubException(HubException.Kind.NETWORK, "download of " + filename + " from " + repo.repoId()
                        + " is incomplete: received " + size + " of " + expectedSize + " bytes; try again");
            }
            if (etag != null && SHA256_HEX.matcher(etag).matches() && !etag.equals(sha256)) {
                throw new HubException(HubException.Kind.NETWORK, "download of " + filename + " from " + repo.repoId()
                        + " is corrupt: its SHA-256 is " + sha256 + " but the hub announced " + etag + "; nothing was "
                        + "stored, try again");
            }
            if (etag != null && GIT_SHA1_HEX.matcher(etag).matches()) {
                String gitSha1 = gitBlobSha1(tmp);
                if (!etag.equals(gitSha1)) {
                    throw new HubException(HubException.Kind.NETWORK, "download of " + filename + " from "
                            + repo.repoId() + " is corrupt or cut short (" + size + " bytes): its git SHA-1 is " + gitSha1
                            + " but the hub announced " + etag + " (ETag); nothing was stored, try again");
                }
            }
            String blobName = etag != null && HASH_ETAG.matcher(etag).matches() ? etag : sha256;
            Path blob = repoFolder.resolve("blobs").resolve(blobName);
            Path snapshotDir = repoFolder.resolve("snapshots").resolve(commit);
            Path snapshotFile = snapshotDir.resolve(filename).normalize();
            if (!snapshotFile.startsWith(snapshotDir) || snapshotFile.equals(snapshotDir)) {
                throw new HubException(HubException.Kind.PROTOCOL, "file name '" + filename + "' would leave the "
                        + "snapshot folder " + snapshotDir + "; refusing to store it");
            }
            Files.createDirectories(blob.getParent());
            moveAtomically(tmp, blob);
            moved = true;
            link(hub, tmpDir, blob, snapshotFile);
            writeRef(repo, urlRevision, commit);
            return snapshotFile;
        } catch (IOException e) {
            throw new HubException(HubException.Kind.IO, "cannot store " + filename + " of " + repo.repoId()
                    + " in the cache " + hub.cacheDir() + ": " + describe(e)
                    + "; check that it is writable and has free space (or set HF_HUB_CACHE elsewhere)", e);
        } finally {
            if (!moved && tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException e) {
                    // a leftover under .incomplete/ is harmless: it is never read
                }
            }
        }
    }

    private static String copyWithDigest(InputStream body, Path tmp, HubProgress progress, String repoId,
                                         String filename, long total) throws IOException {
        MessageDigest digest;
        try {
            digest = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
        progress.update(repoId, filename, 0, total);
        long done = 0;
        long nextReport = PROGRESS_STEP;
        byte[] buffer = new byte[64 * 1024];
        try (OutputStream out = Files.newOutputStream(tmp)) {
            while (true) {
                int n;
                try {
                    n = body.read(buffer);
                } catch (IOException e) {
                    throw new HubException(HubException.Kind.NETWORK, "download of " + filename + " from " + repoId
                            + " broke off after " + done + (total >= 0 ? " of " + total : "") + " bytes: "
                            + describe(e) + stallHint(e) + "; nothing was stored, try again", e);
                }
                if (n < 0) {
                    break;
                }
                if (total >= 0 && done + n > total) {
                    throw new HubException(HubException.Kind.NETWORK, "download of " + filename + " from " + repoId
                            + " is longer than the " + total + " bytes the hub announced; nothing was stored, try again");
                }
                out.write(buffer, 0, n);
                digest.update(buffer, 0, n);
                done += n;
                if (done >= nextReport) {
                    progress.update(repoId, filename, done, total);
                    nextReport = done + PROGRESS_STEP;
                }
            }
        }
        progress.update(repoId, filename, done, total);
        return HexFormat.of().formatHex(digest.digest());
    }

    /** The git object id of {@code file} as a blob: SHA-1 of {@code "blob <size>\0"} and the content. */
    static String gitBlobSha1(Path file) throws IOException {
        MessageDigest sha1;
        try {
            sha1 = MessageDigest.getInstance("SHA-1");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required by every Java platform", e);
        }
        sha1.update(("blob " + Files.size(file) + "\0").getBytes(StandardCharsets.US_ASCII));
        return HexFormat.of().formatHex(digest(sha1, file));
    }

    private static byte[] digest(MessageDigest digest, Path file) throws IOException {
        byte[] buffer = new byte[64 * 1024];
        try (InputStream in = Files.newInputStream(file)) {
            for (int n; (n = in.read(buffer)) > 0; ) {
                digest.update(buffer, 0, n);
            }
        }
        return digest.digest();
    }

    /**
     * Why the cached {@code snapshotFile} cannot be trusted, or null when it can: a snapshot link
     * to a blob named by a hash (a git SHA-1, a SHA-256) whose content has another hash (a download
     * cut short and kept by an older version, a disk error). Blobs larger than
     * {@link #VERIFY_CACHED_LIMIT} (model weights, checked by SHA-256 when downloaded), blobs named
     * otherwise, and snapshot copies (where symlinks are unavailable) are not checked.
     */
    static String cachedFileProblem(Path snapshotFile) throws IOException {
        if (!Files.isSymbolicLink(snapshotFile)) {
            return null;
        }
        Path blob = snapshotFile.getParent().resolve(Files.readSymbolicLink(snapshotFile)).normalize();
        String name = blob.getFileName().toString();
        boolean gitSha1 = GIT_SHA1_HEX.matcher(name).matches();
        if (!(gitSha1 || SHA256_HEX.matcher(name).matches()) || Files.size(blob) > VERIFY_CACHED_LIMIT) {
            return null;
        }
        String actual;
        if (gitSha1) {
            actual = gitBlobSha1(blob);
        } else {
            try {
                actual = HexFormat.of().formatHex(digest(MessageDigest.getInstance("SHA-256"), blob));
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("SHA-256 is required by every Java platform", e);
            }
        }
        return actual.equals(name) ? null : "its blob " + blob + " (" + Files.size(blob) + " bytes) has the "
                + (gitSha1 ? "git SHA-1 " : "SHA-256 ") + actual + ", not the one it is named by";
    }

    /** Removes a cached file found corrupt: its snapshot link and the blob it points to. */
    static void discardCached(Path snapshotFile) throws IOException {
        Path blob = snapshotFile.getParent().resolve(Files.readSymbolicLink(snapshotFile)).normalize();
        Files.deleteIfExists(snapshotFile);
        Files.deleteIfExists(blob);
    }

    private static void moveAtomically(Path from, Path to) throws IOException {
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /** A relative symlink from the snapshot to the blob, or a copy where symlinks cannot be made. */
    private static void link(HubCache hub, Path tmpDir, Path blob, Path snapshotFile) throws IOException {
        Files.createDirectories(snapshotFile.getParent());
        Path target = snapshotFile.getParent().relativize(blob);
        if (hub.symlinks()) {
            try {
                Files.deleteIfExists(snapshotFile);
                Files.createSymbolicLink(snapshotFile, target);
                return;
            } catch (FileAlreadyExistsException e) {
                if (Files.isRegularFile(snapshotFile)) {
                    return; // another process linked it meanwhile
                }
            } catch (UnsupportedOperationException | FileSystemException e) {
                // symlinks unavailable (e.g. Windows without the privilege): fall back to a copy below
            }
        }
        Path copy = Files.createTempFile(tmpDir, "copy-", ".part");
        try {
            Files.copy(blob, copy, StandardCopyOption.REPLACE_EXISTING);
            moveAtomically(copy, snapshotFile);
        } finally {
            Files.deleteIfExists(copy);
        }
    }

    /** Records {@code refs/<revision>} = commit, unless the revision is the commit itself. */
    static void writeRef(HubRepo repo, String revision, String commit) {
        if (revision.equals(commit) || !revision.equals(repo.revision())) {
            return;
        }
        Path ref = repo.repoFolder().resolve("refs").resolve(revision);
        try {
            if (Files.isRegularFile(ref) && Files.readString(ref, StandardCharsets.UTF_8).trim().equals(commit)) {
                return;
            }
            Files.createDirectories(ref.getParent());
            Path tmp = Files.createTempFile(ref.getParent(), ".ref-", ".tmp");
            try {
                Files.writeString(tmp, commit, StandardCharsets.UTF_8);
                moveAtomically(tmp, ref);
            } finally {
                Files.deleteIfExists(tmp);
            }
        } catch (IOException e) {
            throw new HubException(HubException.Kind.IO, "cannot write " + ref + ": " + e.getMessage()
                    + "; check that the cache directory is writable", e);
        }
    }

    // ------------------------------------------------------------------ helpers

    /** The etag without weak marker and quotes, or null. */
    static String normalizeEtag(String etag) {
        if (etag == null) {
            return null;
        }
        String e = etag.trim();
        if (e.startsWith("W/") || e.startsWith("w/")) {
            e = e.substring(2);
        }
        if (e.length() >= 2 && e.startsWith("\"") && e.endsWith("\"")) {
            e = e.substring(1, e.length() - 1);
        }
        if (HASH_ETAG.matcher(e.toLowerCase(Locale.ROOT)).matches()) {
            e = e.toLowerCase(Locale.ROOT); // hashes compare in lower case
        }
        return e.isEmpty() ? null : e;
    }

    private static String header(HttpResponse<?> response, String name) {
        Optional<String> value = response.headers().firstValue(name);
        return value.filter(v -> !v.isBlank()).orElse(null);
    }

    /** A size header: -1 when absent; a protocol error when it is not a non-negative integer. */
    private static long parseSize(HubCache hub, String value, String headerName, String filename) {
        if (value == null) {
            return -1;
        }
        try {
            long n = Long.parseLong(value.trim());
            if (n >= 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new HubException(HubException.Kind.PROTOCOL, "the server at " + hub.endpoint() + " sent " + headerName
                + " '" + abbreviate(value) + "' for " + filename + ", which is not a size in bytes");
    }

    private static String abbreviate(String s) {
        String clean = s.replaceAll("[\\p{Cntrl}]", "?");
        return clean.length() <= 80 ? clean : clean.substring(0, 77) + "...";
    }

    private static <T> T firstNonNull(T first, T second) {
        return first != null ? first : second;
    }

    static boolean sameOrigin(URI a, URI b) {
        return Objects.equals(lower(a.getScheme()), lower(b.getScheme()))
                && Objects.equals(lower(a.getHost()), lower(b.getHost()))
                && port(a) == port(b);
    }

    private static String lower(String s) {
        return s == null ? null : s.toLowerCase(Locale.ROOT);
    }

    private static int port(URI uri) {
        if (uri.getPort() >= 0) {
            return uri.getPort();
        }
        return "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
    }

    /** For a stalled transfer: which setting gave up. */
    private static String stallHint(IOException e) {
        return e instanceof BodyTimeoutException ? " (HF_HUB_DOWNLOAD_TIMEOUT: the longest wait for data)" : "";
    }

    private static String describe(Throwable e) {
        String message = e.getMessage();
        String text = message == null || message.isBlank() ? e.getClass().getSimpleName()
                : e.getClass().getSimpleName() + ": " + message;
        if (e.getCause() != null && e.getCause() != e && e.getCause().getMessage() != null) {
            text += " (" + e.getCause().getMessage() + ")";
        }
        return text;
    }

    /** Percent-encodes each segment of a slash-separated path, keeping the slashes. */
    static String encodePath(String path) {
        StringBuilder out = new StringBuilder();
        String[] parts = path.split("/", -1);
        for (int i = 0; i < parts.length; i++) {
            if (i > 0) {
                out.append('/');
            }
            out.append(encodeSegment(parts[i]));
        }
        return out.toString();
    }

    /** Percent-encodes everything but RFC 3986 unreserved characters (so '/' becomes %2F). */
    static String encodeSegment(String segment) {
        StringBuilder out = new StringBuilder();
        for (byte b : segment.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xFF;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '-' || c == '.' || c == '_' || c == '~') {
                out.append((char) c);
            } else {
                out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xF, 16)));
            }
        }
        return out.toString();
    }
}
