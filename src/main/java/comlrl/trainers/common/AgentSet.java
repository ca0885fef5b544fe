package comlrl.trainers.common;

import comlrl.generation.CausalLm;
import comlrl.model.io.ModelDirs;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.trainers.Devices;
import comlrl.utils.ParallelTraining;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A trainer's models of one kind (actors or critics): sources resolved to loaded {@link CausalLm}s on
 * their devices. Models loaded here are owned and closed here; models passed in belong to the caller.
 */
public final class AgentSet implements AutoCloseable {
    private final String label; // "agent" or "critic", for messages
    private final List<Object> sources;
    private final List<CausalLm> models = new ArrayList<>();
    private final List<Device> devices;

    private AgentSet(String label, List<Object> sources, List<Device> devices) {
        this.label = label;
        this.sources = List.copyOf(sources);
        this.devices = List.copyOf(devices);
    }

    /**
     * Loads every String source (a model id or directory) in {@code dtype} (null: each config's
     * {@code torch_dtype}) onto its device and keeps {@link CausalLm} sources as they are. On a
     * failure the models loaded so far are freed.
     */
    public static AgentSet load(String label, List<Object> sources, DType dtype, List<Device> devices) {
        for (int i = 0; i < sources.size(); i++) {
            Object src = sources.get(i);
            if (!(src instanceof CausalLm) && !(src instanceof String)) {
                throw new IllegalArgumentException(label + "s[" + i + "] must be a model id/directory (String) or a "
                        + "CausalLm, got " + src.getClass().getName());
            }
        }
        AgentSet set = new AgentSet(label, sources, devices);
        try {
            for (int i = 0; i < sources.size(); i++) {
                Object src = sources.get(i);
                set.models.add(src instanceof CausalLm lm ? lm : CausalLm.load((String) src, dtype, devices.get(i)));
            }
        } catch (RuntimeException | Error e) {
            set.close();
            throw e;
        }
        return set;
    }

    /**
     * Devices of {@code count} models: {@code spec} resolved per model ({@link Devices#resolve}), and in
     * "none" mode every model on the first one.
     */
    public static List<Device> placement(Object spec, int count, String kind, ParallelTraining mode) {
        List<Device> resolved = Devices.resolve(spec, count, kind);
        return mode == ParallelTraining.NONE ? Collections.nCopies(count, resolved.get(0)) : resolved;
    }

    /**
     * Whether per-agent work runs on per-agent threads: "mp" with several agents that sit on
     * different devices, or on CPU cores (CPU agents then run side by side).
     */
    public static boolean runsInParallel(ParallelTraining mode, List<Device> devices) {
        return mode == ParallelTraining.MP && devices.size() > 1
                && (Devices.distinct(devices) || devices.stream().noneMatch(Device::isCuda));
    }

    public int size() {
        return models.size();
    }

    public CausalLm get(int i) {
        return models.get(i);
    }

    public List<CausalLm> models() {
        return Collections.unmodifiableList(models);
    }

    public List<Device> devices() {
        return devices;
    }

    /** Whether model {@code i} was loaded here (from a String source). */
    public boolean owns(int i) {
        return sources.get(i) instanceof String;
    }

    /** Fails when {@code dir} is one of the models' directories or inside one ({@code what} names {@code dir}). */
    public void requireOutside(Path dir, String what) {
        if (dir == null) {
            return;
        }
        for (int i = 0; i < models.size(); i++) {
            Path modelDir = models.get(i).tokenizer().directory();
            if (modelDir != null) {
                ModelDirs.requireNotInside(dir, what, modelDir, label + " " + i + "'s model");
            }
        }
    }

    @Override
    public void close() {
        for (int i = 0; i < models.size(); i++) {
            if (owns(i)) {
                models.get(i).close();
            }
        }
    }
}
