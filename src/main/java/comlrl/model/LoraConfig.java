package comlrl.model;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * A LoRA adapter's settings (PEFT's {@code LoraConfig}): on each targeted projection
 * {@code y = W x + s · B A dropout(x)} with {@code A [r, in]}, {@code B [out, r]} and the scale
 * {@code s = lora_alpha / r}, or {@code lora_alpha / √r} with {@code use_rslora}.
 *
 * @param r the rank (≥ 1)
 * @param alpha {@code lora_alpha} (&gt; 0)
 * @param dropout {@code lora_dropout}, in [0, 1)
 * @param targetModules the projections adapted, among q_proj, k_proj, v_proj, o_proj, gate_proj,
 *        up_proj, down_proj ("all-linear" names all seven)
 * @param useRslora the rank-stabilised scale α/√r
 * @param autocast on a 16-bit base, the adapters' products in the base's dtype on 16-bit copies of the
 *        float32 adapters (float32 sums), as under {@code torch.autocast} (what transformers' Trainer runs
 *        with {@code bf16=True}); false (the default): in float32, as PEFT without autocast. Not a PEFT
 *        {@code LoraConfig} field: a setting of the run, not written into adapter directories. No effect on
 *        a float32 base.
 */
public record LoraConfig(int r, double alpha, double dropout, List<String> targetModules, boolean useRslora,
        boolean autocast) {
    /** The decoder's linear projections, in layer order. */
    public static final List<String> PROJECTIONS = List.of("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj",
            "up_proj", "down_proj");

    public LoraConfig {
        if (r < 1) {
            throw new IllegalArgumentException("lora.r must be >= 1, got " + r);
        }
        if (!(alpha > 0) || !Double.isFinite(alpha)) {
            throw new IllegalArgumentException("lora.alpha must be a finite number > 0, got " + alpha);
        }
        if (!(dropout >= 0 && dropout < 1)) {
            throw new IllegalArgumentException("lora.dropout must be in [0, 1), got " + dropout);
        }
        targetModules = List.copyOf(resolveTargets(targetModules));
    }

    /** Without autocast (the adapters' products in float32). */
    public LoraConfig(int r, double alpha, double dropout, List<String> targetModules, boolean useRslora) {
        this(r, alpha, dropout, targetModules, useRslora, false);
    }

    /** These settings with {@link #autocast()} set to {@code on}. */
    public LoraConfig withAutocast(boolean on) {
        return new LoraConfig(r, alpha, dropout, targetModules, useRslora, on);
    }

    /**
     * PEFT's defaults: rank 8, {@code lora_alpha} 8, no dropout, and the projections PEFT adapts by
     * default in these decoder families (q_proj and v_proj).
     */
    public static LoraConfig defaults() {
        return new LoraConfig(8, 8, 0.0, List.of("q_proj", "v_proj"), false);
    }

    /** The scale s: α/r, or α/√r with use_rslora. */
    public double scale() {
        return useRslora ? alpha / Math.sqrt(r) : alpha / r;
    }

    /**
     * The settings as a run's {@code lora:} section writes them ({@code r, alpha, dropout,
     * target_modules, use_rslora}, in that order, and {@code autocast} when it is set; {@link
     * #fromMap(Map)} reads it back).
     */
    public Map<String, Object> toMap() {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("r", r);
        map.put("alpha", alpha);
        map.put("dropout", dropout);
        map.put("target_modules", targetModules);
        map.put("use_rslora", useRslora);
        if (autocast) {
            map.put("autocast", true);
        }
        return map;
    }

    /** Whether projection {@code name} (e.g. "q_proj") is adapted. */
    public boolean targets(String name) {
        return targetModules.contains(name);
    }

    private static List<String> resolveTargets(List<String> names) {
        if (names == null || names.isEmpty()) {
            throw new IllegalArgumentException("lora.target_modules must name at least one projection ("
                    + String.join(", ", PROJECTIONS) + ") or be \"all-linear\"");
        }
        Set<String> out = new LinkedHashSet<>();
        for (String n : names) {
            String key = n == null ? "" : n.trim().toLowerCase(Locale.ROOT);
            if (key.equals("all-linear") || key.equals("all_linear")) {
                out.addAll(PROJECTIONS);
            } else if (PROJECTIONS.contains(key)) {
                out.add(key);
            } else {
                throw new IllegalArgumentException("lora.target_modules: unknown projection \"" + n + "\"; use "
                        + String.join(", ", PROJECTIONS) + " or \"all-linear\"");
            }
        }
        List<String> ordered = new ArrayList<>();
        for (String p : PROJECTIONS) {
            if (out.contains(p)) {
                ordered.add(p);
            }
        }
        return ordered;
    }

    private static Number number(Object value, String key, Number fallback) {
        if (value == null) {
            return fallback;
        }
        if (!(value instanceof Number n)) {
            throw new IllegalArgumentException("lora." + key + " must be a number, got \"" + value + "\"");
        }
        return n;
    }

    /**
     * From a run config's {@code lora:} section ({@code r, alpha, dropout, target_modules, use_rslora,
     * autocast}); missing keys keep {@link #defaults()}.
     */
    public static LoraConfig fromMap(Map<String, ?> values) {
        LoraConfig d = defaults();
        for (String key : values.keySet()) {
            if (!List.of("r", "alpha", "lora_alpha", "dropout", "lora_dropout", "target_modules", "use_rslora", "autocast")
                    .contains(key)) {
                throw new IllegalArgumentException("lora: unknown key '" + key + "'; use r, alpha, dropout, "
                        + "target_modules, use_rslora, autocast");
            }
        }
        Object ac = values.get("autocast");
        if (ac != null && !(ac instanceof Boolean)) {
            throw new IllegalArgumentException("lora.autocast must be true or false, got " + ac);
        }
        Object a = values.containsKey("alpha") ? values.get("alpha") : values.get("lora_alpha");
        Object p = values.containsKey("dropout") ? values.get("dropout") : values.get("lora_dropout");
        Object t = values.get("target_modules");
        List<String> targets = t == null ? d.targetModules() : t instanceof List<?> l
                ? l.stream().map(String::valueOf).toList() : List.of(String.valueOf(t));
        Object rs = values.get("use_rslora");
        if (rs != null && !(rs instanceof Boolean)) {
            throw new IllegalArgumentException("lora.use_rslora must be true or false, got " + rs);
        }
        Number r = number(values.get("r"), "r", d.r());
        if (r.doubleValue() != Math.rint(r.doubleValue())) {
            throw new IllegalArgumentException("lora.r must be an integer, got " + r);
        }
        return new LoraConfig(r.intValue(), number(a, "alpha", d.alpha()).doubleValue(),
                number(p, "dropout", d.dropout()).doubleValue(), targets, Boolean.TRUE.equals(rs), Boolean.TRUE.equals(ac));
    }
}
