package comlrl.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** A bfloat16 tensor's rows read and written in place, as pairs of values. */
class HostRowsTest {
    /** The pairs of a contiguous bf16 tensor, from its raw bytes. */
    private static int[] pairs(Tensor t) {
        ByteBuffer b = ByteBuffer.wrap(t.contiguous().toBytes()).order(ByteOrder.LITTLE_ENDIAN);
        int[] out = new int[b.remaining() / 4];
        b.asIntBuffer().get(out);
        return out;
    }

    /**
     * A column range of a stacked product (the q view of q, k, v): rows a stride apart, read with
     * what lies between them; writing back the span with the rows changed changes the view and
     * nothing beside it.
     */
    @Test
    void aColumnViewReadsAndWritesItsOwnValuesOnly() {
        try (Scope s = Scope.open(); Rng rng = new Rng(1)) {
            Tensor stacked = Tensor.randn(rng, 1, DType.BF16, Device.CPU, 3, 1, 20);
            Tensor view = stacked.narrow(2, 6, 8);
            HostRows rows = HostRows.of(view);
            assertThat(rows).isNotNull();
            assertThat(rows.rows()).isEqualTo(3);
            assertThat(rows.cols()).isEqualTo(8);
            assertThat(rows.rowStride()).isEqualTo(20);
            assertThat(rows.span()).isEqualTo((2 * 20 + 8) / 2);
            int[] span = new int[rows.span()];
            rows.read(span);
            int[] own = pairs(view);
            for (int i = 0; i < 3; i++) {
                for (int j = 0; j < 4; j++) {
                    assertThat(span[i * 10 + j]).as("row %d, pair %d", i, j).isEqualTo(own[i * 4 + j]);
                }
            }

            Tensor before = stacked.cloneTensor();
            Tensor other = Tensor.randn(rng, 1, DType.BF16, Device.CPU, 3, 1, 8);
            int[] put = pairs(other);
            for (int i = 0; i < 3; i++) {
                System.arraycopy(put, i * 4, span, i * 10, 4);
            }
            rows.write(span);
            assertThat(view.bitEquals(other)).isTrue();
            assertThat(stacked.narrow(2, 0, 6).bitEquals(before.narrow(2, 0, 6))).isTrue();
            assertThat(stacked.narrow(2, 14, 6).bitEquals(before.narrow(2, 14, 6))).isTrue();

            // a contiguous tensor's leading dimensions flatten into rows
            Tensor whole = Tensor.randn(rng, 1, DType.BF16, Device.CPU, 2, 3, 4);
            HostRows all = HostRows.of(whole);
            assertThat(all.rows()).isEqualTo(6);
            assertThat(all.span()).isEqualTo(12);
            int[] back = new int[12];
            all.read(back);
            assertThat(back).containsExactly(pairs(whole));
        }
    }

    /** What cannot be seen as pairs in evenly strided rows is refused, not misread. */
    @Test
    void tensorsThatAreNotEvenlyStridedBf16RowsAreRefused() {
        try (Scope s = Scope.open(); Rng rng = new Rng(2)) {
            Tensor t = Tensor.randn(rng, 1, DType.BF16, Device.CPU, 4, 6, 8);
            assertThat(HostRows.of(t.to(DType.F32))).isNull();
            assertThat(HostRows.of(t.transpose(1, 2))).isNull();          // last dimension strided
            assertThat(HostRows.of(t.narrow(1, 0, 3))).isNull();          // rows 8 apart, then 48: not one stride
            assertThat(HostRows.of(t.narrow(2, 0, 3))).isNull();          // odd row length
            assertThat(HostRows.of(t.narrow(2, 1, 4).narrow(0, 0, 1).narrow(1, 0, 1))).isNotNull(); // one row
            assertThat(HostRows.of(t.narrow(0, 0, 1))).isNotNull();
        }
    }
}
