package comlrl.trainers.reinforce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import comlrl.generation.CausalLm;
import comlrl.generation.Scorer;
import comlrl.tensor.GradMode;
import comlrl.tensor.Scope;
import comlrl.trainers.TinyAgents;
import comlrl.trainers.common.ReferencePolicy;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reference KL of a group of completions of unequal lengths, scored as one padded batch, against
 * a hand computation over each completion alone:
 * <pre>
 *   KL_k = Σ_{t &lt; n_k} (e^{d_t} − d_t − 1),   d_t = log p_ref(y_t) − log p_pol(y_t)
 *   n_k  = position of the first pad token in y_k (a final EOS that is the pad token is not counted)
 * </pre>
 */
class ReferenceKlWindowTest {
    @TempDir
    static Path models;
    static CausalLm policy;
    static CausalLm reference;

    @BeforeAll
    static void load() {
        policy = TinyAgents.load(TinyAgents.create(models.resolve("policy"), 1));
        reference = TinyAgents.load(TinyAgents.create(models.resolve("reference"), 2));
    }

    /** Σ_t k3 over the first {@code window} tokens of {@code y}, each model scoring y alone (no padding). */
    private static double byHand(long[] prompt, long[] y, int window) {
        try (Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
            double[] pol = Scorer.score(policy.model(), List.of(prompt), List.of(y), 0).tokenLogprobs().toDoubleArray();
            double[] ref = Scorer.score(reference.model(), List.of(prompt), List.of(y), 0).tokenLogprobs().toDoubleArray();
            double kl = 0;
            for (int t = 0; t < window; t++) {
                double d = ref[t] - pol[t];
                kl += Math.exp(d) - d - 1;
            }
            return kl;
        }
    }

    @Test
    void klCoversTheTokensBeforeThePadTokenOfEachCompletion() {
        long eos = policy.padId(); // the tiny tokenizer's pad is its eos, as in most instruct models
        long[] prompt = policy.encode("Describe the sea.");
        List<long[]> group = List.of(new long[] {40, 41, 42, eos}, new long[] {43, eos}, new long[] {44, 45, 46, 47, 48},
                new long[] {eos});
        double[] kls = ReferencePolicy.kls(policy.model(), reference.model(), prompt, group, eos);
        assertThat(kls[0]).isCloseTo(byHand(prompt, group.get(0), 3), within(1e-6));
        assertThat(kls[1]).isCloseTo(byHand(prompt, group.get(1), 1), within(1e-6));
        assertThat(kls[2]).as("no EOS: every token").isCloseTo(byHand(prompt, group.get(2), 5), within(1e-6));
        assertThat(kls[3]).as("an empty answer").isEqualTo(0.0);
        assertThat(kls[0]).as("the EOS term would change the value").isNotCloseTo(byHand(prompt, group.get(0), 4),
                within(1e-6));
        // with a pad token that is not the eos, the EOS is part of the response
        double[] distinctPad = ReferencePolicy.kls(policy.model(), reference.model(), prompt, group, 7);
        assertThat(distinctPad[0]).isCloseTo(byHand(prompt, group.get(0), 4), within(1e-6));
        assertThat(distinctPad[3]).isCloseTo(byHand(prompt, group.get(3), 1), within(1e-6));
    }
}
