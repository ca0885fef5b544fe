package comlrl.trainers.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.tensor.Device;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class RankWorkTest {
    /**
     * ZeRO holders, by hand: elements 4, 1, 1, 1, 3 over 2 processes, each parameter in order to the
     * process holding the fewest so far (rank 0 on a tie): 4 → 0 (0 vs 0), 1 → 1 (4 vs 0), 1 → 1
     * (4 vs 1), 1 → 1 (4 vs 2), 3 → 1 (4 vs 3): loads 4 and 6.
     */
    @Test
    void holdersBalanceTheElementsInOrder() {
        try (Scope s = Scope.open()) {
            List<Tensor> params = Arrays.stream(new int[] {4, 1, 1, 1, 3})
                    .mapToObj(n -> Tensor.zerosOf(comlrl.tensor.DType.F32, Device.CPU, n)).toList();
            assertThat(RankWork.holders(params, 2)).containsExactly(0, 1, 1, 1, 1);
            assertThat(RankWork.holders(params, 1)).containsExactly(0, 0, 0, 0, 0);
            assertThat(RankWork.holders(params, 3)).containsExactly(0, 1, 2, 1, 2);
        }
    }

    /**
     * Bytes another rank did not write as this one reads them (the ranks exchanging different things)
     * fail naming the source, instead of allocating an array of whatever length the first four bytes
     * make (2^31 - 1 longs here: an OutOfMemoryError) or reading past the end.
     */
    @Test
    void bytesThatDoNotReadAsExpectedFailNamingTheirSourceInsteadOfAllocating() {
        byte[] huge = {0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff, 1, 2};
        assertThatThrownBy(() -> RankWork.decode(huge, "the value rank 1 sent", RankWork.LONGS::read))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("could not read the value rank 1 sent (6 bytes): IOException: a length of 2147483647 where 2 "
                        + "bytes remain; the ranks exchanged different values at this point: do all processes run the "
                        + "same code and config?");
        byte[] list = RankWork.encode(out -> RankWork.listOf(RankWork.STRING).write(out, List.of("a", "bc")));
        assertThat(RankWork.decode(list, "x", RankWork.listOf(RankWork.STRING)::read)).containsExactly("a", "bc");
        byte[] cut = Arrays.copyOf(list, list.length - 1); // 4 (count) + 4 + 1 ("a") + 4 + 1 (half of "bc") bytes
        assertThatThrownBy(() -> RankWork.decode(cut, "the value rank 0 sent", RankWork.listOf(RankWork.STRING)::read))
                .hasMessageStartingWith("could not read the value rank 0 sent (14 bytes): IOException: a length of 2 "
                        + "where 1 bytes remain;");
        assertThatThrownBy(() -> RankWork.decode(new byte[] {1}, "rank 0's result", RankWork.COMPLETION::read))
                .hasMessageStartingWith("could not read rank 0's result (1 bytes): java.io.EOFException (no message, thrown at ");
    }

    @Test
    void oneProcessKeepsItsValuesAndAWholeOptimizer() {
        RankWork one = RankWork.single(2);
        assertThat(one.fromOwners(Arrays.asList(new long[] {1}, new long[] {2}), RankWork.LONGS))
                .containsExactly(new long[] {1}, new long[] {2});
        try (Scope s = Scope.open();
                comlrl.tensor.AdamW opt = one.adamW(List.of(Tensor.zerosOf(comlrl.tensor.DType.F32, Device.CPU, 2)
                        .requiresGrad(true)), 0.1, 0.0)) {
            assertThat(opt.sharded()).isFalse();
            assertThat(one.wholeState(opt)).containsKeys("exp_avg.0", "exp_avg_sq.0", "step");
        }
    }
}
