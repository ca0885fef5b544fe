package comlrl.logging;

import comlrl.checkpoint.Checkpoints;
import comlrl.data.Dataset;
import comlrl.data.TaskSet;
import comlrl.generation.GenerationSettings;
import comlrl.report.HtmlReport;
import comlrl.report.RunTimes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a run directory records besides its metrics, and the one writer of it, whoever trains: the
 * command line ({@code train CONFIG.yaml}) and a trainer built from Java with an output directory
 * both write these files through this class.
 * <ul>
 *   <li>{@code config.json}: the resolved config ({@code algorithm}, {@code num_agents}, the models,
 *       {@code args}, {@code output_dir}), per agent the {@code generation} settings used when known,
 *       and {@code provenance} (library and Java version, start time, seed, git revision, threads);</li>
 *   <li>{@code splits.json}: the rows the training and evaluation sets hold, in the order they are read;</li>
 *   <li>{@code run.json}: wall-clock times ({@link RunTimes});</li>
 *   <li>{@code report.html} when asked ({@link HtmlReport}).</li>
 * </ul>
 * A trainer built from Java records its run through its {@link MetricsLogger}: {@code config.json} and
 * {@code splits.json} beside the first metric event (a resumed preference-learning run's in its
 * {@code resume-*} directory), {@code run.json} and the report when it closes after a run that did not fail.
 *
 * @param config     {@code config.json} as resolved, before {@code provenance}
 * @param seed       the run's seed, for {@code provenance}
 * @param train      the training set, for {@code splits.json}
 * @param eval       the evaluation set, or null
 * @param evalRows   rows each evaluation reads ({@code eval_num_samples}), or null
 * @param report     whether {@code report.html} is written when the run ends
 * @param generation each agent's generate settings once the trainer resolved them ({@link #withGeneration}), or null
 */
public record RunRecord(Map<String, Object> config, Object seed, TaskSet train, Dataset eval, Integer evalRows,
        boolean report, List<GenerationSettings.Resolved> generation) {
    /** The file names in a run directory. */
    static final String CONFIG_FILE = "config.json";
    static final String SPLITS_FILE = "splits.json";

    /** This record with each agent's generate settings, for {@code config.json}. */
    RunRecord withGeneration(List<GenerationSettings.Resolved> settings) {
        return new RunRecord(config, seed, train, eval, evalRows, report,
                settings == null ? null : java.util.Collections.unmodifiableList(new java.util.ArrayList<>(settings)));
    }

    /** Writes {@code config.json} (with each agent's generation settings once known) and {@code splits.json} into {@code dir}. */
    void writeStart(Path dir) {
        Map<String, Object> resolved = new LinkedHashMap<>(config);
        resolved.put("output_dir", dir.toString());
        writeConfig(dir, resolved, generation, seed);
        writeSplits(dir, Map.of(), train, eval, evalRows);
    }

    /** Writes {@code run.json} into {@code dir}, and {@code report.html} when asked. */
    void writeEnd(Path dir, RunTimes times) {
        times.write(dir);
        if (report) {
            HtmlReport.write(dir);
        }
    }

    /**
     * Writes {@code config.json}: the config as resolved, then (once the agents are loaded; null entries:
     * agents another process holds) per agent every generate setting used with its source, then provenance.
     */
    public static void writeConfig(Path dir, Map<String, Object> resolved, List<GenerationSettings.Resolved> generation,
            Object seed) {
        Map<String, Object> out = new LinkedHashMap<>(resolved);
        if (generation != null) {
            Map<String, Object> perAgent = new LinkedHashMap<>();
            for (int i = 0; i < generation.size(); i++) {
                if (generation.get(i) != null) { // null: an agent another process holds (ddp_split: agents)
                    perAgent.put("agent_" + i, generation.get(i).describe());
                }
            }
            out.put("generation", perAgent);
        }
        out.put("provenance", provenance(seed));
        createDirectories(dir);
        Checkpoints.writeJson(dir.resolve(CONFIG_FILE), out);
    }

    /** Library and Java version, start time (now), seed, git revision of the working directory, threads. */
    static Map<String, Object> provenance(Object seed) {
        Map<String, Object> provenance = new LinkedHashMap<>();
        provenance.put("comlrl_version", RunRecord.class.getPackage().getImplementationVersion());
        provenance.put("java_version", System.getProperty("java.version"));
        provenance.put("started_at", Instant.now().toString());
        provenance.put("seed", seed);
        provenance.put("git_revision", gitRevision());
        provenance.put("threads", System.getenv("OMP_NUM_THREADS"));
        return provenance;
    }

    /**
     * Writes {@code splits.json}: the split settings ({@code dataset}); per set, its {@code source},
     * {@code fingerprint}, row count and the {@code rows} it holds in reading order (evaluation: also the
     * {@code evaluated_rows}, the first {@code evalRows}). A streaming set records its source only.
     */
    public static void writeSplits(Path dir, Map<String, Object> datasetSettings, TaskSet train, TaskSet eval,
            Integer evalRows) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("dataset", datasetSettings);
        Map<Dataset, String> fingerprints = new IdentityHashMap<>(); // a split shares one source
        out.put("train", describeRows(train, null, fingerprints));
        if (eval != null) {
            out.put("eval", describeRows(eval, evalRows, fingerprints));
        }
        createDirectories(dir);
        Checkpoints.writeJson(dir.resolve(SPLITS_FILE), out);
    }

    private static Map<String, Object> describeRows(TaskSet set, Integer evaluated, Map<Dataset, String> fingerprints) {
        Map<String, Object> out = new LinkedHashMap<>();
        if (!(set instanceof Dataset d)) {
            out.put("source", set instanceof comlrl.data.JsonlStream js ? js.file().toString()
                    : set instanceof comlrl.data.ParquetStream ps ? String.valueOf(ps.stateDict().get(comlrl.data.ParquetStream.SOURCE))
                    : String.valueOf(set));
            out.put("streaming", true);
            return out;
        }
        Dataset root = d.root();
        out.put("source", root.source());
        out.put("fingerprint", fingerprints.computeIfAbsent(root, Dataset::fingerprint));
        out.put("source_rows", root.size());
        int[] rows = d.rootRows();
        out.put("rows", rows);
        if (evaluated != null) {
            out.put("evaluated_rows", Arrays.copyOf(rows, Math.min(evaluated, rows.length)));
        }
        return out;
    }

    private static void createDirectories(Path dir) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new IllegalArgumentException("Cannot create run directory " + dir + ": " + e.getMessage(), e);
        }
    }

    private static String gitRevision() {
        try {
            Process p = new ProcessBuilder("git", "rev-parse", "HEAD").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes()).trim();
            return p.waitFor() == 0 ? out : null;
        } catch (Exception e) {
            return null;
        }
    }
}
