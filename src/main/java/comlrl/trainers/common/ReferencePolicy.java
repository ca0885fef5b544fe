package comlrl.trainers.common;

import comlrl.distributed.HeldAgents;
import comlrl.generation.Scorer;
import comlrl.model.DecoderLm;
import comlrl.rl.ReferenceKl;
import comlrl.tensor.Device;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Frozen copies of the actors at the start of training, for reference-KL shaping (reference §2.6):
 * per completion {@code KL = Σ_t (e^{d_t} − d_t − 1)}, {@code d_t = log p_ref(y_t) − log p_pol(y_t)}
 * over the tokens before the first pad id ({@link ReferenceKl#responseLength}), computed without
 * gradients; trainers shape rewards with {@code r' = r − β·KL}.
 *
 * <p>The policy is scored again although sampling recorded {@code log π(y_t)}: the recorded values
 * differ in float32 rounding with how sampling was batched (team, per agent, one process's rows), and
 * scoring here keeps the KL, and so training, independent of that placement, to the bit.
 */
public final class ReferencePolicy implements AutoCloseable {
    private final Map<Integer, DecoderLm> references = new HashMap<>(); // of the agents this process holds
    private final List<DecoderLm> copies = new ArrayList<>(); // made here, closed here

    /**
     * Frozen copies of {@code policies}, agent i's on {@code devices.get(i)}. A LoRA agent whose
     * adapter is still fresh (B = 0) on its device needs no copy: its frozen base is the reference.
     */
    public ReferencePolicy(HeldAgents<DecoderLm> policies, List<Device> devices) {
        try {
            for (int i : policies.indices()) {
                DecoderLm p = policies.get(i);
                boolean free = p.adapter() != null && p.adapter().isIdentity() && p.device().equals(devices.get(i));
                DecoderLm ref = free ? p.base() : p.frozenCopy(devices.get(i));
                references.put(i, ref);
                if (!free) {
                    copies.add(ref);
                }
            }
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    public DecoderLm reference(int agent) {
        return references.get(agent);
    }

    /** The k3 KL of each completion of {@code promptIds} between {@code policy} and {@code reference}. */
    public static double[] kls(DecoderLm policy, DecoderLm reference, long[] promptIds, List<long[]> completions,
            long pad) {
        double[] kls = new double[completions.size()];
        // each model scores the prompt once for all its completions (Scorer's shared prompts)
        List<long[]> prompts = Collections.nCopies(completions.size(), promptIds);
        float[][] pol = Scorer.tokenLogprobs(policy, prompts, completions, pad);
        float[][] ref = Scorer.tokenLogprobs(reference, prompts, completions, pad);
        for (int k = 0; k < kls.length; k++) {
            int window = ReferenceKl.responseLength(completions.get(k), pad);
            kls[k] = ReferenceKl.sequenceKl(doubles(pol[k], window), doubles(ref[k], window));
        }
        return kls;
    }

    /** The first {@code n} values of {@code values}, as doubles. */
    private static double[] doubles(float[] values, int n) {
        double[] out = new double[n];
        for (int i = 0; i < n; i++) {
            out[i] = values[i];
        }
        return out;
    }

    @Override
    public void close() {
        copies.forEach(DecoderLm::close);
    }
}
