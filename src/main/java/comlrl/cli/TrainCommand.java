package comlrl.cli;

import comlrl.checkpoint.Checkpoints;
import comlrl.generation.GenerationSettings;
import comlrl.logging.RunRecord;
import comlrl.model.io.ModelDirs;
import comlrl.reward.RewardFunction;
import comlrl.trainers.Algorithms;
import comlrl.trainers.common.Trainer;
import comlrl.trainers.common.TrainerBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code train CONFIG.yaml}: a training run as a config file describes it. */
@Command(name = "train", mixinStandardHelpOptions = true,
        description = "Train cooperating agents as CONFIG.yaml describes (see examples/length-ratio.yaml).")
final class TrainCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "CONFIG.yaml", description = "run configuration")
    Path config;

    @Option(names = "--output-dir", description = "run directory (overrides output_dir)")
    Path outputDir;

    @Option(names = "--set", paramLabel = "key=value", description = "override a config value; bare field names go under args (repeatable)")
    List<String> overrides = new ArrayList<>();

    @Option(names = "--merge", description = "LoRA agents: save full models with the adapters folded in (save_merged: true)")
    boolean merge;

    @Option(names = "--resume", paramLabel = "CHECKPOINT", description = "resume from a checkpoint-N directory (or a checkpoint dir holding 'latest')")
    Path resume;

    @Override
    public Integer call() throws Exception {
        List<String> sets = new ArrayList<>(overrides);
        if (merge) {
            sets.add("save_merged=true");
        }
        RunConfig run = new RunConfig(config, sets, outputDir); // fails here on a bad config, before any model loads
        boolean ddp = run.parallelTraining() == comlrl.utils.ParallelTraining.DDP;
        java.util.Optional<comlrl.distributed.RankInfo> rank = comlrl.distributed.RankInfo.fromEnvironment(System.getenv());
        if (ddp && rank.isEmpty()) {
            throw new IllegalArgumentException(config + " sets parallel_training: ddp, which needs torchrun's variables "
                    + "(WORLD_SIZE, RANK, LOCAL_RANK, MASTER_ADDR, MASTER_PORT): run it with bin/comlrl launch "
                    + "--nproc-per-node N train " + config + " (or torchrun, or srun), or set parallel_training: none");
        }
        boolean main = !ddp || rank.get().isMain(); // only rank 0 writes the run's files and prints its results
        if (run.wandb != null && main) { // and a W&B section without the SDK, or with a bad timeout, fails here too
            comlrl.logging.WandbSettings.of(run.wandb, run.displayName(), Map.of());
            comlrl.logging.WandbSink.requireSdk(comlrl.logging.WandbSink.pythonCommand(
                    comlrl.generation.BuiltinModels.home().resolve("bridge")));
        }
        if (main) { // what runs killed mid-write left (before latest is read: a checkpoint may be renamed back)
            cleanLeftovers(run);
        }
        Path resumeFrom = resume == null ? null
                : Files.isRegularFile(resume.resolve(Checkpoints.LATEST)) ? Checkpoints.latest(resume).orElseThrow() : resume;
        if (resumeFrom != null) {
            Map<String, Object> meta = Checkpoints.readMetadata(resumeFrom); // validated before any model loads
            String algorithm = Checkpoints.requireString(meta, "algorithm", resumeFrom);
            if (!algorithm.equals(run.displayName())) {
                throw new IllegalArgumentException(resumeFrom + " is a checkpoint of " + algorithm + ", but " + config
                        + " trains " + run.displayName() + ": resume it with algorithm: "
                        + Algorithms.byDisplayName(algorithm).map(Algorithms.Algorithm::configName)
                                .orElse(algorithm.toLowerCase(Locale.ROOT))
                        + ", or start without --resume");
            }
            // the seed's W&B resume: the checkpoint's run identity, unless the config names an id or resume
            if (run.wandb != null && meta.get("wandb") instanceof Map<?, ?> identity && !run.wandb.containsKey("id")
                    && !run.wandb.containsKey("resume")) {
                identity.forEach((k, v) -> run.wandb.put(String.valueOf(k), v));
                run.wandb.put("resume", "allow");
            }
        }
        requireOutsideModels(run);
        // a resumed preference-learning run leaves the earlier run's files as they are: its outputs,
        // this config included, go to the resume-* subdirectory the trainer picks
        boolean pbrlResume = resumeFrom != null && run.algorithm.family().preference;
        if (!pbrlResume && main) {
            writeResolvedConfig(run, run.outputDir, null);
            writeSplits(run, run.outputDir);
        }
        if (resumeFrom == null && main) {
            try {
                Files.deleteIfExists(run.outputDir.resolve("metrics.jsonl")); // a fresh run starts a fresh log
            } catch (java.io.IOException e) {
                throw new IllegalArgumentException("Cannot reset " + run.outputDir.resolve("metrics.jsonl") + ": " + e.getMessage(), e);
            }
        }
        if (main) {
            System.err.printf(Locale.ROOT, "%s: %d agents, %d train / %d eval items, run directory %s%n",
                    run.displayName(), run.numAgents, run.train.knownSize().isPresent() ? run.train.knownSize().getAsInt() : -1,
                    run.eval == null ? 0 : run.eval.size(), run.outputDir);
        }
        // ddp: join the other processes first (rendezvous), so that a rank that cannot start fails the run early
        try (comlrl.distributed.DistributedContext processes = ddp
                ? comlrl.distributed.DistributedContext.fromEnvironment(System.getenv(), run.distributed) : null) {
            if (processes != null) { // every process started alike, checked before any loads a model
                processes.requireSame("config", fingerprint(resolvedConfig(run, run.outputDir), resumeFrom));
            }
            if (processes != null && main) {
                System.err.println(processes.worldSize() + " processes (" + processes.backend().configName() + "), ddp_split "
                        + run.args.ddpSplit());
            }
            return train(run, resumeFrom, pbrlResume, main, processes);
        }
    }

    /**
     * A non-main rank's reward function: never called (the reward runs on rank 0), stating the range
     * rank 0's reward states (what the iterative trainers' reward histograms check before training).
     */
    private static RewardFunction placeholderReward(comlrl.distributed.DistributedContext processes) {
        double[] range = statedRange(processes, null);
        return new RewardFunction() {
            @Override
            public List<Double> score(List<List<String>> completions, List<comlrl.data.TaskItem> items) {
                throw new IllegalStateException("the reward function runs on rank 0 of a ddp run only");
            }

            @Override
            public double[] rewardRange() {
                return range;
            }
        };
    }

    /** Rank 0's {@code reward.rewardRange()} on every rank (null when it states none). */
    private static double[] statedRange(comlrl.distributed.DistributedContext processes, RewardFunction reward) {
        double[] range = comlrl.distributed.RankWork.of(processes, comlrl.utils.DdpSplit.DATA, 1).onMain(
                "stating the reward's range", () -> reward.rewardRange() == null ? new double[0] : reward.rewardRange(),
                comlrl.distributed.Codecs.DOUBLES);
        return range.length == 0 ? null : range;
    }

    private int train(RunConfig run, Path resumeFrom, boolean pbrlResume, boolean main,
            comlrl.distributed.DistributedContext processes) throws Exception {
        // in a ddp run the reward runs on rank 0 only: the other ranks do not build it (a reward
        // model would be loaded, a reward service connected, for nothing)
        double startedAt = comlrl.report.RunTimes.now(); // run.json: wall time and throughput in the report
        RewardFunction reward = main ? run.rewardFunction() : placeholderReward(processes);
        if (main && processes != null) {
            statedRange(processes, reward); // the other ranks' placeholders state the same range
        }
        // command-backed parts and streams are closed after the trainer (ending their processes);
        // the transition's stderr (its logs) goes to ours
        comlrl.trainers.ExternalTransition transition = run.transition(System.err::println, reward);
        try (AutoCloseable rewardProcess = closerOf(reward); AutoCloseable trainStream = closerOf(run.train);
                AutoCloseable transitionProcess = closerOf(transition);
                Trainer trainer = run.algorithm.trainer().build(run.args, new Algorithms.Parts(run.numAgents,
                        run.agentSource(), run.criticModel, run.critics, transition),
                        builder -> shared(builder, run, reward, processes))) {
            if (!pbrlResume && main) {
                writeResolvedConfig(run, run.outputDir, trainer.generationSettings()); // with the values actually used
            }
            if (resumeFrom != null) {
                trainer.resumeFrom(resumeFrom);
            }
            // a resumed preference-learning run whose run directory had files writes into its resume-* subdirectory
            Path outputs = Algorithms.outputsOf(trainer, run.outputDir);
            if (pbrlResume && main) {
                writeResolvedConfig(run, outputs, trainer.generationSettings());
                writeSplits(run, outputs);
            }
            // a run that continues from a checkpoint is not evaluated first: evaluation logs rows, and the
            // resumed run must log what the uninterrupted run did (a resumed preference-learning run too,
            // though its outputs go to a resume-* directory); evaluation's seeds are its own (SeedStream)
            Double before = run.eval == null || resumeFrom != null ? null : meanEval(trainer, run.evalRepeats);
            if (main) {
                requireEvalReward(before, "before training");
            }
            double trainStart = comlrl.report.RunTimes.now();
            if (run.checkpointDir != null || resumeFrom != null) {
                Path dir = run.checkpointDir != null ? run.checkpointDir : run.outputDir.resolve("checkpoints");
                trainer.train(dir, run.checkpointInterval, null);
            } else {
                trainer.train();
            }
            double trainS = comlrl.report.RunTimes.now() - trainStart;
            Double after = run.eval == null ? null : meanEval(trainer, run.evalRepeats);
            if (run.saveModel) {
                // IAC with one agent saves its model at the given directory's root (the reference's layout),
                // where the run's own config.json is: in the run directory it goes to agent_0/ instead
                boolean atRoot = run.algorithm.configName().equals("iac") && run.numAgents == 1;
                trainer.saveModel(atRoot ? outputs.resolve("agent_0") : outputs);
            }
            if (!main) {
                return 0; // rank 0 prints the results and writes the report
            }
            requireEvalReward(after, "after training"); // after the save: the trained models are kept either way
            if (before != null) {
                System.out.printf(Locale.ROOT, "eval reward before training: %.4f%n", before);
            }
            if (after != null) {
                System.out.printf(Locale.ROOT, "eval reward after training:  %.4f%n", after);
            }
            System.out.println("run directory: " + outputs);
            // items trained: known for a fresh, non-preference run over a data set of known size
            long items = resumeFrom != null || run.algorithm.family().preference || run.train.knownSize().isEmpty() ? -1
                    : (long) run.train.knownSize().getAsInt() * run.args.numTrainEpochs();
            new comlrl.report.RunTimes(startedAt, comlrl.report.RunTimes.now(), trainS, items).write(outputs);
            if (run.report) {
                Path report = outputs.resolve(comlrl.report.HtmlReport.FILE_NAME);
                comlrl.report.HtmlReport.write(List.of(outputs), report);
                System.out.println("report: " + report);
            }
        }
        return 0;
    }

    /**
     * The values every trainer's builder takes from a run config (agents list, formatters, rewards, data,
     * output), and the processes of a ddp run (null otherwise).
     */
    private static void shared(TrainerBuilder<?, ?> builder, RunConfig run, RewardFunction reward,
            comlrl.distributed.DistributedContext processes) {
        builder.formatters(run.formatters.asList())
                .rewardFunc(reward)
                .rewardProcessor(run.rewardProcessor)
                .trainDataset(run.train)
                .evalDataset(run.eval)
                .dtype(run.dtype)
                .outputDir(run.outputDir)
                .verbose(run.verbose)
                .chatTemplate(run.chatTemplate, run.systemPrompt)
                .lora(run.lora).agentsShareBase(run.agentsShareBase).loraAdapters(run.loraAdapters)
                .mergeAdaptersOnSave(run.saveMerged).criticLora(run.criticLora).wandbConfig(run.wandb)
                .tensorboard(run.tensorboard).distributed(processes)
                .recordRun(false); // this command writes config.json, splits.json and run.json (RunRecord) itself
        if (run.agents != null) {
            builder.agents(run.agents);
        }
        comlrl.trainers.EvalLogger environmentMetrics = comlrl.env.Environments.evalLogger(run.raw, reward);
        if (environmentMetrics != null && run.algorithm.family() != Algorithms.Family.ACTOR_CRITIC) {
            // the environment's own evaluation metrics (IAC and MAAC take no eval_logger)
            builder.evalLogger(environmentMetrics).evalAggregator(comlrl.trainers.EvalAggregator.mean());
        }
    }

    /** The run directory and checkpoints must not be (inside) a local model directory they would overwrite. */
    private static void requireOutsideModels(RunConfig run) {
        List<String> sources = new ArrayList<>();
        if (run.agents != null) {
            sources.addAll(run.agents);
        }
        if (run.agentSource() != null) {
            sources.add(run.agentSource());
        }
        if (run.criticModel != null) {
            sources.add(run.criticModel);
        }
        if (run.critics != null) {
            sources.addAll(run.critics);
        }
        for (String source : sources) {
            Path dir = Path.of(source);
            if (!source.startsWith("builtin:") && Files.isDirectory(dir)) {
                ModelDirs.requireNotInside(run.outputDir, "output_dir", dir, "agent model " + source);
                if (run.checkpointDir != null) {
                    ModelDirs.requireNotInside(run.checkpointDir, "checkpoint.dir", dir, "agent model " + source);
                }
            }
        }
    }

    private static AutoCloseable closerOf(Object part) {
        return part instanceof AutoCloseable c ? c : () -> { };
    }

    /**
     * Mean of {@code eval/turn_1/reward_mean} over {@code repeats} evaluation passes; NaN when a pass
     * gave none (it scored no items).
     */
    private static double meanEval(Trainer trainer, int repeats) {
        double sum = 0;
        for (int r = 0; r < repeats; r++) {
            Double reward = trainer.evaluate().get("eval/turn_1/reward_mean");
            sum += reward == null ? Double.NaN : reward;
        }
        return sum / repeats;
    }

    /** An evaluation that scored nothing (NaN: no items, or non-finite rewards) is an error, never a result. */
    private static void requireEvalReward(Double reward, String when) {
        if (reward != null && !Double.isFinite(reward)) {
            throw new IllegalStateException("The evaluation " + when + " gave no eval reward (eval/turn_1/reward_mean is "
                    + reward + "): it scored no items, or the reward was not finite. Check that the evaluation set "
                    + "(dataset.eval or test_size) has rows and that the reward returns finite numbers.");
        }
    }

    /**
     * Removes what runs killed mid-write left in the run directory and the checkpoint directory (and
     * the directory {@code --resume} names), saying so on the console: temporary files and
     * directories of dead processes, and a checkpoint or saved model renamed away by a writer that
     * died before its replacement arrived is renamed back ({@link comlrl.model.io.StaleTemps}).
     */
    private void cleanLeftovers(RunConfig run) {
        java.util.Set<Path> dirs = new java.util.LinkedHashSet<>();
        dirs.add(run.outputDir);
        dirs.add(run.checkpointDir != null ? run.checkpointDir : run.outputDir.resolve("checkpoints"));
        if (resume != null) { // a checkpoint root, or a checkpoint-N directory (which may have been renamed away)
            boolean oneCheckpoint = !Files.isRegularFile(resume.resolve(Checkpoints.LATEST))
                    && (resume.getFileName().toString().matches("checkpoint-\\d+") || !Files.exists(resume));
            dirs.add(oneCheckpoint ? resume.toAbsolutePath().getParent() : resume);
        }
        for (Path dir : dirs) {
            List<comlrl.model.io.StaleTemps.Cleaned> cleaned = Checkpoints.cleanUp(dir);
            if (!cleaned.isEmpty()) {
                System.err.println("Cleaned up after an interrupted run: " + cleaned.stream()
                        .map(comlrl.model.io.StaleTemps.Cleaned::toString).collect(java.util.stream.Collectors.joining(", ")));
            }
        }
    }

    /** The config as resolved, as {@code config.json} holds it before provenance and generation settings. */
    private static Map<String, Object> resolvedConfig(RunConfig run, Path dir) {
        Map<String, Object> resolved = new LinkedHashMap<>(run.raw);
        resolved.put("algorithm", run.configName());
        resolved.put("num_agents", run.numAgents);
        resolved.put("args", run.argsMap());
        resolved.put("output_dir", dir.toString());
        return resolved;
    }

    /** Last keys whose values are secrets: compared between ranks by a hash, never shown. */
    private static final java.util.regex.Pattern SECRET_KEY =
            java.util.regex.Pattern.compile("(?i).*(api_key|password|secret|access_token|auth_token|^token)$");

    /**
     * What every process of a ddp run must agree on before any loads a model: the resolved config
     * (as {@code config.json} holds it), flattened to one value per key ({@code args.seed},
     * {@code formatters[1]}), each as JSON; the checkpoint it resumes ({@code resume}). Secrets
     * (keys ending in api_key, password, secret, token) are replaced by a hash of their value. The
     * processes differ only in what their rank decides (device, local rank), which the config does not hold.
     */
    static java.util.SortedMap<String, String> fingerprint(Map<String, Object> resolved, Path resumeFrom) {
        java.util.SortedMap<String, String> flat = new java.util.TreeMap<>();
        flatten("", resolved, flat);
        flat.put("resume", resumeFrom == null ? "null" : json(resumeFrom.toAbsolutePath().normalize().toString()));
        return flat;
    }

    private static void flatten(String key, Object value, Map<String, String> into) {
        if (value instanceof Map<?, ?> map && !map.isEmpty()) {
            map.forEach((k, v) -> flatten(key.isEmpty() ? String.valueOf(k) : key + "." + k, v, into));
        } else if (value instanceof List<?> list && !list.isEmpty()) {
            for (int i = 0; i < list.size(); i++) {
                flatten(key + "[" + i + "]", list.get(i), into);
            }
        } else {
            String last = key.substring(key.lastIndexOf('.') + 1);
            into.put(key, value != null && SECRET_KEY.matcher(last).matches() ? hidden(String.valueOf(value)) : json(value));
        }
    }

    private static String json(Object value) {
        try {
            return JSON.writeValueAsString(value instanceof Path p ? p.toString() : value);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            return String.valueOf(value);
        }
    }

    private static final com.fasterxml.jackson.databind.ObjectMapper JSON = new com.fasterxml.jackson.databind.ObjectMapper()
            .configure(com.fasterxml.jackson.databind.SerializationFeature.WRITE_ENUMS_USING_TO_STRING, true); // config names

    /** "(hidden, sha256 1a2b3c4d)": tells two secrets apart without showing either. */
    private static String hidden(String secret) {
        try {
            byte[] digest = java.security.MessageDigest.getInstance("SHA-256").digest(secret.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return "(hidden, sha256 " + java.util.HexFormat.of().formatHex(digest, 0, 4) + ")";
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Writes {@code config.json} ({@link RunRecord#writeConfig}): the config as resolved, and, once the
     * agents are loaded, {@code generation} (every generate setting used, with its source), then provenance.
     */
    private static void writeResolvedConfig(RunConfig run, Path dir, List<GenerationSettings.Resolved> generation) {
        RunRecord.writeConfig(dir, resolvedConfig(run, dir), generation, run.seed());
    }

    /**
     * Writes {@code splits.json} ({@link RunRecord#writeSplits}): the split settings of the config's
     * {@code dataset} section, and the rows the training and evaluation sets hold (for evaluation the
     * first {@code eval_num_samples} each pass reads).
     */
    private static void writeSplits(RunConfig run, Path dir) {
        Map<String, Object> settings = new LinkedHashMap<>();
        if (run.raw.get("dataset") instanceof Map<?, ?> ds) {
            for (String key : List.of("train", "eval", "test_size", "split_seed", "shuffle_seed", "streaming")) {
                if (ds.get(key) != null) {
                    settings.put(key, ds.get(key));
                }
            }
            if (ds.get("test_size") != null && ds.get("split_seed") == null && ds.get("eval") == null) {
                settings.put("split_seed", 42);
            }
        }
        Object n = run.argsMap().get("eval_num_samples");
        RunRecord.writeSplits(dir, settings, run.train, run.eval, n instanceof Number k ? k.intValue() : null);
    }
}
