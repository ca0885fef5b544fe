package comlrl.trainers.common;

import comlrl.model.LoraConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * How a trainer's agents are LoRA agents: fresh adapters' settings ({@code config}, null when all start
 * from saved adapters), {@link TrainerBuilder#agentsShareBase}, {@link TrainerBuilder#loraAdapters}
 * (null entries: fresh) and {@link TrainerBuilder#mergeAdaptersOnSave}.
 */
public record LoraAgents(LoraConfig config, Boolean shareBase, List<Path> adapters, boolean saveMerged) {
    public LoraAgents {
        adapters = adapters == null ? null : Collections.unmodifiableList(new ArrayList<>(adapters));
        if (config == null && (adapters == null || adapters.contains(null))) {
            throw new IllegalArgumentException("LoRA agents need a lora config (r, alpha, dropout, target_modules, "
                    + "use_rslora) for every agent that does not start from a saved adapter (lora_adapters)");
        }
    }

    /** Agent i's adapter directory to start from, or null. */
    public Path adapter(int i) {
        return adapters == null ? null : adapters.get(i);
    }
}
