package comlrl.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.GradMode;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A LoRA adapter view over a shared decoder: zero-init identity, equality with the merged model, gradients to A and B only. */
class LoraDecoderTest {
    static final ModelConfig MODEL = LoraAdapterTest.MODEL;
    static final long[] IDS = {1, 5, 9, 13, 17, 21};

    static Tensor logits(DecoderLm m) {
        Tensor ids = Tensor.ofLongs(IDS, Device.CPU, 1, IDS.length);
        Tensor pos = Tensor.ofLongs(new long[] {0, 1, 2, 3, 4, 5}, Device.CPU, 1, IDS.length);
        return m.forward(ids, pos, null, null, 0).logits();
    }

    @Test
    void aFreshAdapterLeavesTheLogitsOfTheBaseAndATrainedOneEqualsTheMergedModel() {
        LoraConfig c = new LoraConfig(4, 8, 0, List.of("all-linear"), false);
        try (DecoderLm base = DecoderLm.random(MODEL, DType.F32, Device.CPU, 3);
                LoraAdapter adapter = LoraAdapter.init(MODEL, c, DType.F32, Device.CPU, 4);
                DecoderLm agent = base.withAdapter(adapter); Scope s = Scope.open(); GradMode g = GradMode.noGrad();
                Rng rng = new Rng(8)) {
            assertThat(logits(agent).sub(logits(base)).abs().max().item()).isEqualTo(0.0);
            List<Tensor> params = adapter.parameters();
            for (int k = 1; k < params.size(); k += 2) { // every B
                params.get(k).copy_(Tensor.randn(rng, 0.05, DType.F32, Device.CPU, params.get(k).shape()));
            }
            Tensor adapted = logits(agent);
            assertThat(adapted.sub(logits(base)).abs().max().item()).isGreaterThan(1e-4);
            try (DecoderLm folded = agent.mergeAdapter()) {
                assertThat(adapted.sub(logits(folded)).abs().max().item()).isLessThan(1e-4);
                assertThat(folded.adapter()).isNull(); // a standalone model: saves as a full Hugging Face model
            }
            assertThatThrownBy(base::mergeAdapter).hasMessageContaining("no adapter to merge");
        }
    }

    @Test
    void onlyTheAdapterTrainsAndTheViewNeitherSavesNorClosesTheBase(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
        LoraConfig c = new LoraConfig(2, 4, 0, List.of("q_proj", "v_proj"), false);
        try (DecoderLm base = DecoderLm.random(MODEL, DType.F32, Device.CPU, 3);
                LoraAdapter adapter = LoraAdapter.init(MODEL, c, DType.F32, Device.CPU, 4)) {
            base.parameters().forEach(p -> p.requiresGrad(false));
            try (DecoderLm agent = base.withAdapter(adapter); Scope s = Scope.open()) {
                assertThat(agent.parameters()).isEqualTo(adapter.parameters());
                logits(agent).mul(logits(agent)).sum().backward();
                assertThat(adapter.parameters()).allMatch(p -> p.grad() != null);
                assertThat(base.parameters()).allMatch(p -> p.grad() == null);
                assertThatThrownBy(() -> agent.save(dir.resolve("x"), 1L << 30)).isInstanceOf(UnsupportedOperationException.class);
                assertThatThrownBy(() -> agent.withAdapter(adapter)).hasMessageContaining("already an adapter view");
            }
            try (Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
                assertThat(logits(base).abs().max().item()).isGreaterThan(0.0); // the base is still open
            }
        }
    }
}
