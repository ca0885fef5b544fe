package comlrl.model.io;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Turns what users write for a model ({@code agent_model}, {@code --model}) into a local model
 * directory: an existing directory is used as it is; anything else is a Hugging Face hub id
 * resolved through the standard cache ({@link HubCache}), downloading missing files unless
 * {@code HF_HUB_OFFLINE} is set.
 */
public final class ModelSources {
    private ModelSources() {
    }

    public static Path resolve(String source) {
        if (source == null || source.isBlank()) {
            throw new IllegalArgumentException("Model source is empty: give a model directory or a hub id "
                    + "like Qwen/Qwen2.5-0.5B");
        }
        Path p = Path.of(source);
        if (Files.isDirectory(p)) {
            return p;
        }
        if (source.startsWith("/") || source.startsWith(".") || source.split("/").length > 2) {
            throw new IllegalArgumentException("Model directory not found: " + source
                    + " (give an existing directory, or a hub id like Qwen/Qwen2.5-0.5B)");
        }
        HubRepo repo = HubCache.fromEnvironment().repo(source);
        repo.file("config.json", true);
        repo.file("tokenizer.json", true);
        repo.file("tokenizer_config.json", false);
        repo.file("special_tokens_map.json", false);
        repo.file("generation_config.json", false);
        if (repo.file(Safetensors.SINGLE_FILE, false) == null) {
            Path index = repo.file(Safetensors.INDEX_FILE, false);
            if (index == null) {
                throw new IllegalArgumentException("Model " + source + " has neither " + Safetensors.SINGLE_FILE
                        + " nor " + Safetensors.INDEX_FILE + " (only safetensors weights are supported)");
            }
            for (String shard : Safetensors.shardFiles(index)) {
                repo.file(shard, true);
            }
        }
        return repo.directory();
    }
}
