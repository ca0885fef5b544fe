package comlrl.checkpoint;

import comlrl.data.Stateful;
import comlrl.distributed.Codecs;
import comlrl.distributed.HeldAgents;
import comlrl.distributed.RankWork;
import comlrl.generation.CausalLm;
import comlrl.generation.SeedStream;
import comlrl.logging.MetricsLogger;
import comlrl.model.DecoderLm;
import comlrl.model.ModelConfig;
import comlrl.model.io.Safetensors;
import comlrl.tensor.AdamW;
import comlrl.tensor.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * The one checkpoint contract of the trainers. A trainer lists its state once, and the same list
 * is written and restored:
 * <ul>
 *   <li>{@linkplain Part parts}: model weights, optimizer moments, value heads (files in the
 *       {@code checkpoint-N} directory);</li>
 *   <li>progress ({@link Progress}: completed epochs, {@code env_step}), the {@link SeedStream}
 *       positions (training's {@code seed_counter}, the evaluations' {@code eval_seed_counter}), the log position ({@link MetricsLogger}), and the user's {@link Stateful} parts,
 *       in {@code metadata.json};</li>
 *   <li>the shape of every model, checked before anything is restored.</li>
 * </ul>
 * Work done after the last checkpoint is repeated on resume, with the same seeds.
 */
public record TrainerCheckpoint(String algorithm, int numAgents, int numTrainEpochs, Integer saveTotalLimit,
        List<ShapeGroup> shapes, Map<String, Part> parts, Map<String, Stateful> stateful, SeedStream seeds,
        MetricsLogger logger, RankWork work) {
    /** A piece of state stored as files in the checkpoint directory. */
    public interface Part {
        void save(Path checkpointDir);

        void restore(Path checkpointDir);

        /**
         * Called on every process of a ddp run with the data split before rank 0 saves: a part whose
         * state is spread over the processes (a sharded optimizer) brings it to rank 0 here.
         */
        default void collect(RankWork work) {
        }

        /** A part of the two actions (each given the checkpoint directory). */
        static Part of(Consumer<Path> save, Consumer<Path> restore) {
            return of(save, restore, work -> { });
        }

        /** A part of the three actions. */
        static Part of(Consumer<Path> save, Consumer<Path> restore, Consumer<RankWork> collect) {
            return new Part() {
                @Override
                public void save(Path checkpointDir) {
                    save.accept(checkpointDir);
                }

                @Override
                public void restore(Path checkpointDir) {
                    restore.accept(checkpointDir);
                }

                @Override
                public void collect(RankWork work) {
                    collect.accept(work);
                }
            };
        }
    }

    /** Training progress: epochs completed and the environment step reached. */
    public record Progress(int epochsDone, long envStep) {
    }

    /** The shapes ({@link #shapeOf}) a checkpoint's models must fit: metadata key, name in messages, one per model. */
    public record ShapeGroup(String key, String label, List<Map<String, Object>> shapes) {
        public ShapeGroup {
            shapes = List.copyOf(shapes);
        }

        /** The shapes of {@code models}. */
        public static ShapeGroup of(String key, String label, List<DecoderLm> models) {
            return new ShapeGroup(key, label, models.stream().map(TrainerCheckpoint::shapeOf).toList());
        }

        /** The shapes of the agents' {@code models}, each given by the process holding it. */
        @SuppressWarnings("unchecked")
        public static ShapeGroup of(String key, String label, HeldAgents<DecoderLm> models) {
            return new ShapeGroup(key, label, models.map(TrainerCheckpoint::shapeOf)
                    .fromOwners(Codecs.JSON.as(shape -> (Map<String, Object>) shape, shape -> shape)));
        }
    }

    /**
     * What a trainer that runs this one as a stage adds to its checkpoints: its algorithm name (so
     * that only it resumes them), its own parts and stateful parts (MARLHF: the preference set, the
     * reward model and its optimizer, the stage reached).
     */
    public record Extension(String algorithm, Map<String, Part> parts, Map<String, Stateful> states) {
        public Extension {
            parts = new LinkedHashMap<>(parts);
            states = new LinkedHashMap<>(states);
        }
    }

    /**
     * A checkpoint as written by the processes of {@code work}: with the data split rank 0 writes it
     * alone (every rank holds the same state); with the agents split each rank writes its own parts
     * (this rank's {@code parts} are its agents') into the directory rank 0 prepares, which must be
     * one they all see (one machine, or a shared filesystem), and rank 0 writes the metadata and
     * commits it. Every rank restores its own parts. {@code num_train_epochs}: the epochs of the whole
     * run, recorded in the metadata.
     */
    public TrainerCheckpoint {
        shapes = List.copyOf(shapes);
        parts = new LinkedHashMap<>(parts);
        stateful = new LinkedHashMap<>(stateful);
    }

    /** This checkpoint with {@code extension}'s algorithm name and its parts added (this one when null). */
    public TrainerCheckpoint extendedBy(Extension extension) {
        if (extension == null) {
            return this;
        }
        Map<String, Part> allParts = new LinkedHashMap<>(parts);
        extension.parts().forEach((k, v) -> {
            if (allParts.putIfAbsent(k, v) != null) {
                throw new IllegalArgumentException("checkpoint part " + k + " is already taken");
            }
        });
        Map<String, Stateful> allStates = new LinkedHashMap<>(stateful);
        allStates.putAll(extension.states());
        return new TrainerCheckpoint(extension.algorithm(), numAgents, numTrainEpochs, saveTotalLimit, shapes, allParts,
                allStates, seeds, logger, work);
    }

    /** Writes {@code root/checkpoint-E} (E = epochs done) atomically, then prunes to {@code save_total_limit}. */
    public Path save(Path root, Progress progress) {
        String name = "checkpoint-" + progress.epochsDone();
        boolean eachWritesItsOwn = work.distributed() && !work.splitsRows();
        if (work.splitsRows()) { // every process: state spread over them (ZeRO shards) to rank 0
            parts.values().forEach(p -> p.collect(work));
        }
        if (!work.isMain()) {
            if (eachWritesItsOwn) { // into rank 0's staging directory, then tell rank 0 it is written
                Path dir = Path.of(work.onMain("preparing " + name, () -> "", Codecs.STRING));
                parts.values().forEach(p -> p.save(dir));
                work.barrier();
            }
            return root.resolve(name);
        }
        Path written = Checkpoints.write(root, name, dir -> {
            if (eachWritesItsOwn) {
                work.onMain("preparing " + name, () -> dir.toAbsolutePath().toString(), Codecs.STRING);
            }
            parts.values().forEach(p -> p.save(dir));
            if (eachWritesItsOwn) {
                work.barrier(); // every rank's parts are in
            }
            Map<String, Object> meta = new LinkedHashMap<>();
            meta.put("algorithm", algorithm);
            meta.put("epochs_completed", progress.epochsDone());
            meta.put("num_train_epochs", numTrainEpochs);
            meta.put("env_step", progress.envStep());
            meta.put("seed_counter", seeds.position());
            meta.put("eval_seed_counter", seeds.evaluationPosition());
            meta.put("last_logged_step", logger.lastLoggedStep());
            meta.put("num_agents", numAgents);
            for (ShapeGroup g : shapes) {
                meta.put(g.key(), g.shapes());
            }
            meta.put("metrics_lines", logger.metricsLines());
            meta.put("wandb", logger.trackerIdentity()); // the W&B run to continue on resume, or null
            Map<String, Object> states = new LinkedHashMap<>();
            stateful.forEach((part, state) -> states.put(part, state.stateDict()));
            meta.put("states", states);
            Checkpoints.writeJson(dir.resolve(Checkpoints.METADATA), meta);
        });
        if (saveTotalLimit != null) {
            Checkpoints.prune(root, saveTotalLimit);
        }
        return written;
    }

    /**
     * What every trainer does when an epoch is done: records the epochs done, then writes a checkpoint
     * when {@code checkpointDir} is set, every {@code interval} epochs and after the last ({@code epochs}).
     */
    public java.util.function.IntConsumer epochDone(java.util.function.IntConsumer record, Path checkpointDir,
            int interval, int epochs, java.util.function.LongSupplier envStep) {
        if (interval < 1) {
            throw new IllegalArgumentException("checkpoint_interval must be >= 1, got " + interval);
        }
        return done -> {
            record.accept(done);
            if (checkpointDir != null && (done % interval == 0 || done == epochs)) {
                save(checkpointDir, new Progress(done, envStep.getAsLong()));
            }
        };
    }

    /**
     * Restores {@code checkpoint}: checks algorithm, agent count and model shapes first (nothing
     * changes when one fails), then the parts, the seed and log positions and the stateful parts.
     */
    public Progress restore(Path checkpoint) {
        Map<String, Object> meta = Checkpoints.readMetadata(checkpoint);
        String saved = Checkpoints.requireString(meta, "algorithm", checkpoint);
        if (!saved.equals(algorithm)) {
            throw new IllegalArgumentException(checkpoint + " is a checkpoint of " + saved + ", not " + algorithm
                    + ": resume it with algorithm " + saved + " (or start this run without --resume)");
        }
        long agentsSaved = Checkpoints.requireCount(meta, "num_agents", checkpoint);
        if (agentsSaved != numAgents) {
            throw new IllegalArgumentException(checkpoint + " holds " + agentsSaved + " agents but this trainer has "
                    + numAgents + "; resume with the same num_agents");
        }
        int epochs = (int) Checkpoints.requireCount(meta, "epochs_completed", checkpoint);
        long steps = Checkpoints.requireCount(meta, "env_step", checkpoint);
        long seedPosition = Checkpoints.requireCount(meta, "seed_counter", checkpoint);
        for (ShapeGroup g : shapes) {
            if (meta.get(g.key()) instanceof List<?> savedShapes) {
                for (int i = 0; i < g.shapes().size() && i < savedShapes.size(); i++) {
                    Map<String, Object> now = g.shapes().get(i);
                    if (savedShapes.get(i) instanceof Map<?, ?> s && !new LinkedHashMap<>(s).equals(now)) {
                        throw new IllegalArgumentException(checkpoint + " holds " + g.label() + " " + i + " of another model "
                                + "shape: " + s + ", but this run's " + g.label() + " " + i + " is " + now
                                + "; resume with the same models");
                    }
                }
            }
        }
        parts.values().forEach(p -> p.restore(checkpoint));
        seeds.restore(seedPosition);
        // checkpoints written before evaluation had its own stream hold none: its start
        seeds.restoreEvaluation(meta.get("eval_seed_counter") instanceof Number n ? n.longValue() : 0);
        Long lines = meta.get("metrics_lines") instanceof Number n ? n.longValue() : null;
        Long last = meta.get("last_logged_step") instanceof Number n ? n.longValue() : null;
        logger.restore(lines, last, steps);
        restoreStates(checkpoint, meta);
        return new Progress(epochs, steps);
    }

    private void restoreStates(Path checkpoint, Map<String, Object> meta) {
        if (!(meta.get("states") instanceof Map<?, ?> saved)) {
            return;
        }
        for (Map.Entry<String, Stateful> e : stateful.entrySet()) {
            if (!(saved.get(e.getKey()) instanceof Map<?, ?> m)) {
                throw new IllegalArgumentException(checkpoint + " holds no state for the stateful " + e.getKey()
                        + "; resume with the same kind of " + e.getKey() + " as the checkpointed run");
            }
            @SuppressWarnings("unchecked")
            Map<String, ?> typed = (Map<String, ?>) m;
            e.getValue().loadStateDict(typed);
        }
    }

    /**
     * {@code part} of a state every process of a ddp run holds alike (MAAC's critic in the agents
     * split): rank 0 writes it, every process restores it.
     */
    public static Part writtenByMain(Part part, RankWork work) {
        return Part.of(dir -> {
            if (work.isMain()) {
                part.save(dir);
            }
        }, part::restore, part::collect);
    }

    /** What a checkpoint's weights must fit: the architecture and every size of the model. */
    public static Map<String, Object> shapeOf(DecoderLm model) {
        ModelConfig c = model.config();
        Map<String, Object> shape = new LinkedHashMap<>();
        shape.put("model_type", c.modelType());
        shape.put("vocab_size", c.vocabSize());
        shape.put("hidden_size", c.hiddenSize());
        shape.put("intermediate_size", c.intermediateSize());
        shape.put("num_hidden_layers", c.numLayers());
        shape.put("num_attention_heads", c.numHeads());
        shape.put("num_key_value_heads", c.numKvHeads());
        shape.put("head_dim", c.headDim());
        shape.put("tie_word_embeddings", c.tieWordEmbeddings());
        if (model.adapter() != null) { // a LoRA agent: its adapter's shape too
            Map<String, Object> lora = model.adapter().config().toMap();
            lora.remove("dropout"); // no part of the weights' shape, nor is autocast
            lora.remove("autocast");
            shape.put("lora", lora);
        }
        return shape;
    }

    /** {@link #agentParts(int, CausalLm, AdamW)} of each agent this process holds. */
    public static Map<String, Part> agentParts(HeldAgents<CausalLm> agents, HeldAgents<AdamW> optimizers) {
        Map<String, Part> parts = new LinkedHashMap<>();
        for (int i : agents.indices()) {
            parts.putAll(agentParts(i, agents.get(i), optimizers.get(i)));
        }
        return parts;
    }

    /** Agent {@code i}'s weights ({@code agent_i/}) and AdamW state ({@code optimizer_i.safetensors}). */
    public static Map<String, Part> agentParts(int i, CausalLm agent, AdamW optimizer) {
        Map<String, Part> parts = new LinkedHashMap<>();
        parts.put("agent_" + i, weights("agent_" + i, "agent " + i, agent));
        parts.put("optimizer_" + i, optimizer("optimizer_" + i + ".safetensors", optimizer));
        return parts;
    }

    /** The weights of {@code lm} in {@code checkpoint/dirName/} (safetensors shards), or a LoRA agent's {@link #adapter}. */
    public static Part weights(String dirName, String label, CausalLm lm) {
        DecoderLm model = lm.model();
        if (model.adapter() != null) {
            return adapter(dirName, label, model.adapter(), lm.baseModelNameOrPath());
        }
        return Part.of(dir -> model.save(dir.resolve(dirName), CausalLm.MAX_SHARD_BYTES),
                dir -> model.loadParameters(requireDir(dir, dirName, label)));
    }

    private static Path requireDir(Path dir, String dirName, String label) {
        Path d = dir.resolve(dirName);
        if (!Files.isDirectory(d)) {
            throw new IllegalArgumentException(dir + " has no " + dirName + "/ directory (" + label + ")");
        }
        return d;
    }

    /** A LoRA agent's state file beside its adapter: the dropout seed stream's position. */
    static final String LORA_STATE_FILE = "lora_state.json";

    /**
     * A LoRA agent's adapter in {@code checkpoint/dirName/}: a PEFT adapter directory (the frozen base
     * is not repeated) and the dropout stream's position, so a resume continues bit for bit.
     */
    public static Part adapter(String dirName, String label, comlrl.model.LoraAdapter adapter, String baseModel) {
        return Part.of(dir -> comlrl.model.io.ModelDirs.replace(dir.resolve(dirName), fresh -> {
            adapter.writePeftFiles(fresh, baseModel);
            long[] d = adapter.dropoutState();
            Safetensors.writeSmallFile(fresh.resolve(LORA_STATE_FILE),
                    "{\"dropout_stream\": " + d[0] + ", \"dropout_draws\": " + d[1] + "}\n");
        }), dir -> {
            Path d = requireDir(dir, dirName, label);
            adapter.loadWeights(d);
            Path f = d.resolve(LORA_STATE_FILE);
            try {
                com.fasterxml.jackson.databind.JsonNode state = new com.fasterxml.jackson.databind.ObjectMapper()
                        .readTree(f.toFile());
                adapter.setDropoutState(new long[] {state.path("dropout_stream").asLong(),
                        state.path("dropout_draws").asLong()});
            } catch (java.io.IOException e) {
                throw new IllegalArgumentException("Cannot read " + f + " (" + label + "'s LoRA state): "
                        + e.getMessage() + "; resume from an intact checkpoint", e);
            }
        });
    }

    /** An optimizer's moments and step counts in {@code checkpoint/fileName}. */
    public static Part optimizer(String fileName, AdamW optimizer) {
        // a sharded optimizer's whole state, brought to rank 0 for the next save
        AtomicReference<Map<String, Tensor>> whole = new AtomicReference<>();
        return Part.of(dir -> {
            if (optimizer.sharded() && whole.get() == null) {
                throw new IllegalStateException("a sharded optimizer saves the state its processes collected first");
            }
            try {
                Safetensors.save(whole.get() != null ? whole.get() : optimizer.state(), dir.resolve(fileName));
            } finally {
                if (whole.get() != null) {
                    whole.getAndSet(null).values().forEach(Tensor::close);
                }
            }
        }, dir -> {
            Map<String, Tensor> state = Safetensors.load(dir.resolve(fileName));
            try {
                optimizer.loadState(state);
            } finally {
                state.values().forEach(Tensor::close);
            }
        }, work -> {
            if (optimizer.sharded()) {
                whole.set(work.wholeState(optimizer));
            }
        });
    }

    /** Of the (name, part) pairs, those whose part implements {@link Stateful}, in order. */
    public static Map<String, Stateful> statefulParts(Object... nameValuePairs) {
        Map<String, Stateful> out = new LinkedHashMap<>();
        for (int i = 0; i + 1 < nameValuePairs.length; i += 2) {
            if (nameValuePairs[i + 1] instanceof Stateful s) {
                out.put((String) nameValuePairs[i], s);
            }
        }
        return out;
    }
}
