package comlrl.model;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.model.io.Safetensors;
import comlrl.tensor.DType;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reading PEFT LoRA adapter directories ({@code adapter_config.json}, {@code adapter_model.safetensors})
 * without ever ignoring part of one: what we implement is plain LoRA on every layer's
 * q/k/v/o/gate/up/down projections with one rank and one {@code lora_alpha}; every other setting
 * of PEFT's {@code LoraConfig} is either irrelevant to an adapter's values (where it came from, how
 * it was first initialised) or refused, unless it holds the value that does nothing, naming the
 * setting, its value and what we support. The weights file is checked from its header alone, before
 * any tensor is read: every tensor must be the A or B of a projection the config targets, in a
 * floating-point dtype, of the config's rank.
 */
final class PeftLoraFiles {
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    /** What we support, for every refusal. */
    static final String SUPPORTED = "we load plain LoRA adapters: r, lora_alpha, lora_dropout, use_rslora and "
            + "target_modules (a list of " + String.join(", ", LoraConfig.PROJECTIONS) + ", or \"all-linear\") on "
            + "every layer, with weights in float32 (float16 and bfloat16 are widened to float32 exactly)";

    /**
     * PEFT settings that change an adapter's forward pass or its training and that we do not
     * implement, with what each does; accepted only when unset ({@code null}, {@code false}, empty).
     */
    private static final Map<String, String> UNSUPPORTED = Map.ofEntries(
            Map.entry("fan_in_fan_out", "weights stored transposed, as GPT-2's Conv1D layers"),
            Map.entry("bias", "trained biases (\"all\" or \"lora_only\"); only \"none\" is supported"),
            Map.entry("use_dora", "DoRA's magnitude vectors"),
            Map.entry("modules_to_save", "whole modules (lm_head, embed_tokens, score, ...) trained and saved beside "
                    + "the adapter"),
            Map.entry("layers_to_transform", "adapters on some layers only"),
            Map.entry("layers_pattern", "the layer list layers_to_transform indexes"),
            Map.entry("exclude_modules", "modules left out of target_modules"),
            Map.entry("layer_replication", "layers duplicated before they are adapted"),
            Map.entry("megatron_config", "Megatron's parallel linear layers"),
            Map.entry("trainable_token_indices", "trained rows of the embedding"),
            Map.entry("use_qalora", "QA-LoRA's pooled inputs"),
            Map.entry("lora_bias", "a trained bias on lora_B"),
            Map.entry("target_parameters", "LoRA on raw parameters (mixture-of-experts weights)"),
            Map.entry("alora_invocation_tokens", "activated LoRA, applied only after the invocation tokens"),
            Map.entry("arrow_config", "Arrow routing among several adapters"),
            Map.entry("velora_config", "VeLoRA's compressed-activation backward pass"),
            Map.entry("monteclora_config", "MonteCLoRA's sampled adapters"),
            Map.entry("use_bdlora", "block-diagonal A or B (BD-LoRA)"),
            Map.entry("kasa_config", "the KaSA variant"));

    /**
     * Settings that do not change a saved adapter's values or how it computes: where it came from,
     * runtime options, and the configuration of initialisations (the weights come from the file;
     * {@code init_lora_weights} itself is checked).
     */
    private static final Set<String> IRRELEVANT = Set.of("peft_type", "task_type", "base_model_name_or_path",
            "revision", "inference_mode", "auto_mapping", "peft_version", "megatron_core", "loftq_config",
            "eva_config", "corda_config", "lora_ga_config", "qalora_group_size", "runtime_config",
            "ensure_weight_tying", "init_lora_weights");

    /** Settings we implement. */
    private static final Set<String> READ = Set.of("r", "lora_alpha", "lora_dropout", "target_modules", "use_rslora",
            "rank_pattern", "alpha_pattern");

    /** Initialisations after which the saved A and B are a plain LoRA adapter of the unmodified base. */
    private static final Set<String> PLAIN_INITS = Set.of("true", "false", "gaussian", "eva", "orthogonal");

    /** PEFT's name of one adapter tensor: {@code base_model.model.model.layers.L.BLOCK.PROJ.lora_X[.default].weight}. */
    private static final Pattern TENSOR = Pattern.compile(
            "base_model\\.model\\.model\\.layers\\.(\\d+)\\.(self_attn|mlp)\\.(\\w+)\\.lora_([AB])(\\.default)?\\.weight");

    private PeftLoraFiles() {
    }

    // ---------------------------------------------------------------- adapter_config.json

    /** The {@link LoraConfig} of {@code dir/adapter_config.json}, after refusing every setting we do not implement. */
    static LoraConfig readConfig(Path dir) {
        Path file = dir.resolve(LoraAdapter.CONFIG_FILE);
        JsonNode cfg;
        try {
            cfg = JSON.readTree(file.toFile());
        } catch (IOException e) {
            throw new IllegalArgumentException("Cannot read " + file + " (a PEFT adapter directory holds "
                    + LoraAdapter.CONFIG_FILE + " and " + LoraAdapter.WEIGHTS_FILE + "): " + e.getMessage(), e);
        }
        if (cfg == null || !cfg.isObject()) {
            throw new IllegalArgumentException(file + " must hold a JSON object (PEFT's LoraConfig)");
        }
        String peftType = cfg.path("peft_type").asText();
        if (!"LORA".equalsIgnoreCase(peftType)) {
            throw new IllegalArgumentException(file + ": peft_type is " + cfg.path("peft_type") + "; only LORA "
                    + "adapters load here");
        }
        JsonNode task = cfg.get("task_type");
        if (task != null && !task.isNull() && !"CAUSAL_LM".equals(task.asText())) {
            throw new IllegalArgumentException(file + ": task_type " + task + " is not supported: these agents are "
                    + "causal language models, so only CAUSAL_LM adapters (or none) load here");
        }
        cfg.fields().forEachRemaining(f -> checkSetting(file, f.getKey(), f.getValue()));
        checkInit(file, cfg.get("init_lora_weights"));
        LoraConfig d = LoraConfig.defaults(); // PEFT's defaults for what the file leaves out
        int r = (int) integer(file, cfg, "r", d.r());
        double alpha = number(file, cfg, "lora_alpha", d.alpha());
        double dropout = number(file, cfg, "lora_dropout", d.dropout());
        JsonNode rslora = cfg.get("use_rslora");
        if (rslora != null && !rslora.isNull() && !rslora.isBoolean()) {
            throw new IllegalArgumentException(file + ": use_rslora must be true or false, got " + rslora);
        }
        checkPattern(file, cfg.get("rank_pattern"), "rank_pattern", "r", r);
        checkPattern(file, cfg.get("alpha_pattern"), "alpha_pattern", "lora_alpha", alpha);
        try {
            return new LoraConfig(r, alpha, dropout, targets(file, cfg.get("target_modules"), d),
                    rslora != null && rslora.asBoolean());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
        }
    }

    private static void checkSetting(Path file, String key, JsonNode value) {
        if (READ.contains(key) || IRRELEVANT.contains(key)) {
            return;
        }
        if (key.equals("bias") && value.isTextual() && value.asText().equals("none")) {
            return;
        }
        String what = UNSUPPORTED.get(key);
        if (isUnset(value)) {
            return; // a setting at its do-nothing value, including one of a newer peft that we do not know
        }
        throw new IllegalArgumentException(file + ": " + key + " = " + value + " is not supported ("
                + (what != null ? what : "a setting we do not know, perhaps of a newer peft, so we cannot tell that "
                        + "ignoring it is safe") + "); " + SUPPORTED + ". Train or convert the adapter without it.");
    }

    /** Null, false, or an empty string, list or map: what PEFT's unused settings hold. */
    private static boolean isUnset(JsonNode v) {
        return v == null || v.isNull() || (v.isBoolean() && !v.asBoolean()) || (v.isTextual() && v.asText().isEmpty())
                || (v.isContainerNode() && v.isEmpty());
    }

    private static void checkInit(Path file, JsonNode init) {
        if (init == null || init.isNull() || PLAIN_INITS.contains(init.asText())) {
            return;
        }
        String name = init.asText();
        String why = name.startsWith("pissa") || name.equals("olora") || name.equals("corda") || name.equals("lora_ga")
                ? "this initialisation changes the base weights, so the saved A and B only fit that changed base; "
                        + "save the adapter with path_initial_model_for_weight_conversion, which writes a plain LoRA "
                        + "adapter of the original base (init_lora_weights: true)"
                : name.equals("loftq") ? "LoftQ adapters belong to a quantized base"
                : name.equals("mica") ? "MiCA trains A only, with B frozen"
                : "an initialisation we do not know";
        throw new IllegalArgumentException(file + ": init_lora_weights = " + init + " is not supported (" + why + "); "
                + SUPPORTED + ".");
    }

    /**
     * {@code rank_pattern} / {@code alpha_pattern}: per-module ranks or alphas, which we do not
     * implement; entries equal to the global value change nothing and are accepted.
     */
    private static void checkPattern(Path file, JsonNode pattern, String key, String globalKey, double global) {
        if (pattern == null || pattern.isNull()) {
            return;
        }
        if (!pattern.isObject()) {
            throw new IllegalArgumentException(file + ": " + key + " must be a map of module patterns to values, got "
                    + pattern);
        }
        pattern.fields().forEachRemaining(f -> {
            if (!f.getValue().isNumber() || f.getValue().asDouble() != global) {
                throw new IllegalArgumentException(file + ": " + key + " = " + pattern + " is not supported (a "
                        + globalKey + " per module: '" + f.getKey() + "' gets " + f.getValue() + " instead of "
                        + globalKey + " " + fmt(global) + "); " + SUPPORTED + ", one " + globalKey + " for every "
                        + "module. Train the adapter without " + key + ".");
            }
        });
    }

    private static List<String> targets(Path file, JsonNode t, LoraConfig defaults) {
        if (t == null || t.isNull()) {
            return defaults.targetModules(); // PEFT's default for these families
        }
        if (t.isTextual()) {
            String s = t.asText().trim();
            if (s.equals("all-linear") || s.equals("all_linear")) {
                return List.of(s);
            }
            throw new IllegalArgumentException(file + ": target_modules = " + t + " is a regular expression over "
                    + "module names, which is not supported; " + SUPPORTED + ". List the projections instead, e.g. "
                    + "[\"q_proj\", \"v_proj\"].");
        }
        if (!t.isArray()) {
            throw new IllegalArgumentException(file + ": target_modules must be a list of projection names, got " + t);
        }
        List<String> out = new ArrayList<>();
        for (JsonNode n : t) {
            if (!n.isTextual()) {
                throw new IllegalArgumentException(file + ": target_modules must hold names, got " + n);
            }
            out.add(n.asText());
        }
        return out;
    }

    private static long integer(Path file, JsonNode cfg, String key, long fallback) {
        JsonNode n = cfg.get(key);
        if (n == null || n.isNull()) {
            return fallback;
        }
        if (!n.isIntegralNumber() || !n.canConvertToInt()) {
            throw new IllegalArgumentException(file + ": " + key + " must be an integer, got " + n);
        }
        return n.asInt();
    }

    private static double number(Path file, JsonNode cfg, String key, double fallback) {
        JsonNode n = cfg.get(key);
        if (n == null || n.isNull()) {
            return fallback;
        }
        if (!n.isNumber()) {
            throw new IllegalArgumentException(file + ": " + key + " must be a number, got " + n);
        }
        return n.asDouble();
    }

    private static String fmt(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }

    // ---------------------------------------------------------------- adapter_model.safetensors

    /** One tensor of the weights file, by the projection it adapts. */
    private record Slot(int layer, String projection, char factor) {
        String key() {
            return LoraAdapter.key(layer, projection) + "." + factor;
        }
    }

    /**
     * Checks {@code dir/adapter_model.safetensors} from its header against {@code config}: every
     * tensor the A ({@code [r, in]}) or B ({@code [out, r]}) of a projection the config targets, in
     * a floating-point dtype, and every layer from 0 to the last one present adapted on every
     * target with both factors. With {@code model} (else null), also its layer count and every
     * tensor's full shape; with {@code target} (else null), each dtype must widen to it exactly.
     *
     * @return the header entries by {@code "layer.projection.A|B"}
     */
    static Map<String, Safetensors.Entry> checkWeights(Path dir, LoraConfig config, ModelConfig model, DType target) {
        Path file = dir.resolve(LoraAdapter.WEIGHTS_FILE);
        Map<String, Safetensors.Entry> found = new LinkedHashMap<>();
        Map<String, String> names = new HashMap<>();
        TreeMap<Integer, Set<String>> layers = new TreeMap<>();
        for (Safetensors.Entry e : Safetensors.readHeader(file)) {
            Slot slot = slot(file, e.name(), config, model);
            String previous = names.put(slot.key(), e.name());
            if (previous != null) {
                throw new IllegalArgumentException(file + ": tensors '" + previous + "' and '" + e.name() + "' are both "
                        + "the lora_" + slot.factor + " of layer " + slot.layer + "'s " + slot.projection + "; keep one");
            }
            checkDtype(file, e, target);
            checkShape(file, e, slot, config, model);
            found.put(slot.key(), e);
            layers.computeIfAbsent(slot.layer, l -> new TreeSet<>()).add(slot.projection + "." + slot.factor);
        }
        long count = model != null ? model.numLayers() : layers.isEmpty() ? 0 : layers.lastKey() + 1L;
        if (count == 0) {
            throw new IllegalArgumentException(file + " holds no LoRA tensors; " + SUPPORTED);
        }
        for (int layer = 0; layer < count; layer++) {
            for (String p : config.targetModules()) {
                for (char f : new char[] {'A', 'B'}) {
                    if (!layers.getOrDefault(layer, Set.of()).contains(p + "." + f)) {
                        throw new IllegalArgumentException(file + ": tensor '" + peftName(layer, p, f) + "' is missing: "
                                + "adapter_config.json targets " + config.targetModules() + " on every layer (0.."
                                + (count - 1) + "), and adapters on some layers only are not supported; " + SUPPORTED);
                    }
                }
            }
        }
        return found;
    }

    static String peftName(int layer, String projection, char factor) {
        return "base_model.model.model.layers." + layer + "." + block(projection) + "." + projection + ".lora_" + factor
                + ".weight";
    }

    static String block(String projection) {
        return List.of("q_proj", "k_proj", "v_proj", "o_proj").contains(projection) ? "self_attn" : "mlp";
    }

    /** The projection tensor {@code name} adapts, or an error naming it and saying why it fits nothing we adapt. */
    private static Slot slot(Path file, String name, LoraConfig config, ModelConfig model) {
        Matcher m = TENSOR.matcher(name);
        String where = file + ": tensor '" + name + "'";
        if (!m.matches()) {
            String what = name.contains("lm_head") ? "a LoRA factor or copy of lm_head, which we do not adapt"
                    : name.contains("embed_tokens") ? "a LoRA factor, copy or trained rows of embed_tokens, which we do "
                            + "not adapt"
                    : name.contains("modules_to_save") ? "a whole module saved beside the adapter (modules_to_save)"
                    : name.contains("lora_magnitude_vector") ? "a DoRA magnitude vector"
                    : name.endsWith(".bias") ? "a trained bias"
                    : "not the lora_A or lora_B of a decoder layer's projection";
            throw new IllegalArgumentException(where + " is " + what + "; every tensor must map onto a module we adapt "
                    + "(base_model.model.model.layers.N.self_attn|mlp.PROJECTION.lora_A|lora_B.weight); " + SUPPORTED);
        }
        String projection = m.group(3);
        if (!LoraConfig.PROJECTIONS.contains(projection) || !block(projection).equals(m.group(2))) {
            throw new IllegalArgumentException(where + " adapts " + m.group(2) + "." + projection + ", which is not a "
                    + "projection we adapt; " + SUPPORTED);
        }
        if (!config.targets(projection)) {
            throw new IllegalArgumentException(where + " adapts " + projection + " but adapter_config.json's "
                    + "target_modules is " + config.targetModules() + ": the config and the weights disagree; add "
                    + projection + " to target_modules or remove its tensors");
        }
        int layer;
        try {
            layer = Integer.parseInt(m.group(1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(where + " names layer " + m.group(1) + ", beyond any model", e);
        }
        if (model != null && layer >= model.numLayers()) {
            throw new IllegalArgumentException(where + " adapts layer " + m.group(1) + " but the base model has "
                    + model.numLayers() + " layers (0.." + (model.numLayers() - 1) + "): the adapter was trained on "
                    + "another base; use the base it names in base_model_name_or_path");
        }
        return new Slot(layer, projection, m.group(4).charAt(0));
    }

    private static void checkDtype(Path file, Safetensors.Entry e, DType target) {
        if (!e.dtype().isFloatingPoint()) {
            throw new IllegalArgumentException(file + ": tensor '" + e.name() + "' is stored as " + e.dtype()
                    .safetensorsName() + ", an integer type, but LoRA weights are floating-point ("
                    + (target == null ? "F32" : target.safetensorsName()) + " here): the file is damaged or not a LoRA "
                    + "adapter");
        }
        if (target != null && !widensExactly(e.dtype(), target)) {
            throw new IllegalArgumentException(file + ": tensor '" + e.name() + "' is stored as "
                    + e.dtype().safetensorsName() + " but this adapter trains in " + target.safetensorsName()
                    + ", and converting would round it; save the adapter in " + target.torchName() + " (float16 and "
                    + "bfloat16 are widened to float32 exactly)");
        }
    }

    /**
     * Whether every {@code from} value is exactly a {@code to} value: the same type, float16 or
     * bfloat16 to float32, any float to float64.
     */
    static boolean widensExactly(DType from, DType to) {
        return from == to || (to == DType.F32 && (from == DType.F16 || from == DType.BF16))
                || (to == DType.F64 && from.isFloatingPoint());
    }

    private static void checkShape(Path file, Safetensors.Entry e, Slot slot, LoraConfig config, ModelConfig model) {
        long[] expected = null;
        boolean ok;
        if (model != null) {
            long[] io = LoraAdapter.inOut(model, slot.projection);
            expected = slot.factor == 'A' ? new long[] {config.r(), io[0]} : new long[] {io[1], config.r()};
            ok = Arrays.equals(e.shape(), expected);
        } else {
            ok = e.shape().length == 2 && e.shape()[slot.factor == 'A' ? 0 : 1] == config.r();
        }
        if (!ok) {
            String rank = e.shape().length == 2 ? " (rank " + e.shape()[slot.factor == 'A' ? 0 : 1] + ")" : "";
            throw new IllegalArgumentException(file + ": tensor '" + e.name() + "' has shape "
                    + Arrays.toString(e.shape()) + rank + " but " + (expected != null ? Arrays.toString(expected)
                            + " is expected" : "lora_" + slot.factor + " is " + (slot.factor == 'A' ? "[r, in]" : "[out, r]"))
                    + " with adapter_config.json's r = " + config.r() + (model != null ? " on this base" : "")
                    + ": the config and the weights disagree, or the adapter belongs to another base");
        }
    }
}
