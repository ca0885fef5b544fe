package comlrl.trainers.common;

import comlrl.distributed.HeldAgents;
import comlrl.distributed.RankWork;
import comlrl.generation.CausalLm;
import comlrl.model.DecoderLm;
import comlrl.model.LoraAdapter;
import comlrl.model.io.ModelDirs;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.trainers.Devices;
import comlrl.utils.ParallelTraining;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import java.util.function.IntPredicate;
import java.util.stream.IntStream;

/**
 * A trainer's models of one kind (actors or critics): sources resolved to loaded {@link CausalLm}s on
 * their devices. Models loaded here are owned and closed here; models passed in belong to the caller.
 */
public final class AgentSet implements AutoCloseable {
    private final String label; // "agent" or "critic", for messages
    private final List<Object> sources;
    private final List<CausalLm> models = new ArrayList<>();
    // LoRA agents: the bases loaded here, the adapters (all owned) and the agents' views (models)
    private final List<CausalLm> ownedBases = new ArrayList<>();
    private final List<CausalLm> bases = new ArrayList<>();        // every base used, owned or not
    private final List<Object> baseSources = new ArrayList<>();    // what each names (for sharing with another set)
    private final List<LoraAdapter> adapters = new ArrayList<>();
    private boolean lora;

    private AgentSet(String label, List<Object> sources) {
        this.label = label;
        this.sources = List.copyOf(sources);
    }

    /**
     * Loads every String source (a model id or directory) in {@code dtype} (null: each config's
     * {@code torch_dtype}) onto its device and keeps {@link CausalLm} sources as they are; on a failure
     * the models loaded so far are freed. With {@code lora}, each model is a LoRA agent: a frozen base
     * (one for all when they share it; {@code reuse}'s when it holds that base on that device, e.g.
     * critics on the actors') and an adapter of its own, fresh (A from {@code seed} and the agent's
     * index, B zero) or loaded from a PEFT adapter directory (each checked before any base loads,
     * {@link LoraAdapter#checkPeft}). Only the models {@code include} accepts are loaded
     * ({@code ddp_split: agents}: another process holds the others, null in {@link #models()}).
     */
    public static AgentSet load(String label, List<Object> sources, DType dtype, List<Device> devices, LoraAgents lora,
            long seed, AgentSet reuse, IntPredicate include) {
        for (int i = 0; i < sources.size(); i++) {
            if (!(sources.get(i) instanceof CausalLm) && !(sources.get(i) instanceof String)) {
                throw new IllegalArgumentException(label + "s[" + i + "] must be a model id/directory (String) or a "
                        + "CausalLm, got " + sources.get(i).getClass().getName());
            }
        }
        boolean share = lora != null && shareBase(label, sources, devices, lora, include);
        AgentSet set = new AgentSet(label, sources);
        set.lora = lora != null;
        try {
            CausalLm shared = null;
            for (int i = 0; i < sources.size(); i++) {
                Object src = sources.get(i);
                if (!include.test(i)) {
                    set.models.add(null);
                } else if (lora == null) {
                    set.models.add(src instanceof CausalLm lm ? lm
                            : CausalLm.load((String) src, dtype, devices.get(i)));
                } else {
                    CausalLm base = share && shared != null ? shared : set.base(src, dtype, devices.get(i), reuse);
                    shared = base;
                    DecoderLm m = base.model();
                    m.parameters().forEach(p -> p.requiresGrad(false)); // the base is frozen: only adapters train
                    Path from = lora.adapter(i);
                    DType adapterDtype = LoraAdapter.trainingDtype(m.dtype());
                    LoraAdapter adapter = from != null
                            ? LoraAdapter.loadPeft(from, m.config(), adapterDtype, m.device(),
                                    lora.config() != null && lora.config().autocast())
                            : LoraAdapter.init(m.config(), lora.config(), adapterDtype, m.device(),
                                    seed * 1_000_003L + i);
                    set.adapters.add(adapter);
                    set.models.add(base.withAdapter(adapter, lora.saveMerged()));
                }
            }
        } catch (RuntimeException | Error e) {
            set.close();
            throw e;
        }
        return set;
    }

    /**
     * Whether LoRA agents share one base ({@code agents_share_base}, by default when all name the same
     * model on the same device), after checking every adapter directory before any base loads.
     */
    private static boolean shareBase(String label, List<Object> sources, List<Device> devices, LoraAgents lora,
            IntPredicate include) {
        if (lora.adapters() != null && lora.adapters().size() != sources.size()) {
            throw new IllegalArgumentException("lora_adapters has " + lora.adapters().size() + " entries for "
                    + sources.size() + " " + label + "s; give one adapter directory (or null for a fresh adapter) per "
                    + label);
        }
        for (int i = 0; lora.adapters() != null && i < lora.adapters().size(); i++) {
            if (lora.adapters().get(i) != null && include.test(i)) {
                try {
                    LoraAdapter.checkPeft(lora.adapters().get(i));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("lora_adapters[" + i + "]: " + e.getMessage(), e);
                }
            }
        }
        boolean same = IntStream.range(1, sources.size())
                .allMatch(i -> sameSource(sources.get(0), sources.get(i)) && devices.get(i).equals(devices.get(0)));
        if (lora.shareBase() != null && lora.shareBase() && !same) {
            List<String> names = sources.stream().map(o -> o instanceof CausalLm lm ? lm.source() : String.valueOf(o))
                    .toList();
            throw new IllegalArgumentException("agents_share_base: true needs every " + label + " to name the same "
                    + "base model on the same device, got " + names + " on " + devices + "; set agents_share_base: "
                    + "false (one base per " + label + ") or use one model and device");
        }
        return lora.shareBase() == null ? same : lora.shareBase();
    }

    private static boolean sameSource(Object a, Object b) {
        return a == b || a instanceof String sa && sa.equals(b);
    }

    /** A base for LoRA agents: {@code reuse}'s on that device, else loaded here (owned), or the caller's model. */
    private CausalLm base(Object source, DType dtype, Device device, AgentSet reuse) {
        for (int i = 0; reuse != null && i < reuse.bases.size(); i++) {
            if (sameSource(reuse.baseSources.get(i), source) && reuse.bases.get(i).model().device().equals(device)) {
                return reuse.bases.get(i);
            }
        }
        CausalLm lm;
        if (source instanceof CausalLm given) {
            if (given.model().adapter() != null) {
                throw new IllegalArgumentException("a LoRA " + label + " needs a plain base model, got a model that "
                        + "already has an adapter (" + given.source() + ")");
            }
            lm = given;
        } else {
            lm = CausalLm.load((String) source, dtype, device);
            ownedBases.add(lm);
        }
        bases.add(lm);
        baseSources.add(source);
        return lm;
    }

    /**
     * Devices of {@code count} models: all on {@code processDevice} (a ddp process's) when set, else
     * {@code spec} resolved per model ({@link Devices#resolve}), in "none" mode all on the first one.
     */
    public static List<Device> placement(Object spec, int count, String kind, ParallelTraining mode,
            Device processDevice) {
        if (processDevice != null) {
            return Collections.nCopies(count, processDevice);
        }
        List<Device> resolved = Devices.resolve(spec, count, kind);
        return mode == ParallelTraining.NONE ? Collections.nCopies(count, resolved.get(0)) : resolved;
    }

    /** Whether per-agent work runs on per-agent threads: "mp" with several agents on distinct devices, or on CPU. */
    public static boolean runsInParallel(ParallelTraining mode, List<Device> devices) {
        return mode == ParallelTraining.MP && devices.size() > 1
                && (Devices.distinct(devices) || devices.stream().noneMatch(Device::isCuda));
    }

    public CausalLm get(int i) {
        return models.get(i);
    }

    /** The models this process holds ({@code work} the share it loaded them for). */
    public HeldAgents<CausalLm> held(RankWork work) {
        return HeldAgents.of(models, work);
    }

    public List<CausalLm> models() {
        return Collections.unmodifiableList(models);
    }

    /** Whether these are LoRA agents (adapters over frozen bases). */
    public boolean lora() {
        return lora;
    }

    /** The LoRA agents' adapters (empty for full models), in agent order. */
    public List<LoraAdapter> adapters() {
        return Collections.unmodifiableList(adapters);
    }

    /** Fails when {@code dir} is one of the models' directories or inside one ({@code what} names {@code dir}). */
    public void requireOutside(Path dir, String what) {
        for (int i = 0; dir != null && i < models.size(); i++) {
            // a null model is held by another process
            Path modelDir = models.get(i) == null ? null : models.get(i).tokenizer().directory();
            if (modelDir != null) {
                ModelDirs.requireNotInside(dir, what, modelDir, label + " " + i + "'s model");
            }
        }
    }

    @Override
    public void close() {
        for (int i = 0; i < models.size(); i++) {
            if ((lora || sources.get(i) instanceof String) && models.get(i) != null) { // loaded or made here
                models.get(i).close(); // a LoRA agent's view: its base and adapter are closed below
            }
        }
        adapters.forEach(LoraAdapter::close);
        ownedBases.forEach(CausalLm::close);
    }

    /**
     * Saves the agents this process holds as {@code dir/agent_i/}, {@code dir} checked to be outside every
     * source: in a ddp run rank 0 writes every agent (data split), or each process its own (agents split);
     * then waits for every process, so every agent is saved when any returns.
     */
    public void saveAgents(HeldAgents<CausalLm> agents, RankWork work, Path dir) {
        saveAgents(agents, work, dir, i -> dir.resolve("agent_" + i), writes -> { });
    }

    /** As above, into {@code agentDirs}; {@code more(writes)} runs before the wait. */
    public void saveAgents(HeldAgents<CausalLm> agents, RankWork work, Path dir, IntFunction<Path> agentDirs,
            Consumer<Boolean> more) {
        requireOutside(dir, "the save directory");
        boolean writes = work.isMain() || !work.splitsRows();
        if (writes) {
            agents.indices().forEach(i -> agents.get(i).save(agentDirs.apply(i)));
        }
        more.accept(writes);
        work.barrier();
    }
}
