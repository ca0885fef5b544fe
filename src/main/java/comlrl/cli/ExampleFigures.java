package comlrl.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code figures}: the README's example results, measured rather than written. Each {@linkplain #FIGURES
 * quoted figure} (an example config, possibly with {@code --set} overrides) is trained once per seed with
 * {@code bin/comlrl train} in its own JVM, on {@code COMLRL_THREADS} threads (1 unless given) and AVX2
 * kernels ({@link #KERNELS}), with the built-in models written afresh into the work directory; the console's {@code eval reward before
 * training} and {@code after training} lines (the mean over the example's {@code eval_repeats}
 * evaluation passes) are read back. The per-seed values, their mean, minimum and maximum and the wall
 * times go to {@code docs/example-figures.json}, and every README cell between {@code <!-- fig:ID -->}
 * and {@code <!-- /fig -->} is rewritten from it ({@link #cell}). {@code ExampleFiguresTest} (tagged
 * slow) trains each algorithm's main example once and fails when its result leaves the recorded spread.
 */
@Command(name = "figures", mixinStandardHelpOptions = true,
        description = "Train the README's quoted examples over several seeds, write docs/example-figures.json and "
                + "rewrite the README's figure cells from it (takes tens of minutes on 2 cores).")
final class ExampleFigures implements Callable<Integer> {
    static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    static final Path JSON_FILE = Path.of("docs", "example-figures.json");
    static final Path README = Path.of("README.md");

    /**
     * One quoted figure: {@code id} names its README cell, {@code example} the config, {@code sets} the
     * {@code --set} overrides of a variant; {@code main} marks each algorithm's main example, the one
     * the slow test trains again.
     */
    record Figure(String id, String example, List<String> sets, boolean main) {
        static Figure main(String id, String example) {
            return new Figure(id, example, List.of(), true);
        }

        static Figure variant(String id, String example, String... sets) {
            return new Figure(id, example, List.of(sets), false);
        }
    }

    /** Every figure the README quotes. */
    static final List<Figure> FIGURES = List.of(
            Figure.main("length-ratio", "examples/length-ratio.yaml"),
            Figure.main("iac", "examples/iac.yaml"),
            Figure.main("maac", "examples/maac.yaml"),
            Figure.main("madpo", "examples/madpo.yaml"),
            Figure.main("madpo-iter", "examples/madpo-iter.yaml"),
            Figure.main("marlhf", "examples/marlhf.yaml"),
            Figure.variant("marlhf-iac", "examples/marlhf.yaml", "rl_algorithm=iac", "rollout_buffer_size=16",
                    "train_batch_size=16", "critic_learning_rate=1.0e-3"),
            Figure.main("marlhf-iter", "examples/marlhf-iter.yaml"),
            Figure.variant("marlhf-iter-history", "examples/marlhf-iter.yaml", "comparator_policy=history",
                    "comparator_history_k=2"),
            // LoRA agents (MAGRPO): a variant of the length-ratio job, not trained again by the slow test
            new Figure("lora", "examples/lora.yaml", List.of(), false));

    /**
     * The CPU kernels every run uses, so that its numbers should repeat on any x86-64 machine with AVX2
     * (checked only by forcing them on an AVX-512 machine): libtorch
     * picks its vectorised kernels by the CPU (AVX-512 where there is one), and a run with AVX-512 kernels
     * differs from one with AVX2 kernels in the 7th digit of the first loss and, 40 epochs of sampling
     * later, in its result (examples/length-ratio.yaml, seed 42: 1.0000 against 0.9835). OpenBLAS's
     * kernels are pinned too (forcing Haswell's on an AVX-512 machine changed nothing there).
     */
    static final Map<String, String> KERNELS = Map.of("ATEN_CPU_CAPABILITY", "avx2", "OPENBLAS_CORETYPE", "Haswell");

    /** One training run's results: the evaluation reward before and after training, and its wall time. */
    record Outcome(long seed, double before, double after, double wallS) {
    }

    private static final Pattern BEFORE = Pattern.compile("(?m)^eval reward before training:\\s+(\\S+)$");
    private static final Pattern AFTER = Pattern.compile("(?m)^eval reward after training:\\s+(\\S+)$");
    private static final Pattern CELL = Pattern.compile("<!-- fig:([a-z0-9-]+) -->(.*?)<!-- /fig -->");

    @Option(names = "--seeds", split = ",", paramLabel = "SEED", description = "seeds of each figure (default: 42,1,2)")
    List<Long> seeds = List.of(42L, 1L, 2L);

    @Option(names = "--only", split = ",", paramLabel = "ID", description = "measure only these figures (ids: "
            + "length-ratio, iac, maac, madpo, madpo-iter, marlhf, marlhf-iac, marlhf-iter, marlhf-iter-history, lora); "
            + "the others keep their recorded values")
    List<String> only;

    @Option(names = "--threads", description = "COMLRL_THREADS of every run (default: 1)")
    int threads = 1;

    @Option(names = "--work-dir", description = "run directories and built-in models (default: target/example-figures)")
    Path workDir = Path.of("target", "example-figures");

    @Option(names = "--readme-only", description = "only rewrite the README's cells from docs/example-figures.json")
    boolean readmeOnly;

    @Override
    public Integer call() throws Exception {
        Path root = root();
        Path jsonFile = root.resolve(JSON_FILE);
        if (!readmeOnly) {
            ObjectNode recorded = Files.exists(jsonFile) ? (ObjectNode) JSON.readTree(jsonFile.toFile()) : null;
            Path work = root.resolve(workDir);
            deleteTree(work.resolve("comlrl-home")); // built-in models of this version, not a cached older one
            Map<String, ObjectNode> byId = new LinkedHashMap<>();
            if (recorded != null) {
                recorded.withArray("figures").forEach(f -> byId.put(f.get("id").asText(), (ObjectNode) f));
            }
            for (Figure figure : FIGURES) {
                if (only != null && !only.contains(figure.id())) {
                    continue;
                }
                List<Outcome> outcomes = new ArrayList<>();
                double loadBefore = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
                for (long seed : seeds) {
                    Outcome o = train(root, figure, seed, work, threads);
                    System.err.printf(Locale.ROOT, "%s seed %d: %.4f -> %.4f (%.0f s)%n", figure.id(), seed, o.before(),
                            o.after(), o.wallS());
                    outcomes.add(o);
                }
                double loadAfter = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
                byId.put(figure.id(), record(figure, outcomes, loadBefore, loadAfter));
            }
            ObjectNode out = JSON.createObjectNode();
            // The command that regenerates every entry; --only replaces some entries and keeps the others.
            out.put("generated_by", "bin/comlrl figures");
            out.put("threads", threads);
            out.set("kernels", JSON.valueToTree(new java.util.TreeMap<>(KERNELS)));
            out.put("cpu", cpuModel());
            out.put("cores", Runtime.getRuntime().availableProcessors());
            out.put("note", "values are the console's eval reward before/after training (the mean over eval_repeats "
                    + "passes), per seed; wall_s is each bin/comlrl train process's wall time, load_average the "
                    + "1-minute system load before and after a figure's runs (other jobs shared the cores)");
            ArrayNode list = out.putArray("figures");
            FIGURES.stream().map(Figure::id).filter(byId::containsKey).forEach(id -> list.add(byId.get(id)));
            Files.createDirectories(jsonFile.getParent());
            Files.writeString(jsonFile, JSON.writeValueAsString(out) + "\n");
            System.out.println("wrote " + jsonFile);
        }
        Path readme = root.resolve(README);
        String text = Files.readString(readme);
        String updated = regenerate(text, JSON.readTree(jsonFile.toFile()));
        if (!updated.equals(text)) {
            Files.writeString(readme, updated);
        }
        System.out.println((updated.equals(text) ? "unchanged " : "rewrote ") + readme);
        return 0;
    }

    /** The project root: {@code -Dcomlrl.root} (set by bin/comlrl), else the working directory. */
    static Path root() {
        String root = System.getProperty("comlrl.root");
        return Path.of(root != null ? root : "").toAbsolutePath();
    }

    /**
     * Trains {@code figure} with {@code seed} through {@code bin/comlrl train} in a child JVM (as a user
     * runs the example) with {@code threads} threads, the {@link #KERNELS} and {@code work/comlrl-home} as COMLRL_HOME, into
     * {@code work/<id>-seed<seed>}; its stdout and stderr are kept there as {@code console.log}.
     */
    static Outcome train(Path root, Figure figure, long seed, Path work, int threads) throws IOException, InterruptedException {
        Path runDir = work.resolve(figure.id() + "-seed" + seed);
        deleteTree(runDir);
        Files.createDirectories(runDir);
        List<String> command = new ArrayList<>(List.of(root.resolve("bin/comlrl").toString(), "train",
                root.resolve(figure.example()).toString(), "--output-dir", runDir.toString(), "--set", "seed=" + seed));
        for (String set : figure.sets()) {
            command.add("--set");
            command.add(set);
        }
        Path log = runDir.resolve("console.log");
        ProcessBuilder pb = new ProcessBuilder(command).directory(root.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        pb.environment().put("COMLRL_THREADS", Integer.toString(threads));
        pb.environment().putAll(KERNELS);
        pb.environment().put("COMLRL_HOME", work.resolve("comlrl-home").toAbsolutePath().toString());
        long start = System.nanoTime();
        int code = pb.start().waitFor();
        double wallS = (System.nanoTime() - start) / 1e9;
        String console = Files.readString(log, StandardCharsets.UTF_8);
        if (code != 0) {
            throw new IllegalStateException(figure.id() + " seed " + seed + " failed (exit " + code + "); see " + log
                    + ":\n" + console.lines().reduce((a, b) -> b).orElse(""));
        }
        return new Outcome(seed, value(BEFORE, console, log), value(AFTER, console, log), wallS);
    }

    private static double value(Pattern line, String console, Path log) {
        Matcher m = line.matcher(console);
        if (!m.find()) {
            throw new IllegalStateException(log + " has no line matching " + line.pattern());
        }
        return Double.parseDouble(m.group(1));
    }

    /** A figure's JSON: its runs, and the mean, minimum and maximum of before, after and wall time. */
    static ObjectNode record(Figure figure, List<Outcome> outcomes, double loadBefore, double loadAfter) {
        ObjectNode node = JSON.createObjectNode();
        node.put("id", figure.id());
        node.put("example", figure.example());
        ArrayNode sets = node.putArray("set");
        figure.sets().forEach(sets::add);
        node.put("main", figure.main());
        ArrayNode runs = node.putArray("runs");
        for (Outcome o : outcomes) {
            ObjectNode run = runs.addObject();
            run.put("seed", o.seed());
            run.put("before", o.before());
            run.put("after", o.after());
            run.put("wall_s", Math.round(o.wallS() * 10) / 10.0);
        }
        node.set("before", summary(outcomes.stream().mapToDouble(Outcome::before).toArray()));
        node.set("after", summary(outcomes.stream().mapToDouble(Outcome::after).toArray()));
        node.set("wall_s", summary(outcomes.stream().mapToDouble(o -> Math.round(o.wallS() * 10) / 10.0).toArray()));
        ArrayNode load = node.putArray("load_average");
        load.add(Math.round(loadBefore * 100) / 100.0);
        load.add(Math.round(loadAfter * 100) / 100.0);
        return node;
    }

    private static ObjectNode summary(double[] values) {
        ObjectNode s = JSON.createObjectNode();
        s.put("mean", Math.round(java.util.Arrays.stream(values).average().orElse(Double.NaN) * 1e4) / 1e4);
        s.put("min", java.util.Arrays.stream(values).min().orElse(Double.NaN));
        s.put("max", java.util.Arrays.stream(values).max().orElse(Double.NaN));
        return s;
    }

    /**
     * A README cell: {@code mean before → mean after (after min–max)} over the seeds, two decimals
     * ({@code (every seed 1.00)} when the range is one value).
     */
    static String cell(JsonNode figure) {
        JsonNode after = figure.get("after");
        String min = String.format(Locale.ROOT, "%.2f", after.get("min").asDouble());
        String max = String.format(Locale.ROOT, "%.2f", after.get("max").asDouble());
        String mean = String.format(Locale.ROOT, "%.2f → %.2f", figure.get("before").get("mean").asDouble(),
                after.get("mean").asDouble());
        return mean + (min.equals(max) ? " (every seed " + max + ")" : " (after " + min + "–" + max + ")");
    }

    /**
     * {@code readme} with every {@code <!-- fig:ID -->…<!-- /fig -->} cell rewritten from {@code figures}
     * ({@code docs/example-figures.json}); a cell naming no recorded figure, or a recorded figure without a
     * cell, is an error.
     */
    static String regenerate(String readme, JsonNode figures) {
        Map<String, JsonNode> byId = new LinkedHashMap<>();
        figures.get("figures").forEach(f -> byId.put(f.get("id").asText(), f));
        Matcher m = CELL.matcher(readme);
        StringBuilder out = new StringBuilder();
        java.util.Set<String> seen = new java.util.HashSet<>();
        while (m.find()) {
            JsonNode figure = byId.get(m.group(1));
            if (figure == null) {
                throw new IllegalArgumentException("README cell fig:" + m.group(1) + " has no figure in " + JSON_FILE
                        + " (recorded: " + byId.keySet() + ")");
            }
            seen.add(m.group(1));
            m.appendReplacement(out, Matcher.quoteReplacement("<!-- fig:" + m.group(1) + " -->" + cell(figure) + "<!-- /fig -->"));
        }
        m.appendTail(out);
        List<String> missing = byId.keySet().stream().filter(id -> !seen.contains(id)).toList();
        if (!missing.isEmpty()) {
            throw new IllegalArgumentException(JSON_FILE + " records " + missing + ", which no README cell quotes");
        }
        return out.toString();
    }

    private static String cpuModel() {
        try (Stream<String> lines = Files.lines(Path.of("/proc/cpuinfo"))) {
            return lines.filter(l -> l.startsWith("model name")).map(l -> l.substring(l.indexOf(':') + 1).trim())
                    .findFirst().orElse(System.getProperty("os.arch"));
        } catch (IOException e) {
            return System.getProperty("os.arch");
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
