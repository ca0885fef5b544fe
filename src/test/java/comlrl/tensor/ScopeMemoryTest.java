package comlrl.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import org.bytedeco.javacpp.Pointer;
import org.junit.jupiter.api.Test;

/** {@link Scope#inner}: the body's intermediates go when it returns, its result with the enclosing scope. */
class ScopeMemoryTest {
    @Test
    void innerFreesTheBodysIntermediatesAndKeepsItsResultForTheEnclosingScope() {
        long big = 64L << 20; // above glibc's largest mmap threshold: freed memory leaves the process at once
        try (Scope outer = Scope.open()) {
            long before = Pointer.physicalBytes();
            Tensor result = Scope.inner(() -> {
                Tensor intermediate = Tensor.zerosOf(DType.U8, Device.CPU, big).add(1); // two touched 64 MiB blocks
                return intermediate.sum(); // 64·2^20 ones
            });
            long held = Pointer.physicalBytes() - before;
            assertThat(held).as("resident growth after inner returned").isLessThan(big / 2);
            assertThat(result.item()).isEqualTo((double) big);
        }
        // a result that refers into a tensor of the body (a gradient) is a handle of its own
        try (Scope outer = Scope.open()) {
            Tensor grad = Scope.inner(() -> {
                Tensor x = Tensor.ofDoubles(new double[] {1, 2, 3}, Device.CPU).requiresGrad(true);
                x.mul(x).sum().backward();
                return x.grad(); // ∂Σx²/∂x = 2x
            });
            assertThat(grad.toDoubleArray()).containsExactly(2, 4, 6);
        }
    }
}
