package comlrl.model;

import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
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
 * The adapter owns only these tensors; the base weights stay frozen and shared. Parameters are
 * named as PEFT names them in {@code adapter_model.safetensors}
 * ({@code base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight}).
 */
public final class LoraAdapter implements AutoCloseable {
    private final LoraConfig config;
    private final Map<String, Tensor> a = new LinkedHashMap<>(); // "layer.projection" → [r, in]
    private final Map<String, Tensor> b = new LinkedHashMap<>(); // "layer.projection" → [out, r]
    private final Map<String, String> peftModule = new LinkedHashMap<>();

    private LoraAdapter(LoraConfig config) {
        this.config = config;
    }

    /** A fresh adapter for a model of {@code model}'s shape, A drawn from {@code seed}, B zero. */
    public static LoraAdapter init(ModelConfig model, LoraConfig config, DType dtype, Device device, long seed) {
        LoraAdapter adapter = new LoraAdapter(config);
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
                    adapter.peftModule.put(key, "base_model.model.model.layers." + layer + "." + block(p) + "." + p);
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

    private static String block(String p) {
        return List.of("q_proj", "k_proj", "v_proj", "o_proj").contains(p) ? "self_attn" : "mlp";
    }

    private static String key(int layer, String p) {
        return layer + "." + p;
    }

    public LoraConfig config() {
        return config;
    }

    /**
     * {@code s · dropout(x) Aᵀ Bᵀ} of projection {@code p} of layer {@code layer}, or null when it is
     * not adapted.
     *
     * @param dropoutRng draws the dropout mask (training); null for none (evaluation, generation)
     */
    public Tensor delta(Tensor x, int layer, String p, Rng dropoutRng) {
        Tensor aw = a.get(key(layer, p));
        if (aw == null) {
            return null;
        }
        Tensor in = x;
        if (dropoutRng != null && config.dropout() > 0) {
            // inverted dropout: keep with probability 1 − p, scaled by 1/(1 − p)
            Tensor keep = Tensor.zerosOf(DType.F32, x.device(), x.shape()).uniform_(dropoutRng).gt(config.dropout());
            in = x.mul(keep.to(x.dtype())).div(1 - config.dropout());
        }
        return in.linear(aw, null).linear(b.get(key(layer, p)), null).mul(config.scale());
    }

    /** {@code W + s · B A} for projection {@code p} of layer {@code layer} ({@code W} itself when not adapted). */
    public Tensor merged(Tensor w, int layer, String p) {
        Tensor aw = a.get(key(layer, p));
        return aw == null ? w : w.add(b.get(key(layer, p)).matmul(aw).mul(config.scale()).to(w.dtype()));
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

    @Override
    public void close() {
        a.values().forEach(Tensor::close);
        b.values().forEach(Tensor::close);
    }
}
