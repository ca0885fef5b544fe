package comlrl.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import comlrl.generation.CausalLm;
import comlrl.generation.Completion;
import comlrl.generation.SamplingConfig;
import comlrl.generation.Scorer;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Engine;
import comlrl.tensor.GradMode;
import comlrl.tensor.Scope;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The engine on a CUDA device gives what it gives on the CPU: the same greedy continuation and
 * log-probabilities within float32 noise. Needs the {@code -Pcuda} build and a GPU; run with
 * {@code mvn -Pcuda -B test -Dgroups=gpu -Dtest.excludedGroups=none}.
 */
@Tag("gpu")
class CudaParityTest {
    @Test
    void greedyDecodingAndScoringMatchTheCpu() {
        assumeTrue(Engine.cudaAvailable(), "no CUDA device");
        Device cuda = Device.parse("cuda:0");
        try (CausalLm cpu = CausalLm.load("builtin:tiny", DType.F32, Device.CPU);
                CausalLm gpu = CausalLm.load("builtin:tiny", DType.F32, cuda)) {
            long[] prompt = cpu.encode("Describe a city in the clouds.");
            Completion a = cpu.generator().generate(List.of(prompt), SamplingConfig.greedy(16), 0).get(0).get(0);
            Completion b = gpu.generator().generate(List.of(prompt), SamplingConfig.greedy(16), 0).get(0).get(0);
            assertThat(b.tokenIds()).isEqualTo(a.tokenIds());
            for (int t = 0; t < a.length(); t++) {
                assertThat(b.logprobs()[t]).isCloseTo(a.logprobs()[t], org.assertj.core.data.Offset.offset(1e-4));
            }
            try (Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
                double onCpu = Scorer.score(cpu.model(), List.of(prompt), List.of(a.tokenIds()), cpu.padId())
                        .sequenceLogprobs().item();
                double onGpu = Scorer.score(gpu.model(), List.of(prompt), List.of(a.tokenIds()), gpu.padId())
                        .sequenceLogprobs().item();
                assertThat(onGpu).isCloseTo(onCpu, org.assertj.core.data.Offset.offset(1e-3));
            }
        }
    }
}
