package comlrl.data;

import java.util.Objects;

/**
 * One split of a Hugging Face hub dataset: what {@code load_dataset(repo_id, config, split=...,
 * revision=...)} names.
 *
 * <pre>{@code
 * HubSplit train = HubSplit.of("openai/gsm8k").withConfig("main");   // split "train", revision "main"
 * HubSplit test = train.withSplit("test");
 * }</pre>
 *
 * @param repoId the dataset's id, {@code owner/name} (e.g. {@code openai/gsm8k})
 * @param config the config (subset) name, e.g. {@code main}; null picks the dataset's default:
 *     the config its README marks {@code default: true}, its only config, or the one named
 *     {@code default}
 * @param split the split, e.g. {@code train} (the default), {@code test}, {@code validation}
 * @param revision a branch, tag or commit hash of the dataset repository; default {@code main}
 */
public record HubSplit(String repoId, String config, String split, String revision) {
    /** The split read when none is named. */
    public static final String DEFAULT_SPLIT = "train";
    /** The revision read when none is named. */
    public static final String DEFAULT_REVISION = "main";

    /** Fills in the defaults: a blank config means the default one, a null split "train", a null revision "main". */
    public HubSplit {
        Objects.requireNonNull(repoId, "repoId");
        if (repoId.isBlank()) {
            throw new IllegalArgumentException("a hub dataset needs an id such as 'openai/gsm8k'");
        }
        config = config == null || config.isBlank() ? null : config.strip();
        split = split == null || split.isBlank() ? DEFAULT_SPLIT : split.strip();
        revision = revision == null || revision.isBlank() ? DEFAULT_REVISION : revision.strip();
    }

    /** The {@code train} split of {@code repoId}'s default config at revision {@code main}. */
    public static HubSplit of(String repoId) {
        return new HubSplit(repoId, null, null, null);
    }

    /** This split of config {@code newConfig} (null: the default config). */
    public HubSplit withConfig(String newConfig) {
        return new HubSplit(repoId, newConfig, split, revision);
    }

    /** Split {@code newSplit} of the same config. */
    public HubSplit withSplit(String newSplit) {
        return new HubSplit(repoId, config, newSplit, revision);
    }

    /** The same split at {@code newRevision}. */
    public HubSplit withRevision(String newRevision) {
        return new HubSplit(repoId, config, split, newRevision);
    }

    /** {@code openai/gsm8k (config main, split train, revision main)}. */
    @Override
    public String toString() {
        return repoId + " (config " + (config == null ? "default" : config) + ", split " + split + ", revision "
                + revision + ")";
    }
}
