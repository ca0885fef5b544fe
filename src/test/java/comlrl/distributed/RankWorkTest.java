package comlrl.distributed;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.distributed.RankWork;
import comlrl.tensor.Device;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class RankWorkTest {
    @Test
    void oneProcessKeepsItsValuesAndAWholeOptimizer() {
        RankWork one = RankWork.single(2);
        assertThat(one.fromOwners(Arrays.asList(new long[] {1}, new long[] {2}), comlrl.distributed.Codecs.LONGS))
                .containsExactly(new long[] {1}, new long[] {2});
        try (Scope s = Scope.open();
                comlrl.tensor.AdamW opt = one.adamW(List.of(Tensor.zerosOf(comlrl.tensor.DType.F32, Device.CPU, 2)
                        .requiresGrad(true)), 0.1, 0.0)) {
            assertThat(opt.sharded()).isFalse();
            assertThat(one.wholeState(opt)).containsKeys("exp_avg.0", "exp_avg_sq.0", "step");
        }
    }
}
