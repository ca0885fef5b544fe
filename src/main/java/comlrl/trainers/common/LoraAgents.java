package comlrl.trainers.common;

import comlrl.model.LoraConfig;
import java.nio.file.Path;
import java.util.List;

/**
 * How a trainer's agents are LoRA agents: an adapter each over frozen base weights.
 *
 * @param config the settings of fresh adapters (null when every agent starts from a saved adapter)
 * @param shareBase {@code agents_share_base}: one base model for all agents (null: share when every
 *        agent names the same base and sits on the same device)
 * @param adapters agent i's PEFT adapter directory to start from (its own settings apply), or null
 *        entries (and a null list) for fresh adapters
 * @param saveMerged whether {@code save_model} writes full models with the adapters folded in
 *        ({@code --merge}) instead of PEFT adapter directories
 */
public record LoraAgents(LoraConfig config, Boolean shareBase, List<Path> adapters, boolean saveMerged) {
    public LoraAgents {
        adapters = adapters == null ? null : java.util.Collections.unmodifiableList(new java.util.ArrayList<>(adapters));
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
