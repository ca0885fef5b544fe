package comlrl.model.io;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * One repository resolved by {@link HubCache#repo} (a model) or {@link HubCache#datasetRepo} (a
 * dataset): either a local directory, or a repository at a revision in the Hugging Face cache.
 * Files are fetched one at a time with {@link #file}, so a loader can read
 * {@code model.safetensors.index.json} first and then ask for the shards it lists;
 * {@link #listFiles} names them all. All files of one {@code HubRepo} come from the same commit.
 *
 * <pre>{@code
 * HubRepo repo = HubCache.fromEnvironment().repo("Qwen/Qwen2.5-0.5B");
 * Path config = repo.file("config.json", true);
 * Path single = repo.file("model.safetensors", false);       // null when the model is sharded
 * Path generation = repo.file("generation_config.json", false);
 * Path dir = repo.directory();                               // snapshots/<commit>
 *
 * HubRepo data = HubCache.fromEnvironment().datasetRepo("openai/gsm8k", "main");
 * List<String> files = data.listFiles();                     // README.md, main/train-00000-of-00001.parquet, ...
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class HubRepo {
    private final HubCache hub;
    private final HubRepoType type;
    private final String repoId;
    private final String revision;
    private final Path localDir;
    private final Path repoFolder;
    private String commit;

    private HubRepo(HubCache hub, HubRepoType type, String repoId, String revision, Path localDir, Path repoFolder,
                    String commit) {
        this.hub = hub;
        this.type = type;
        this.repoId = repoId;
        this.revision = revision;
        this.localDir = localDir;
        this.repoFolder = repoFolder;
        this.commit = commit;
    }

    static HubRepo local(Path dir) {
        return new HubRepo(null, HubRepoType.MODEL, dir.toString(), null, dir, null, null);
    }

    static HubRepo cached(HubCache hub, HubRepoType type, String repoId, String revision, Path repoFolder) {
        return new HubRepo(hub, type, repoId, revision, null, repoFolder,
                HubCache.isCommitHash(revision) ? revision : null);
    }

    /** Whether this is a model or a dataset repository (a local directory counts as a model). */
    public HubRepoType type() {
        return type;
    }

    /** The repository id ({@code Qwen/Qwen2.5-0.5B}), or the directory for a local model. */
    public String repoId() {
        return repoId;
    }

    /** The requested revision ({@code main}, a tag, a commit hash), or null for a local model. */
    public String revision() {
        return revision;
    }

    /** Whether this is a local directory rather than a cached repository. */
    public boolean isLocal() {
        return localDir != null;
    }

    /**
     * The repository's folder in the cache ({@code models--org--name}, {@code datasets--org--name}),
     * or null for a local model.
     */
    public Path repoFolder() {
        return repoFolder;
    }

    /**
     * The commit the revision resolved to: from a download, or else from {@code refs/<revision>} in
     * the cache; empty for a local model or when neither is known yet.
     */
    public synchronized Optional<String> commit() {
        if (isLocal()) {
            return Optional.empty();
        }
        if (commit == null) {
            commit = readRef().orElse(null);
        }
        return Optional.ofNullable(commit);
    }

    /**
     * The directory holding this model's files: the local directory, or {@code snapshots/<commit>}.
     *
     * @throws IllegalStateException when the commit is not known yet (nothing cached, nothing
     *     fetched): call {@link #file} first
     */
    public Path directory() {
        if (isLocal()) {
            return localDir;
        }
        String c = commit().orElseThrow(() -> new IllegalStateException("no revision '" + revision + "' of "
                + repoId + " is cached in " + repoFolder + " yet; fetch a file with file(...) first"));
        return repoFolder.resolve("snapshots").resolve(c);
    }

    /** {@link #file}{@code (filename, false)} as an Optional. */
    public Optional<Path> findFile(String filename) {
        return Optional.ofNullable(file(filename, false));
    }

    /**
     * The local path of {@code filename} (a path inside the repository, such as
     * {@code config.json} or {@code model-00001-of-00002.safetensors}): from the local directory,
     * from the cache, or downloaded into the cache unless offline.
     *
     * @param required whether a missing file is an error; if false, a missing file (absent from a
     *     local directory, not on the hub, or not cached while offline) gives null
     * @return the file, or null when it is optional and missing
     * @throws HubException naming the repository, the file and the remedy when a required file
     *     cannot be had, or when the hub refuses or cannot be reached
     */
    public Path file(String filename, boolean required) {
        validateFilename(filename);
        if (isLocal()) {
            Path path = localDir.resolve(filename);
            if (Files.isRegularFile(path)) {
                return path;
            }
            if (required) {
                throw new HubException(HubException.Kind.LOCAL_FILE_MISSING, "local model directory " + localDir
                        + " has no " + filename + "; a Hugging Face model directory needs config.json, "
                        + "tokenizer.json, tokenizer_config.json and model.safetensors (or "
                        + "model.safetensors.index.json with its shards)");
            }
            return null;
        }
        synchronized (this) {
            Optional<String> known = commit();
            if (known.isPresent()) {
                Path snapshotFile = repoFolder.resolve("snapshots").resolve(known.get()).resolve(filename);
                if (Files.isRegularFile(snapshotFile) && trusted(snapshotFile, filename)) {
                    return snapshotFile;
                }
                if (Files.exists(noExistMarker(known.get(), filename))) {
                    return missing(filename, required, "the hub reported it absent at commit " + known.get()
                            + " (recorded in " + noExistMarker(known.get(), filename) + ")");
                }
            }
            if (hub.offline()) {
                if (!required) {
                    return null;
                }
                throw notCachedOffline(filename);
            }
            HubDownload.Result result = HubDownload.fetch(hub, this, filename, known.orElse(revision));
            if (result.commit() != null && commit == null) {
                commit = result.commit();
            }
            if (result.path() == null) {
                // the request named a commit when one was known, so the answer holds for that commit
                String at = result.commit() != null ? result.commit() : known.orElse(null);
                if (at != null) {
                    markMissing(at, filename);
                }
                return missing(filename, required, result.missingReason());
            }
            return result.path();
        }
    }

    /**
     * The paths of all files of the repository at this revision (forward slashes, sorted), such as
     * {@code main/train-00000-of-00002.parquet}. Online, from the hub's API in one request, at the
     * commit when one is known (see "cache first" in {@link HubCache}), else at the revision, whose
     * commit it then fixes for this handle and records in {@code refs/}; offline
     * ({@code HF_HUB_OFFLINE}), the files of the cached snapshot, which may be fewer than the
     * hub holds. A local directory lists its own files.
     *
     * @throws HubException when the repository or revision does not exist, access is denied, the
     *     hub cannot be reached, or, offline, nothing of this revision is cached
     */
    public List<String> listFiles() {
        if (isLocal()) {
            return filesUnder(localDir);
        }
        synchronized (this) {
            Optional<String> known = commit();
            if (hub.offline()) {
                Path snapshot = known.map(c -> repoFolder.resolve("snapshots").resolve(c)).orElse(null);
                if (snapshot == null || !Files.isDirectory(snapshot)) {
                    throw notCachedOffline("the list of its files");
                }
                return filesUnder(snapshot);
            }
            HubDownload.Listing listing = HubDownload.list(hub, this, known.orElse(revision));
            if (commit == null) {
                commit = listing.commit();
            }
            return listing.files();
        }
    }

    private static List<String> filesUnder(Path dir) {
        try (Stream<Path> walk = Files.walk(dir)) {
            return walk.filter(Files::isRegularFile)
                    .map(p -> dir.relativize(p).toString().replace('\\', '/'))
                    .sorted()
                    .collect(Collectors.toUnmodifiableList());
        } catch (IOException | java.io.UncheckedIOException e) {
            throw new HubException(HubException.Kind.IO, "cannot list the files in " + dir + ": " + e.getMessage()
                    + "; check its permissions", e);
        }
    }

    /**
     * Whether the cached {@code snapshotFile} may be used: true unless its content does not match
     * the hash its blob is named by ({@link HubDownload#cachedFileProblem}); then, online, the link
     * and the blob are removed so that the file is downloaded again, and offline it is an error.
     */
    private boolean trusted(Path snapshotFile, String filename) {
        try {
            String problem = HubDownload.cachedFileProblem(snapshotFile);
            if (problem == null) {
                return true;
            }
            if (hub.offline()) {
                throw new HubException(HubException.Kind.IO, "the cached " + filename + " of " + type.noun() + " '"
                        + repoId + "' is damaged: " + problem + ". Unset " + hub.offlineVariable() + " to download it "
                        + "again, or delete " + snapshotFile + " and its blob");
            }
            HubDownload.discardCached(snapshotFile);
            return false;
        } catch (IOException e) {
            throw new HubException(HubException.Kind.IO, "cannot check the cached " + snapshotFile + ": " + e.getMessage()
                    + "; check the cache's permissions, or delete the file to download it again", e);
        }
    }

    private HubException notCachedOffline(String what) {
        return new HubException(HubException.Kind.NOT_CACHED_OFFLINE, type.noun() + " '" + repoId + "' (revision "
                + revision + "): " + what + " is not in the Hugging Face cache at " + hub.cacheDir()
                + " (" + repoFolder.getFileName() + "), and " + hub.offlineVariable()
                + " is set, which forbids downloading it. Unset " + hub.offlineVariable()
                + " to download it once, point HF_HUB_CACHE or HF_HOME at a cache that holds it"
                + (type == HubRepoType.MODEL ? ", or pass a local model directory instead of the id." : "."));
    }

    private Path missing(String filename, boolean required, String why) {
        if (!required) {
            return null;
        }
        throw new HubException(HubException.Kind.FILE_NOT_FOUND, type.noun() + " '" + repoId + "' (revision "
                + revision + ") has no file " + filename + ": " + why + "; check the file name and the revision");
    }

    /** The commit recorded for this revision, if any. */
    private Optional<String> readRef() {
        if (HubCache.isCommitHash(revision)) {
            return Optional.of(revision);
        }
        Path ref = repoFolder.resolve("refs").resolve(revision);
        try {
            if (Files.isRegularFile(ref)) {
                String hash = Files.readString(ref, StandardCharsets.UTF_8).trim();
                if (HubCache.isCommitHash(hash)) {
                    return Optional.of(hash);
                }
                throw new HubException(HubException.Kind.IO, ref + " should hold a commit hash (40 hex digits) but "
                        + "holds '" + (hash.length() > 60 ? hash.substring(0, 57) + "..." : hash) + "'; delete it to "
                        + "resolve revision '" + revision + "' again");
            }
        } catch (IOException e) {
            throw new HubException(HubException.Kind.IO, "cannot read " + ref + ": " + e.getMessage()
                    + "; check the cache's permissions or delete the file", e);
        }
        return Optional.empty();
    }

    private Path noExistMarker(String commitHash, String filename) {
        return repoFolder.resolve(".no_exist").resolve(commitHash).resolve(filename);
    }

    private void markMissing(String commitHash, String filename) {
        Path marker = noExistMarker(commitHash, filename);
        try {
            Files.createDirectories(marker.getParent());
            if (!Files.exists(marker)) {
                Files.createFile(marker);
            }
        } catch (IOException e) {
            // only a shortcut for the next run; the answer stays correct without it
        }
    }

    private void validateFilename(String filename) {
        Objects.requireNonNull(filename, "filename");
        boolean valid = !filename.isEmpty() && !filename.startsWith("/") && !filename.contains("\\")
                && !filename.endsWith("/") && filename.chars().noneMatch(c -> c < 0x20);
        for (String part : filename.split("/", -1)) {
            valid &= !part.isEmpty() && !part.equals(".") && !part.equals("..");
        }
        if (!valid) {
            throw new IllegalArgumentException("'" + filename + "' is not a file path inside a repository "
                    + "(use forward slashes, no '..', no leading '/')");
        }
    }

    @Override
    public String toString() {
        return isLocal() ? "HubRepo(local " + localDir + ")" : "HubRepo(" + repoId + "@" + revision + ")";
    }
}
