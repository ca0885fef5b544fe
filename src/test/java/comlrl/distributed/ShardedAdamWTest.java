package comlrl.distributed;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class ShardedAdamWTest {
    /**
     * ZeRO holders, by hand: elements 4, 1, 1, 1, 3 over 2 processes, each parameter in order to the
     * process holding the fewest so far (rank 0 on a tie): 4 → 0 (0 vs 0), 1 → 1 (4 vs 0), 1 → 1
     * (4 vs 1), 1 → 1 (4 vs 2), 3 → 1 (4 vs 3): loads 4 and 6.
     */
    @Test
    void holdersBalanceTheElementsInOrder() {
        try (Scope s = Scope.open()) {
            List<Tensor> params = Arrays.stream(new int[] {4, 1, 1, 1, 3})
                    .mapToObj(n -> Tensor.zerosOf(DType.F32, Device.CPU, n)).toList();
            assertThat(ShardedAdamW.holders(params, 2)).containsExactly(0, 1, 1, 1, 1);
            assertThat(ShardedAdamW.holders(params, 1)).containsExactly(0, 0, 0, 0, 0);
            assertThat(ShardedAdamW.holders(params, 3)).containsExactly(0, 1, 2, 1, 2);
        }
    }
}
