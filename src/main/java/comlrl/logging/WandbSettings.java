package comlrl.logging;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A trainer's {@code wandb_config} read as the reference reads it: {@code project} (default
 * "comlrl"), {@code entity}, {@code name} or {@code run_name} (default {@code test-<algorithm>}),
 * {@code tags}, {@code dir} (created), and {@code config_sections} ({@code dataset}, {@code output},
 * {@code external}, {@code trainer}) attached verbatim to the run's config with the derived
 * {@code dataset_name}, {@code dataset_type} and {@code external_mode}; plus {@code id} and
 * {@code resume} to continue a run (the checkpoint's identity, see
 * {@code Checkpointing.readCheckpointMetadata}), and our {@code init_timeout_s} (default 120),
 * {@code finish_timeout_s} (default 300) and {@code stall_timeout_s} (default 60: how long the
 * bridge may leave a line unread, during the run or while finishing, before W&amp;B logging is given
 * up for the rest of the run, see {@link WandbSink}). Other {@code wandb.init} keywords pass through as given
 * ({@code group}, {@code job_type}, {@code notes}, {@code mode}); a key W&amp;B does not know fails
 * in {@code wandb.init} with its own message.
 *
 * @param initKwargs the keyword arguments of {@code wandb.init}
 */
public record WandbSettings(Map<String, Object> initKwargs, Duration initTimeout, Duration finishTimeout,
        Duration stallTimeout) {
    /** The keys read here rather than passed through. */
    static final List<String> OURS = List.of("run_name", "config_sections", "init_timeout_s", "finish_timeout_s",
            "stall_timeout_s", "output_dir");

    /**
     * @param wandbConfig the trainer's {@code wandb_config}
     * @param algorithm the trainer's name ("MAGRPO"), for the default run name and the config
     * @param runConfig the trainer's resolved config fields (its {@code args}), recorded in the run's config
     */
    public static WandbSettings of(Map<String, ?> wandbConfig, String algorithm, Map<String, ?> runConfig) {
        Map<String, Object> kwargs = new LinkedHashMap<>();
        kwargs.put("project", text(wandbConfig.get("project"), "comlrl"));
        if (wandbConfig.get("entity") != null) {
            kwargs.put("entity", String.valueOf(wandbConfig.get("entity")));
        }
        Object name = wandbConfig.get("name") != null ? wandbConfig.get("name") : wandbConfig.get("run_name");
        kwargs.put("name", text(name, "test-" + algorithm.toLowerCase(java.util.Locale.ROOT)));
        if (wandbConfig.get("tags") != null) {
            Object tags = wandbConfig.get("tags");
            if (!(tags instanceof List<?> list)) {
                throw new IllegalArgumentException("wandb_config.tags must be a list of strings, got " + tags);
            }
            kwargs.put("tags", list.stream().map(String::valueOf).toList());
        }
        if (wandbConfig.get("dir") != null) {
            java.nio.file.Path dir = java.nio.file.Path.of(String.valueOf(wandbConfig.get("dir"))).toAbsolutePath();
            try {
                java.nio.file.Files.createDirectories(dir);
            } catch (java.io.IOException e) {
                throw new IllegalArgumentException("wandb_config.dir " + dir + " cannot be created: " + e.getMessage(), e);
            }
            kwargs.put("dir", dir.toString());
        }
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("algorithm", algorithm);
        config.putAll(runConfig);
        if (wandbConfig.get("config_sections") instanceof Map<?, ?> sections) {
            sections.forEach((k, v) -> config.put(String.valueOf(k), v));
            derive(config, sections, "dataset", "name", "dataset_name");
            derive(config, sections, "dataset", "type", "dataset_type");
            derive(config, sections, "external", "mode", "external_mode");
        } else if (wandbConfig.get("config_sections") != null) {
            throw new IllegalArgumentException("wandb_config.config_sections must be a mapping of sections (dataset, "
                    + "output, external, trainer), got " + wandbConfig.get("config_sections"));
        }
        kwargs.put("config", config);
        for (Map.Entry<String, ?> e : wandbConfig.entrySet()) {
            String key = e.getKey();
            if (!kwargs.containsKey(key) && !OURS.contains(key) && e.getValue() != null) {
                kwargs.put(key, e.getValue()); // id, resume, mode, group, job_type, notes, ...
            }
        }
        return new WandbSettings(kwargs, seconds(wandbConfig, "init_timeout_s", 120),
                seconds(wandbConfig, "finish_timeout_s", 300),
                seconds(wandbConfig, "stall_timeout_s", WandbSink.DEFAULT_STALL_TIMEOUT.toSeconds()));
    }

    private static void derive(Map<String, Object> config, Map<?, ?> sections, String section, String key, String as) {
        if (sections.get(section) instanceof Map<?, ?> m && m.get(key) != null) {
            config.put(as, m.get(key));
        }
    }

    private static String text(Object value, String fallback) {
        return value == null ? fallback : String.valueOf(value);
    }

    private static Duration seconds(Map<String, ?> config, String key, long fallback) {
        Object v = config.get(key);
        if (v == null) {
            return Duration.ofSeconds(fallback);
        }
        if (!(v instanceof Number n) || !(n.doubleValue() > 0)) {
            throw new IllegalArgumentException("wandb_config." + key + " must be a number of seconds > 0, got " + v);
        }
        return Duration.ofMillis((long) (n.doubleValue() * 1000));
    }
}
