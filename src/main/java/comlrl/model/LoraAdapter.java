package comlrl.model;

import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One agent's LoRA adapter over a decoder's projections ({@link LoraConfig}): for each targeted
 * projection of each layer, {@code A [r, in]} and {@code B [out, r]} with
 * <pre>
 *   delta(x) = s · dropout(x) Aᵀ Bᵀ          [..., out]     (y = x Wᵀ + b + delta(x))
 *   A ~ U(−1/√in, 1/√in)   (PEFT: kaiming_uniform_(a = √5))     B = 0   (a fresh adapter changes nothing)
 *   merged W' = W + s · B A
 * </pre>
 * A and B are float32 over a 16-bit base (PEFT's {@code autocast_adapter_dtype}); the adapted
 * projection is then {@code r(float(y) + s · (float(x) Aᵀ) Bᵀ)}, the float32 delta added to the
 * base's output y in float32 and the sum rounded once to the base's dtype, as PEFT rounds it
 * ({@link #added}), or with {@link LoraConfig#autocast()} {@code r(y + r(s · r(r(x r(A)ᵀ) r(B)ᵀ)))}
 * (r: rounding to the base's dtype; float32 sums), as under {@code torch.autocast}.
 * The adapter owns only these tensors; the base weights stay frozen and shared. Parameters are
 * named as PEFT names them in {@code adapter_model.safetensors}
 * ({@code base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight}).
 */
public final class LoraAdapter implements AutoCloseable {
    private final LoraConfig config;
    private final ModelConfig model;
    private final Map<String, Tensor> a = new LinkedHashMap<>(); // "layer.projection" → [r, in]
    private final Map<String, Tensor> b = new LinkedHashMap<>(); // "layer.projection" → [out, r]
    private final Map<String, String> peftModule = new LinkedHashMap<>();

    private LoraAdapter(ModelConfig model, LoraConfig config) {
        this.model = model;
        this.config = config;
    }

    /** A fresh adapter for a model of {@code model}'s shape, A drawn from {@code seed}, B zero. */
    public static LoraAdapter init(ModelConfig model, LoraConfig config, DType dtype, Device device, long seed) {
        LoraAdapter adapter = new LoraAdapter(model, config);
        adapter.dropoutStream = seed;
        try (Rng rng = new Rng(seed); Scope s = Scope.open()) {
            for (int layer = 0; layer < model.numLayers(); layer++) {
                for (String p : config.targetModules()) {
                    long[] io = inOut(model, p);
                    double bound = 1 / Math.sqrt(io[0]);
                    Tensor aw = Tensor.zerosOf(DType.F32, device, config.r(), io[0]).uniform_(rng).mul(2 * bound)
                            .sub(bound).to(dtype).contiguous().cloneTensor().keep().requiresGrad(true);
                    Tensor bw = Tensor.zerosOf(dtype, device, io[1], config.r()).keep().requiresGrad(true);
                    String key = key(layer, p);
                    adapter.a.put(key, aw);
                    adapter.b.put(key, bw);
                    adapter.peftModule.put(key, "base_model.model.model.layers." + layer + "." + PeftLoraFiles.block(p)
                            + "." + p);
                }
            }
        } catch (RuntimeException | Error e) {
            adapter.close();
            throw e;
        }
        return adapter;
    }

    /** {@code [in, out]} of projection {@code p} in a model of this shape. */
    static long[] inOut(ModelConfig m, String p) {
        long e = m.hiddenSize();
        long q = (long) m.numHeads() * m.headDim();
        long kv = (long) m.numKvHeads() * m.headDim();
        long i = m.intermediateSize();
        return switch (p) {
            case "q_proj" -> new long[] {e, q};
            case "k_proj", "v_proj" -> new long[] {e, kv};
            case "o_proj" -> new long[] {q, e};
            case "gate_proj", "up_proj" -> new long[] {e, i};
            case "down_proj" -> new long[] {i, e};
            default -> throw new IllegalArgumentException("not a decoder projection: " + p);
        };
    }

    static String key(int layer, String p) {
        return layer + "." + p;
    }

    /** The adapted projections' keys ({@code "layer.projection"}), in layer and projection order. */
    java.util.Set<String> keys() {
        return Collections.unmodifiableSet(a.keySet());
    }

    /** A of projection {@code key} ({@code [r, in]}). */
    Tensor a(String key) {
        return a.get(key);
    }

    /** B of projection {@code key} ({@code [out, r]}). */
    Tensor b(String key) {
        return b.get(key);
    }

    /** How many dropout masks this adapter has drawn ({@link #nextDropoutSeed()}); checkpointed for bit-exact resumes. */
    private long dropoutDraws;
    /** The stream the dropout seeds come from (the adapter's init seed). */
    private long dropoutStream;

    /**
     * The seed of the next training pass's dropout masks: {@code mix(stream, draws++)}, so a pass and
     * its recomputation (gradient checkpointing) can draw the same masks, and a resumed run continues
     * the sequence.
     */
    public synchronized long nextDropoutSeed() {
        long z = dropoutStream + 0x9E3779B97F4A7C15L * (++dropoutDraws);
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** The dropout seeds drawn so far and their stream, for checkpoints. */
    public synchronized long[] dropoutState() {
        return new long[] {dropoutStream, dropoutDraws};
    }

    /** Restores {@link #dropoutState()}. */
    public synchronized void setDropoutState(long[] state) {
        dropoutStream = state[0];
        dropoutDraws = state[1];
    }

    public LoraConfig config() {
        return config;
    }

    /**
     * {@code s · dropout(x) Aᵀ Bᵀ} of projection {@code p} of layer {@code layer}, or null when it is
     * not adapted, in x's dtype (float32 adapters over a 16-bit base: the float32 delta rounded once).
     * To add it to the base's output as a model does, use {@link #added}.
     *
     * @param dropoutRng draws the dropout mask (training); null for none (evaluation, generation)
     */
    public Tensor delta(Tensor x, int layer, String p, Rng dropoutRng) {
        return delta(x, layer, p, dropoutRng, true);
    }

    /**
     * {@link #delta}, or with {@code round} false, float32 adapters over a 16-bit base, the float32
     * delta before its rounding (to add to the base's output as {@link #added} does).
     */
    Tensor delta(Tensor x, int layer, String p, Rng dropoutRng, boolean round) {
        Tensor aw = a.get(key(layer, p));
        if (aw == null) {
            return null;
        }
        Tensor bw = b.get(key(layer, p));
        if (autocasts(x, aw)) {
            // as under torch.autocast: the products in the base's dtype on its copies of A and B (float32 sums);
            // A and B stay float32 and get float32 gradients through the copies; PEFT's dropout runs on the
            // float32 input first
            Tensor in = drops(dropoutRng) ? dropout(x, aw.dtype(), dropoutRng).to(x.dtype()) : x;
            return in.linear(aw.to(x.dtype()), null).linear(bw.to(x.dtype()), null).mul_(config.scale());
        }
        // float32 adapters on a bf16/f16 base (as PEFT's autocast_adapter_dtype): the small products in float32
        Tensor out = dropout(x, aw.dtype(), dropoutRng).linear(aw, null).linear(bw, null).mul_(config.scale());
        return out.dtype() == x.dtype() || !round ? out : out.to(x.dtype());
    }

    /**
     * The base's output {@code y = x Wᵀ + b} of projection {@code p} of layer {@code layer} plus
     * {@link #delta}, with PEFT's roundings: float32 adapters over a 16-bit base give
     * <pre>
     *   r(float(y) + s · (float(x) Aᵀ) Bᵀ)        one rounding r to the base's dtype, of the sum
     * </pre>
     * as PEFT's {@code result + lora_B(lora_A(x)) * scaling} (a 16-bit result plus a float32 delta
     * is float32) rounded back with {@code result.to(torch_result_dtype)}; rounding the delta first
     * and then the sum, {@code r(y + r(Δ))}, differs where the sum lies near a tie (y = 1, Δ = 2⁻⁸ + 2⁻¹⁶:
     * PEFT 1 + 2⁻⁷, the other 1). Under {@link LoraConfig#autocast()} and where y and the adapters
     * share a dtype, {@code y + delta}, as PEFT computes them there ({@link #roundedSum}).
     */
    public Tensor added(Tensor y, Tensor x, int layer, String p, Rng dropoutRng) {
        Tensor d = delta(x, layer, p, dropoutRng, false);
        return d == null ? y : roundedSum(y, d);
    }

    /**
     * {@code y + d} in d's dtype, rounded once to y's: a 16-bit y plus a float32 d as PyTorch adds them
     * (type promotion, then the conversion back), or the plain sum when they share a dtype. d is a
     * fresh tensor that only this sum reads: y is added into it in place, so the only new tensor is
     * the rounded sum.
     */
    static Tensor roundedSum(Tensor y, Tensor d) {
        return d.dtype() == y.dtype() ? y.add(d) : d.add_(y, 1.0).to(y.dtype());
    }

    /** Whether the products run in the 16-bit base's dtype ({@link LoraConfig#autocast()}). */
    private boolean autocasts(Tensor in, Tensor aw) {
        return config.autocast() && in.dtype() != aw.dtype() && (in.dtype() == DType.BF16 || in.dtype() == DType.F16);
    }

    /** Whether a pass with this generator drops inputs (training with {@code lora.dropout} above 0). */
    private boolean drops(Rng dropoutRng) {
        return dropoutRng != null && config.dropout() > 0;
    }

    /**
     * x converted to {@code dtype} (the adapters'), then through inverted dropout as torch's:
     * {@code x · (keep / (1 − p))}, keep ~ Bernoulli(1 − p), the factor in that dtype. PEFT converts
     * the input to the adapters' dtype before its dropout, so a bf16 input is not rounded again after
     * the scaling. Without dropout, x converted.
     */
    private Tensor dropout(Tensor x, DType dtype, Rng dropoutRng) {
        Tensor in = x.dtype() == dtype ? x : x.to(dtype);
        if (!drops(dropoutRng)) {
            return in;
        }
        Tensor keep = Tensor.zerosOf(DType.F32, x.device(), x.shape()).uniform_(dropoutRng).gt(config.dropout());
        return in.mul(keep.to(dtype).div(1 - config.dropout()));
    }

    /**
     * The dtype adapters train in over a base of {@code baseDtype}: float32 over half-precision
     * bases (PEFT's {@code autocast_adapter_dtype}: the optimizer's small updates survive), else the
     * base's.
     */
    public static DType trainingDtype(DType baseDtype) {
        return baseDtype == DType.BF16 || baseDtype == DType.F16 ? DType.F32 : baseDtype;
    }

    /**
     * {@code W + s · B A} for projection {@code p} of layer {@code layer} ({@code W} itself when not
     * adapted), as PEFT's {@code merge_and_unload()} makes it: {@code s · B A} in the adapters' dtype,
     * added to W in that dtype and rounded once to W's ({@code weight.data += delta_weight}); PEFT's
     * {@code safe_merge=True} rounds the delta first, which differs near ties.
     */
    public Tensor merged(Tensor w, int layer, String p) {
        Tensor aw = a.get(key(layer, p));
        return aw == null ? w : roundedSum(w, b.get(key(layer, p)).matmul(aw).mul_(config.scale()));
    }

    /** Whether every B is zero, so that this adapter changes nothing (a fresh one). */
    public boolean isIdentity() {
        try (Scope s = Scope.open(); comlrl.tensor.GradMode g = comlrl.tensor.GradMode.noGrad()) {
            for (Tensor bw : b.values()) {
                if (bw.detach().abs().max().item() != 0) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Every A and B, in layer and projection order (what the optimizer steps). */
    public List<Tensor> parameters() {
        List<Tensor> out = new ArrayList<>();
        for (String k : a.keySet()) {
            out.add(a.get(k));
            out.add(b.get(k));
        }
        return out;
    }

    /** The tensors by PEFT's names ({@code ….q_proj.lora_A.weight}, {@code ….lora_B.weight}). */
    public Map<String, Tensor> peftStateDict() {
        Map<String, Tensor> out = new LinkedHashMap<>();
        for (String k : a.keySet()) {
            out.put(peftModule.get(k) + ".lora_A.weight", a.get(k));
            out.put(peftModule.get(k) + ".lora_B.weight", b.get(k));
        }
        return Collections.unmodifiableMap(out);
    }

    // ---------------------------------------------------------------- PEFT adapter directories

    /** PEFT's file names. */
    public static final String CONFIG_FILE = "adapter_config.json";
    public static final String WEIGHTS_FILE = "adapter_model.safetensors";
    private static final com.fasterxml.jackson.databind.ObjectMapper JSON = new com.fasterxml.jackson.databind.ObjectMapper();

    /**
     * Saves this adapter as a PEFT adapter directory, atomically: {@code adapter_config.json}
     * ({@code peft_type: LORA}, {@code task_type: CAUSAL_LM}, {@code r}, {@code lora_alpha},
     * {@code lora_dropout}, {@code target_modules}, {@code use_rslora}, {@code bias: none},
     * {@code base_model_name_or_path}, ...) and {@code adapter_model.safetensors} with PEFT's key names.
     */
    public void savePeft(Path dir, String baseModelNameOrPath) {
        comlrl.model.io.ModelDirs.replace(dir, fresh -> writePeftFiles(fresh, baseModelNameOrPath));
    }

    /**
     * Writes {@code adapter_config.json} and {@code adapter_model.safetensors} into {@code dir}, file
     * by file (for assembling a larger directory inside {@link comlrl.model.io.ModelDirs#replace}).
     */
    public void writePeftFiles(Path dir, String baseModelNameOrPath) {
        Map<String, Object> cfg = new LinkedHashMap<>();
        cfg.put("peft_type", "LORA");
        cfg.put("task_type", "CAUSAL_LM");
        cfg.put("base_model_name_or_path", baseModelNameOrPath);
        cfg.put("r", config.r());
        cfg.put("lora_alpha", config.alpha());
        cfg.put("lora_dropout", config.dropout());
        cfg.put("target_modules", config.targetModules());
        cfg.put("use_rslora", config.useRslora());
        cfg.put("bias", "none");
        cfg.put("fan_in_fan_out", false);
        cfg.put("inference_mode", true);
        cfg.put("init_lora_weights", true);
        cfg.put("modules_to_save", null);
        cfg.put("use_dora", false);
        cfg.put("rank_pattern", Map.of());
        cfg.put("alpha_pattern", Map.of());
        try {
            comlrl.model.io.Safetensors.writeSmallFile(dir.resolve(CONFIG_FILE),
                    JSON.writerWithDefaultPrettyPrinter().writeValueAsString(cfg));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        try (Scope s = Scope.open()) {
            Map<String, Tensor> detached = new LinkedHashMap<>();
            peftStateDict().forEach((k, v) -> detached.put(k, v.detach()));
            comlrl.model.io.Safetensors.save(detached, dir.resolve(WEIGHTS_FILE));
        }
    }

    /**
     * Loads a PEFT LoRA adapter directory for a model of {@code model}'s shape (to start from or to
     * continue training). {@code adapter_config.json} and the header of {@code adapter_model.safetensors}
     * are checked first ({@link #checkPeft}, then against this model's shapes and {@code dtype}),
     * before any tensor is read. Weights stored as float16 or bfloat16 are widened to a float32
     * {@code dtype} exactly (as PEFT's {@code autocast_adapter_dtype} does); other conversions are
     * refused.
     */
    public static LoraAdapter loadPeft(Path dir, ModelConfig model, DType dtype, Device device) {
        return loadPeft(dir, model, dtype, device, false);
    }

    /** {@link #loadPeft(Path, ModelConfig, DType, Device)} with the run's {@link LoraConfig#autocast()} setting. */
    public static LoraAdapter loadPeft(Path dir, ModelConfig model, DType dtype, Device device, boolean autocast) {
        LoraAdapter adapter = init(model, readPeftConfig(dir).withAutocast(autocast), dtype, device, 0);
        try {
            adapter.loadWeights(dir);
        } catch (RuntimeException | Error e) {
            adapter.close();
            throw e;
        }
        return adapter;
    }

    /**
     * The {@link LoraConfig} of a PEFT adapter directory's {@code adapter_config.json}; fails naming
     * the file, the setting and its value when the adapter is not a plain LoRA adapter: every
     * setting of PEFT's {@code LoraConfig} that changes the adapter's math or training and that we do
     * not implement ({@code use_dora}, {@code bias}, {@code modules_to_save}, {@code layers_to_transform},
     * {@code rank_pattern}, {@code alpha_pattern}, a regular-expression {@code target_modules}, ...)
     * is refused unless it holds its do-nothing value (see docs/LORA.md).
     */
    public static LoraConfig readPeftConfig(Path dir) {
        return PeftLoraFiles.readConfig(dir);
    }

    /**
     * Checks a PEFT adapter directory without a base model and without reading its weights:
     * {@link #readPeftConfig}, then the header of {@code adapter_model.safetensors}: every tensor the
     * lora_A {@code [r, in]} or lora_B {@code [out, r]} of a projection the config targets, in a
     * floating-point dtype, on every layer from 0 to the last present. Run before any model loads;
     * {@link #loadPeft} checks the base's layer count and shapes too.
     *
     * @return the adapter's config
     */
    public static LoraConfig checkPeft(Path dir) {
        LoraConfig config = readPeftConfig(dir);
        PeftLoraFiles.checkWeights(dir, config, null, null);
        return config;
    }

    /**
     * Overwrites this adapter's A and B with those of the PEFT adapter directory {@code dir}: bit for
     * bit when the dtypes agree, float16/bfloat16 widened exactly to float32. Fails naming the file
     * and tensor, before anything is overwritten, when a tensor is missing, misshapen, of an integer
     * or narrower dtype, or maps onto no projection this adapter adapts.
     */
    public void loadWeights(Path dir) {
        DType dtype = a.values().iterator().next().dtype();
        Map<String, comlrl.model.io.Safetensors.Entry> entries = PeftLoraFiles.checkWeights(dir, config, model, dtype);
        Map<String, Tensor> saved = comlrl.model.io.Safetensors.load(dir.resolve(WEIGHTS_FILE));
        try (Scope s = Scope.open(); comlrl.tensor.GradMode g = comlrl.tensor.GradMode.noGrad()) {
            for (String k : a.keySet()) {
                a.get(k).copy_(saved.get(entries.get(k + ".A").name()).to(dtype));
                b.get(k).copy_(saved.get(entries.get(k + ".B").name()).to(dtype));
            }
        } finally {
            saved.values().forEach(Tensor::close);
        }
    }

    @Override
    public void close() {
        a.values().forEach(Tensor::close);
        b.values().forEach(Tensor::close);
    }
}
