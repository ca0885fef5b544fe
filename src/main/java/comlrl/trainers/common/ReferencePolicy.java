package comlrl.trainers.common;

import comlrl.generation.Completion;
import comlrl.generation.Scorer;
import comlrl.model.DecoderLm;
import comlrl.rl.ReferenceKl;
import comlrl.tensor.Device;
import comlrl.tensor.GradMode;
import comlrl.tensor.Scope;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * Frozen copies of the actors at the start of training, for reference-KL shaping (reference §2.6):
 * per completion {@code KL = Σ_t (e^{d_t} − d_t − 1)}, {@code d_t = log p_ref(y_t) − log p_pol(y_t)}
 * over the tokens before the first pad id ({@link ReferenceKl#responseLength}), computed without
 * gradients, {@code log p_pol} as sampling recorded it; trainers shape rewards with {@code r' = r − β·KL}.
 */
public final class ReferencePolicy implements AutoCloseable {
    private final List<DecoderLm> references = new ArrayList<>();
    private final List<Boolean> owned = new ArrayList<>();

    /**
     * Frozen copies of {@code policies}, each on its device. A LoRA agent whose adapter is still
     * fresh (B = 0) on its device needs no copy: its frozen base is the reference.
     */
    public ReferencePolicy(List<DecoderLm> policies, List<Device> devices) {
        try {
            for (int i = 0; i < policies.size(); i++) {
                DecoderLm p = policies.get(i);
                if (p == null) { // an agent another process holds (ddp_split: agents)
                    references.add(null);
                    owned.add(false);
                    continue;
                }
                boolean free = p.adapter() != null && p.adapter().isIdentity() && p.device().equals(devices.get(i));
                references.add(free ? p.base() : p.frozenCopy(devices.get(i)));
                owned.add(!free);
            }
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    public DecoderLm reference(int agent) {
        return references.get(agent);
    }

    /** The KL of each of agent {@code agent}'s completions of {@code promptIds} ({@link #kls(DecoderLm, long[], List, long)}). */
    public double[] kls(int agent, long[] promptIds, List<Completion> completions, long pad) {
        return kls(references.get(agent), promptIds, completions, pad);
    }

    /**
     * The k3 KL of each completion of {@code promptIds} between the policy that sampled it and
     * {@code reference}. The policy's side is what sampling recorded, {@link Completion#logprobs()}:
     * {@code log π(y_t) = z_{y_t} − logsumexp(z)} on the raw logits at temperature 1, before any
     * logits processing or top-k/top-p truncation, the same quantity a scoring pass computes (to
     * float32 rounding: the decode step's KV cache against one full forward). Only the reference runs.
     */
    public static double[] kls(DecoderLm reference, long[] promptIds, List<Completion> completions, long pad) {
        double[] kls = new double[completions.size()];
        if (kls.length == 0) {
            return kls;
        }
        List<long[]> ys = completions.stream().map(Completion::tokenIds).toList();
        try (Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
            List<long[]> prompts = Collections.nCopies(ys.size(), promptIds);
            double[] ref = Scorer.score(reference, prompts, ys, pad).tokenLogprobs().toDoubleArray();
            int t = ref.length / ys.size();
            for (int k = 0; k < kls.length; k++) {
                long[] y = ys.get(k);
                int first = k * t + t - y.length; // completion tokens are right-aligned in each row
                int window = ReferenceKl.responseLength(y, pad);
                kls[k] = ReferenceKl.sequenceKl(Arrays.copyOf(completions.get(k).logprobs(), window),
                        Arrays.copyOfRange(ref, first, first + window));
            }
        }
        return kls;
    }

    @Override
    public void close() {
        for (int i = 0; i < references.size(); i++) {
            if (owned.get(i)) {
                references.get(i).close();
            }
        }
    }
}
