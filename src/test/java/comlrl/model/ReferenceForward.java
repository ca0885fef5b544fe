package comlrl.model;

import comlrl.tensor.Tensor;
import java.util.Map;

/**
 * An independent, deliberately plain forward pass in double precision over Java arrays, written
 * from the Hugging Face modeling code (not from {@link DecoderLm}), for parity tests.
 */
final class ReferenceForward {
    private final ModelConfig c;
    private final Map<String, Tensor> w;

    ReferenceForward(ModelConfig c, Map<String, Tensor> weights) {
        this.c = c;
        this.w = weights;
    }

    private double[] get(String name) {
        Tensor t = w.get(name);
        return t == null ? null : t.toDoubleArray();
    }

    /** Logits [S][V] for one unpadded sequence at positions 0..S-1. */
    double[][] logits(long[] ids) {
        double[] head = c.tieWordEmbeddings() ? get("model.embed_tokens.weight") : get("lm_head.weight");
        return lin(hidden(ids), head, null, c.vocabSize());
    }

    /** The final-normed hidden states [S][E] of one unpadded sequence at positions 0..S-1. */
    double[][] hidden(long[] ids) {
        int s = ids.length;
        int e = c.hiddenSize();
        int h = c.numHeads();
        int kvh = c.numKvHeads();
        int d = c.headDim();
        double[] emb = get("model.embed_tokens.weight");
        double[][] x = new double[s][e];
        for (int t = 0; t < s; t++) {
            System.arraycopy(emb, (int) ids[t] * e, x[t], 0, e);
        }
        float[] invF = c.ropeScaling().inverseFrequencies(d, c.ropeTheta());
        for (int l = 0; l < c.numLayers(); l++) {
            String p = "model.layers." + l + ".";
            double[][] hn = norm(x, get(p + "input_layernorm.weight"));
            double[][] q = lin(hn, get(p + "self_attn.q_proj.weight"), get(p + "self_attn.q_proj.bias"), h * d);
            double[][] k = lin(hn, get(p + "self_attn.k_proj.weight"), get(p + "self_attn.k_proj.bias"), kvh * d);
            double[][] v = lin(hn, get(p + "self_attn.v_proj.weight"), get(p + "self_attn.v_proj.bias"), kvh * d);
            double[] qn = get(p + "self_attn.q_norm.weight");
            double[] kn = get(p + "self_attn.k_norm.weight");
            for (int t = 0; t < s; t++) {
                for (int hh = 0; hh < h; hh++) {
                    if (qn != null) {
                        normSlice(q[t], hh * d, d, qn);
                    }
                    rope(q[t], hh * d, d, t, invF);
                }
                for (int hh = 0; hh < kvh; hh++) {
                    if (kn != null) {
                        normSlice(k[t], hh * d, d, kn);
                    }
                    rope(k[t], hh * d, d, t, invF);
                }
            }
            double[][] attn = new double[s][h * d];
            int group = h / kvh;
            for (int hh = 0; hh < h; hh++) {
                int kv = hh / group;
                for (int t = 0; t < s; t++) {
                    double[] sc = new double[t + 1];
                    double max = Double.NEGATIVE_INFINITY;
                    for (int j = 0; j <= t; j++) {
                        double dot = 0;
                        for (int i = 0; i < d; i++) {
                            dot += q[t][hh * d + i] * k[j][kv * d + i];
                        }
                        sc[j] = dot / Math.sqrt(d);
                        max = Math.max(max, sc[j]);
                    }
                    double z = 0;
                    for (int j = 0; j <= t; j++) {
                        sc[j] = Math.exp(sc[j] - max);
                        z += sc[j];
                    }
                    for (int j = 0; j <= t; j++) {
                        for (int i = 0; i < d; i++) {
                            attn[t][hh * d + i] += sc[j] / z * v[j][kv * d + i];
                        }
                    }
                }
            }
            double[][] o = lin(attn, get(p + "self_attn.o_proj.weight"), get(p + "self_attn.o_proj.bias"), e);
            add(x, o);
            double[][] hm = norm(x, get(p + "post_attention_layernorm.weight"));
            int inter = c.intermediateSize();
            double[][] gate = lin(hm, get(p + "mlp.gate_proj.weight"), null, inter);
            double[][] up = lin(hm, get(p + "mlp.up_proj.weight"), null, inter);
            for (int t = 0; t < s; t++) {
                for (int i = 0; i < inter; i++) {
                    double g = gate[t][i];
                    gate[t][i] = g / (1 + Math.exp(-g)) * up[t][i];
                }
            }
            add(x, lin(gate, get(p + "mlp.down_proj.weight"), null, e));
        }
        return norm(x, get("model.norm.weight"));
    }

    private static void add(double[][] x, double[][] y) {
        for (int t = 0; t < x.length; t++) {
            for (int i = 0; i < x[t].length; i++) {
                x[t][i] += y[t][i];
            }
        }
    }

    private double[][] norm(double[][] x, double[] weight) {
        double[][] out = new double[x.length][];
        for (int t = 0; t < x.length; t++) {
            out[t] = x[t].clone();
            normSlice(out[t], 0, out[t].length, weight);
        }
        return out;
    }

    private void normSlice(double[] x, int off, int len, double[] weight) {
        double ms = 0;
        for (int i = 0; i < len; i++) {
            ms += x[off + i] * x[off + i];
        }
        double r = 1.0 / Math.sqrt(ms / len + c.rmsNormEps());
        for (int i = 0; i < len; i++) {
            x[off + i] = x[off + i] * r * weight[i];
        }
    }

    private static void rope(double[] x, int off, int d, int pos, float[] invF) {
        int half = d / 2;
        double[] out = new double[d];
        for (int i = 0; i < d; i++) {
            double angle = pos * (double) invF[i % half];
            double rotated = i < half ? -x[off + i + half] : x[off + i - half];
            out[i] = x[off + i] * Math.cos(angle) + rotated * Math.sin(angle);
        }
        System.arraycopy(out, 0, x, off, d);
    }

    private static double[][] lin(double[][] x, double[] weight, double[] bias, int outDim) {
        int in = x[0].length;
        double[][] y = new double[x.length][outDim];
        for (int t = 0; t < x.length; t++) {
            for (int o = 0; o < outDim; o++) {
                double sum = bias == null ? 0 : bias[o];
                for (int i = 0; i < in; i++) {
                    sum += weight[o * in + i] * x[t][i];
                }
                y[t][o] = sum;
            }
        }
        return y;
    }
}
