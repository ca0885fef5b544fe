package comlrl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.data.Dataset;
import comlrl.distributed.DistributedContext;
import comlrl.distributed.Launcher;
import comlrl.distributed.RankInfo;
import comlrl.logging.MetricSink;
import comlrl.tensor.DType;
import comlrl.tensor.Engine;
import comlrl.trainers.reinforce.MAGRPOConfig;
import comlrl.trainers.reinforce.MAGRPOTrainer;
import comlrl.utils.DdpSplit;
import comlrl.utils.ParallelTraining;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code bench --processes P}: the MAGRPO training step (G samples per agent, joint rewards, one
 * AdamW step per agent and item) on one process and on P processes of one machine with
 * {@code parallel_training: ddp}, the machine's threads divided between the processes (T threads:
 * one process with T, P processes with T/P each), so the figure is what splitting one run gains
 * over one process using the same cores. Each configuration runs in fresh JVMs started as
 * {@code bin/comlrl launch} starts them; the report gives seconds per item (median), the speedup
 * and efficiency against one process, and the share of each item rank 0 spent inside collectives
 * (moving data and waiting for the others).
 */
final class DdpBench {
    /** The line a rank-0 worker prints its measurements on. */
    static final String RESULT = "DDP_BENCH ";

    private DdpBench() {
    }

    /** What one worker measures. */
    record Settings(Path modelDir, String dtype, int agents, int generations, int promptLen, int newTokens, int warmup,
            int steps, long seed, DdpSplit split, int zeroStage) {
        List<String> args() {
            return List.of(modelDir.toString(), dtype, Integer.toString(agents), Integer.toString(generations),
                    Integer.toString(promptLen), Integer.toString(newTokens), Integer.toString(warmup),
                    Integer.toString(steps), Long.toString(seed), split.configName(), Integer.toString(zeroStage));
        }

        static Settings parse(String[] a) {
            return new Settings(Path.of(a[0]), a[1], Integer.parseInt(a[2]), Integer.parseInt(a[3]),
                    Integer.parseInt(a[4]), Integer.parseInt(a[5]), Integer.parseInt(a[6]), Integer.parseInt(a[7]),
                    Long.parseLong(a[8]), DdpSplit.parse(a[9]), Integer.parseInt(a[10]));
        }
    }

    /**
     * Measures 1 and {@code processes} processes with {@code threads} threads in all; returns the
     * report (one entry per process count).
     */
    static List<Map<String, Object>> compare(Settings s, int processes, int threads, PrintStream log)
            throws InterruptedException {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int n : processes == 1 ? List.of(1) : List.of(1, processes)) {
            int each = Math.max(1, threads / n);
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            PrintStream capture = new PrintStream(out, true, StandardCharsets.UTF_8);
            Launcher launcher = new Launcher(Launcher.javaCommand(DdpBench.class.getName()), capture, log)
                    .environment(Map.of("OMP_NUM_THREADS", Integer.toString(each), "OPENBLAS_NUM_THREADS",
                            Integer.toString(each), "MKL_NUM_THREADS", Integer.toString(each)));
            int code = launcher.run(Launcher.Spec.local(n), s.args());
            String text = out.toString(StandardCharsets.UTF_8);
            if (code != 0) {
                throw new IllegalStateException("the " + n + "-process measurement failed (exit " + code + "):\n" + text);
            }
            String line = text.lines().filter(l -> l.contains(RESULT)).findFirst().orElseThrow(() ->
                    new IllegalStateException("no measurement from rank 0 of " + n + " processes:\n" + text));
            try {
                @SuppressWarnings("unchecked")
                Map<String, Object> row = new ObjectMapper().readValue(line.substring(line.indexOf(RESULT) + RESULT.length()),
                        Map.class);
                row.put("threads_per_process", each);
                rows.add(row);
            } catch (java.io.IOException e) {
                throw new IllegalStateException("unreadable measurement: " + line, e);
            }
        }
        double base = ((Number) rows.get(0).get("item_s")).doubleValue();
        for (Map<String, Object> row : rows) {
            double t = ((Number) row.get("item_s")).doubleValue();
            int n = ((Number) row.get("processes")).intValue();
            row.put("speedup", base / t);
            row.put("efficiency", base / t / n);
        }
        return rows;
    }

    /** The table {@code bench --processes} prints. */
    static String table(List<Map<String, Object>> rows, Settings s) {
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "MAGRPO step, %d agents, G=%d, %d prompt + %d new tokens, ddp_split %s, "
                + "zero_stage %d%n", s.agents(), s.generations(), s.promptLen(), s.newTokens(), s.split(), s.zeroStage()));
        b.append(String.format(Locale.ROOT, "%-10s %-8s %-10s %-9s %-8s %-11s %-16s %s%n", "processes", "threads",
                "s/item", "items/s", "speedup", "efficiency", "peak RSS rank 0", "in collectives (rank 0)"));
        for (Map<String, Object> r : rows) {
            double t = ((Number) r.get("item_s")).doubleValue();
            b.append(String.format(Locale.ROOT, "%-10d %-8s %-10.3f %-9.3f %-8.2f %-11s %-16s %s%n",
                    ((Number) r.get("processes")).intValue(), r.get("threads_per_process") + "/proc", t, 1 / t,
                    ((Number) r.get("speedup")).doubleValue(),
                    String.format(Locale.ROOT, "%.0f%%", 100 * ((Number) r.get("efficiency")).doubleValue()),
                    String.format(Locale.ROOT, "%.0f MiB", ((Number) r.get("peak_rss_mib")).doubleValue()),
                    ((Number) r.get("processes")).intValue() == 1 ? "-"
                            : String.format(Locale.ROOT, "%.0f%% (%.3f s/item)",
                                    100 * ((Number) r.get("collective_s")).doubleValue() / t,
                                    ((Number) r.get("collective_s")).doubleValue())));
        }
        return b.toString();
    }

    /** One rank of a measurement (started by {@link #compare} through the launcher). */
    public static void main(String[] argv) throws Exception {
        Settings s = Settings.parse(argv);
        String threads = System.getenv("OMP_NUM_THREADS");
        Engine.setNumThreads(threads == null ? 1 : Integer.parseInt(threads.trim()));
        boolean several = RankInfo.fromEnvironment(System.getenv()).map(r -> r.worldSize() > 1).orElse(false);
        int items = s.warmup() + s.steps();
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int i = 0; i < items; i++) {
            rows.add(Map.of("prompt", String.join(" ", java.util.Collections.nCopies(s.promptLen(), "the"))));
        }
        MAGRPOConfig config = MAGRPOConfig.builder().numTrainEpochs(1).numTurns(1).numAgents(s.agents())
                .numGenerations(s.generations()).maxNewTokens(s.newTokens()).temperature(1.0).topP(1.0).topK(0)
                .generationKwargs(Map.of("min_new_tokens", s.newTokens())).rolloutBufferSize(1).loggingSteps(1)
                .evalInterval(1_000_000).seed(s.seed()).earlyTerminationThreshold(null)
                .parallelTraining(several ? ParallelTraining.DDP : ParallelTraining.NONE).ddpSplit(s.split()).build();
        long[] ends = new long[items];
        long[] inCollectives = new long[items];
        int[] logged = {0};
        try (DistributedContext context = several ? DistributedContext.fromEnvironment(System.getenv(),
                DistributedContext.Options.defaults().withZeroStage(s.zeroStage())) : null) {
            MetricSink clock = (step, metrics) -> {
                if (logged[0] < items) {
                    ends[logged[0]] = System.nanoTime();
                    inCollectives[logged[0]] = context == null ? 0 : context.collectiveNanos();
                    logged[0]++;
                }
            };
            MAGRPOTrainer.Builder b = MAGRPOTrainer.builder().agentModel(s.modelDir().toString()).numAgents(s.agents())
                    .args(config).trainDataset(Dataset.fromRows(rows)).verbose(false).metricSink(clock)
                    .dtype(DType.fromTorchName(s.dtype())).distributed(context)
                    .rewardFunc((completions, batch) -> { // varies with the lengths, so advantages are not all zero
                        double total = 0;
                        for (List<String> c : completions) {
                            total += c.get(0).length();
                        }
                        return List.of((total % 11) / 11.0);
                    });
            try (MAGRPOTrainer trainer = b.build()) {
                long start = System.nanoTime();
                long collectivesBefore = context == null ? 0 : context.collectiveNanos();
                trainer.train();
                if (context != null && !context.isMain()) {
                    return; // rank 0 alone logs, and measures
                }
                if (logged[0] < items) {
                    throw new IllegalStateException("only " + logged[0] + " of " + items + " items logged");
                }
                double[] itemS = new double[s.steps()];
                double[] collS = new double[s.steps()];
                for (int i = s.warmup(); i < items; i++) {
                    long prev = i == 0 ? start : ends[i - 1];
                    long prevColl = i == 0 ? collectivesBefore : inCollectives[i - 1];
                    itemS[i - s.warmup()] = (ends[i] - prev) / 1e9;
                    collS[i - s.warmup()] = (inCollectives[i] - prevColl) / 1e9;
                }
                Map<String, Object> out = new LinkedHashMap<>();
                out.put("processes", context == null ? 1 : context.worldSize());
                out.put("item_s", BenchCommand.median(Arrays.stream(itemS).boxed().toList()));
                out.put("collective_s", BenchCommand.median(Arrays.stream(collS).boxed().toList()));
                out.put("item_s_all", itemS);
                out.put("peak_rss_mib", BenchCommand.peakRssMib()); // rank 0's VmHWM
                System.out.println(RESULT + new ObjectMapper().writeValueAsString(out));
            }
        }
    }
}
