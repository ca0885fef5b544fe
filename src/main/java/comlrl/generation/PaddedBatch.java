package comlrl.generation;

import comlrl.tensor.Device;
import comlrl.tensor.Tensor;
import java.util.List;

/**
 * Sequences of different lengths left-padded into one batch, with Hugging Face's attention mask
 * and position ids ({@code position = cumsum(mask) - 1}, padding positions set to 1).
 *
 * @param ids int64 {@code [B, S]}
 * @param mask int64 {@code [B, S]}, 1 for real tokens; null when no row is padded
 * @param positions int64 {@code [B, S]}
 * @param lengths real length of each row
 */
public record PaddedBatch(Tensor ids, Tensor mask, Tensor positions, int[] lengths) {

    /** Left-pads {@code rows} with {@code padId} to the longest row. */
    public static PaddedBatch leftPadded(List<long[]> rows, long padId, Device device) {
        int b = rows.size();
        int s = 0;
        for (long[] r : rows) {
            if (r.length == 0) {
                throw new IllegalArgumentException("Empty sequence in batch: every prompt needs at least one token");
            }
            s = Math.max(s, r.length);
        }
        long[] ids = new long[b * s];
        long[] mask = new long[b * s];
        long[] pos = new long[b * s];
        int[] lengths = new int[b];
        boolean padded = false;
        for (int i = 0; i < b; i++) {
            long[] r = rows.get(i);
            int offset = s - r.length;
            padded |= offset > 0;
            lengths[i] = r.length;
            for (int j = 0; j < s; j++) {
                int k = i * s + j;
                if (j < offset) {
                    ids[k] = padId;
                    pos[k] = 1;
                } else {
                    ids[k] = r[j - offset];
                    mask[k] = 1;
                    pos[k] = j - offset;
                }
            }
        }
        return new PaddedBatch(Tensor.ofLongs(ids, device, b, s), padded ? Tensor.ofLongs(mask, device, b, s) : null,
                Tensor.ofLongs(pos, device, b, s), lengths);
    }

    public long batchSize() {
        return ids.size(0);
    }

    public long length() {
        return ids.size(1);
    }
}
