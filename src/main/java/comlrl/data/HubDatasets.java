package comlrl.data;

import comlrl.model.io.HubCache;
import comlrl.model.io.HubException;
import comlrl.model.io.HubRepo;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Task sets from Hugging Face hub datasets by id ({@code openai/gsm8k}), through the standard
 * Hugging Face cache that {@code huggingface_hub} and {@code datasets} share ({@link HubCache}:
 * {@code HF_HOME}, {@code HF_HUB_CACHE}, {@code HF_HUB_OFFLINE}, {@code HF_TOKEN},
 * {@code HF_ENDPOINT}; files under {@code datasets--owner--name/snapshots/<commit>/}, downloads
 * verified and moved into place atomically).
 *
 * <pre>{@code
 * HubDatasets hub = HubDatasets.fromEnvironment();
 * Dataset train = hub.load(HubSplit.of("openai/gsm8k").withConfig("main"));             // into memory
 * ParquetStream stream = hub.stream(HubSplit.of("openai/gsm8k").withConfig("main"));    // row group by row group
 * }</pre>
 *
 * <p><b>Which files</b>: the revision's file list comes from the hub's API ({@link HubRepo#listFiles});
 * the README's YAML {@code configs:} ({@code data_files} patterns, or a {@code data_dir}) or,
 * without them, the paths ({@code data/{split}-*.parquet}, {@code {split}-*.parquet},
 * {@code {config}/{split}-*.parquet}, {@code {config}/{split}/*.parquet}) say which files belong
 * to the config and split. When those files are Parquet
 * they are read as they are. When the repository holds its data in other formats (JSON, CSV...)
 * or holds no data files at all (a loading script), the hub's Parquet conversion of the dataset
 * is read instead: the branch {@code refs/convert/parquet}, laid out as
 * {@code {config}/{split}/0000.parquet} (a conversion of the default branch, whatever revision
 * was asked for).
 *
 * <p><b>Offline</b> ({@code HF_HUB_OFFLINE=1}): the file list is that of the cached snapshot (the
 * commit {@code refs/<revision>} names), so a split loads offline once it has been loaded online.
 *
 * <p><b>Errors</b>: a missing config or split is a {@link DatasetException} naming the configs and
 * splits that exist; hub failures (unknown repository or revision, access denied, network) are
 * {@link HubException}s naming the repository and the remedy.
 */
public final class HubDatasets {
    /** The hub's branch holding the Parquet conversion of each dataset. */
    public static final String PARQUET_CONVERSION = "refs/convert/parquet";
    private static final String README = "README.md";

    private final HubCache hub;

    private HubDatasets(HubCache hub) {
        this.hub = hub;
    }

    /** Datasets through the cache the environment configures ({@link HubCache#fromEnvironment()}). */
    public static HubDatasets fromEnvironment() {
        return new HubDatasets(HubCache.fromEnvironment());
    }

    /** Datasets through {@code hub}. */
    public static HubDatasets of(HubCache hub) {
        return new HubDatasets(Objects.requireNonNull(hub, "hub"));
    }

    /**
     * Where one split's Parquet files are.
     *
     * @param request the split asked for
     * @param config the config read (the default one when none was asked for)
     * @param revision the revision read: the one asked for, or {@link #PARQUET_CONVERSION}
     * @param commit the commit that revision resolved to
     * @param files the Parquet files in reading order, as paths inside the repository
     */
    public record Resolved(HubSplit request, String config, String revision, String commit, List<String> files) {
        /** Checks the parts and copies the file list. */
        public Resolved {
            Objects.requireNonNull(request, "request");
            Objects.requireNonNull(config, "config");
            Objects.requireNonNull(revision, "revision");
            files = List.copyOf(files);
        }

        /** Whether the files come from the hub's Parquet conversion rather than from the repository's own. */
        public boolean converted() {
            return PARQUET_CONVERSION.equals(revision);
        }

        /** {@code hub dataset openai/gsm8k, config main, split train, revision main (commit e53f...)}. */
        public String describe() {
            return "hub dataset " + request.repoId() + ", config " + config + ", split " + request.split()
                    + ", revision " + revision + (commit == null ? "" : " (commit " + commit + ")");
        }
    }

    /** The repository handle the files are fetched through, and what was found. */
    private record Located(HubRepo repo, Resolved resolved) {}

    /**
     * Finds the Parquet files of {@code split}, downloading only the file list and the README.
     *
     * @throws DatasetException when the config or split does not exist (naming those that do)
     * @throws HubException when the hub refuses or cannot be reached, or, offline, nothing is cached
     */
    public Resolved resolve(HubSplit split) {
        return locate(split).resolved();
    }

    /**
     * Loads {@code split} into memory: downloads its Parquet files (unless cached) and reads them
     * in order, as {@link Dataset#fromParquet} reads one file. The set's {@link Dataset#source()}
     * is {@link Resolved#describe()}.
     *
     * @throws DatasetException when the config or split does not exist, or a file is not valid Parquet
     * @throws HubException when a file cannot be had
     */
    public Dataset load(HubSplit split) {
        Located at = locate(split);
        List<Map<String, Object>> rows = new ArrayList<>();
        for (String file : at.resolved().files()) {
            rows.addAll(ParquetLoader.load(at.repo().file(file, true)));
        }
        return Dataset.fromRows(rows).withSource(at.resolved().describe());
    }

    /**
     * Streams {@code split} row group by row group ({@link ParquetStream}); each file is downloaded
     * (unless cached) when the stream first reaches it.
     *
     * @throws DatasetException when the config or split does not exist
     * @throws HubException when the file list cannot be had
     */
    public ParquetStream stream(HubSplit split) {
        Located at = locate(split);
        List<ParquetStream.Shard> shards = new ArrayList<>();
        for (String file : at.resolved().files()) {
            shards.add(new ParquetStream.Shard(file, () -> at.repo().file(file, true)));
        }
        return ParquetStream.ofShards(at.resolved().describe(), shards);
    }

    // ---------------------------------------------------------------- resolution

    private Located locate(HubSplit split) {
        Objects.requireNonNull(split, "split");
        HubRepo repo = hub.datasetRepo(split.repoId(), split.revision());
        List<String> files = repo.listFiles();
        HubLayout layout = HubLayout.of(files, files.contains(README) ? readme(repo) : null);
        String where = "dataset '" + split.repoId() + "' (revision " + split.revision() + offlineNote() + ")";

        String config = layout.configOrNull(split.config());
        List<String> chosen = config == null ? null : layout.find(config, split.split());
        if (chosen != null && !chosen.isEmpty() && chosen.stream().allMatch(HubLayout::isParquet)) {
            return new Located(repo, new Resolved(split, config, split.revision(), repo.commit().orElse(null), chosen));
        }
        if (layout.isEmpty() || layout.hasOtherFormats()) {
            return converted(split, layout, where);
        }
        // all Parquet, but not this config or split: say which exist
        config = layout.chooseConfig(split.config(), where);
        layout.splitFiles(config, split.split(), where);
        throw new DatasetException("the README of " + where + " declares split '" + split.split() + "' of config '"
                + config + "', but its data_files patterns match no file"
                + (hub.offline() ? " in the Hugging Face cache; load it once online (without HF_HUB_OFFLINE)"
                        : "; check the dataset card's configs"));
    }

    /** The split from the hub's Parquet conversion branch. */
    private Located converted(HubSplit split, HubLayout original, String where) {
        HubRepo repo = hub.datasetRepo(split.repoId(), PARQUET_CONVERSION);
        List<String> files;
        try {
            files = repo.listFiles();
        } catch (HubException e) {
            if (e.kind() != HubException.Kind.REVISION_NOT_FOUND && e.kind() != HubException.Kind.NOT_CACHED_OFFLINE) {
                throw e;
            }
            throw new DatasetException(where + " holds no Parquet files for split '" + split.split() + "' ("
                    + (original.isEmpty() ? "no data files" : "configs: " + original.describe()) + ") and its Parquet "
                    + "conversion (" + PARQUET_CONVERSION + ") cannot be had: " + e.getMessage(), e);
        }
        HubLayout layout = HubLayout.ofParquet(files);
        String convertedWhere = "dataset '" + split.repoId() + "' (Parquet conversion " + PARQUET_CONVERSION
                + offlineNote() + ")";
        String config = layout.chooseConfig(split.config(), convertedWhere);
        List<String> chosen = layout.splitFiles(config, split.split(), convertedWhere);
        return new Located(repo, new Resolved(split, config, PARQUET_CONVERSION, repo.commit().orElse(null), chosen));
    }

    private String offlineNote() {
        return hub.offline() ? "; offline: only its files in the Hugging Face cache are known" : "";
    }

    private static String readme(HubRepo repo) {
        Path file = repo.file(README, false);
        if (file == null) {
            return null;
        }
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw DatasetException.inFile(file, "cannot read the dataset card: " + e.getMessage(), e);
        }
    }
}
