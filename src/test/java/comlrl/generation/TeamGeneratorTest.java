package comlrl.generation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import comlrl.model.DecoderLm;
import comlrl.model.LoraAdapter;
import comlrl.model.LoraConfig;
import comlrl.model.ModelConfig;
import comlrl.model.TinyConfigs;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.GradMode;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A team's one batched generation on a shared base samples what each agent's own generation samples.
 *
 * <p>The two differ only in float rounding (the team batch is padded to the longest prompt of all
 * agents and runs the adapters as one batched product): logprobs within the bound derived in
 * {@code GeneratorTest#batchedGroupEqualsSequencesGeneratedOneByOne} (measured: 1–2 ulps), tokens
 * exactly, because every one of the 77 draws compared (9 sequences, some ended early by EOS) lies
 * at least 7.2e-5 of the CDF from a token boundary (measured with the adapters of {@link #randomizeB},
 * which are the same on every run), against ~1e-9 of rounding (measured on AVX2 and AVX-512 kernels).
 */
class TeamGeneratorTest {
    private static final long EOS = 2;

    @Test
    void theTeamsBatchedRolloutEqualsEachAgentsRolloutForTheSameSeeds() {
        ModelConfig c = TinyConfigs.of("qwen2", false, "float32");
        LoraConfig lora = new LoraConfig(4, 16, 0, List.of("all-linear"), false);
        try (DecoderLm base = DecoderLm.random(c, DType.F32, Device.CPU, 11);
                LoraAdapter a0 = LoraAdapter.init(c, lora, DType.F32, Device.CPU, 1);
                LoraAdapter a1 = LoraAdapter.init(c, lora, DType.F32, Device.CPU, 2);
                LoraAdapter a2 = LoraAdapter.init(c, lora, DType.F32, Device.CPU, 3)) {
            randomizeB(a0, a1, a2); // trained adapters: each agent samples differently
            List<LoraAdapter> adapters = List.of(a0, a1, a2);
            List<List<long[]>> prompts = List.of(List.of(new long[] {5, 6, 7, 8, 9}),
                    List.of(new long[] {10, 11}), List.of(new long[] {3, 4, 12}));
            long[] seeds = {7, 8, 9};
            SamplingConfig cfg = SamplingConfig.sample(1.0, null, null, 10, 3);
            TeamGenerator team = new TeamGenerator(base, Set.of(EOS), EOS, Arrays::toString);
            List<List<List<Completion>>> together = team.generate(adapters, prompts, cfg, seeds);
            assertThat(team.lastStats().sequences()).isEqualTo(9); // one batch of 3 agents x 3 samples
            for (int a = 0; a < 3; a++) {
                try (DecoderLm view = base.withAdapter(adapters.get(a))) {
                    List<Completion> alone = new Generator(view, Set.of(EOS), EOS, Arrays::toString)
                            .generate(prompts.get(a), cfg, seeds[a]).get(0);
                    List<Completion> mine = together.get(a).get(0);
                    for (int j = 0; j < 3; j++) {
                        assertThat(mine.get(j).tokenIds()).as("agent %d sample %d", a, j)
                                .containsExactly(alone.get(j).tokenIds());
                        for (int t = 0; t < alone.get(j).length(); t++) {
                            assertThat(mine.get(j).logprobs()[t]).isCloseTo(alone.get(j).logprobs()[t], within(1e-4));
                        }
                    }
                }
            }
            // the adapters matter: agents given the same prompt and seed sample differently
            List<List<List<Completion>>> same = team.generate(adapters, List.of(prompts.get(0), prompts.get(0),
                    prompts.get(0)), cfg, new long[] {7, 7, 7});
            assertThat(Arrays.toString(same.get(0).get(0).get(0).logprobs()))
                    .isNotEqualTo(Arrays.toString(same.get(1).get(0).get(0).logprobs()));
        }
    }

    /**
     * Gives each adapter random B matrices (N(0, 0.2²)), as if trained. Adapter i of the call draws from
     * seed {@code 1000 + i}, so every run (and every machine) sees the same weights.
     */
    static void randomizeB(LoraAdapter... adapters) {
        for (int i = 0; i < adapters.length; i++) {
            LoraAdapter a = adapters[i];
            try (Scope s = Scope.open(); GradMode g = GradMode.noGrad(); Rng rng = new Rng(1000 + i)) {
                List<Tensor> p = a.parameters();
                for (int k = 1; k < p.size(); k += 2) {
                    p.get(k).copy_(Tensor.randn(rng, 0.2, DType.F32, Device.CPU, p.get(k).shape()));
                }
            }
        }
    }
}
