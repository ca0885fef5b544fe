package comlrl.model;

import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;

/**
 * Preallocated key/value cache for incremental decoding: per layer one key and one value buffer
 * of shape {@code [B, K, capacity, D]}; {@link #length()} positions are filled. Appending writes in
 * place (no concatenation per token). Owns its buffers: close it.
 *
 * <p>On the CPU a 16-bit model's cache holds float32: attention computes in float32 there
 * ({@link Tensor#attention}), so a 16-bit cache had its whole filled prefix converted at every
 * layer of every step (at the 0.5B shape, a LoRA team's 12-row decoding step with ~100 cached
 * positions spent ~2 ms in those conversions). The values are the same: a 16-bit value converts to
 * float32 exactly, so attention reads the same numbers either way. It takes twice the memory of a
 * 16-bit cache, {@code 2·L·B·K·D·capacity·4} bytes (the Qwen2.5-Coder-3B shape, 24 rows of 1,024
 * positions: 1.8 GB against 0.9 GB), and spares converting that whole cache at every decoding step.
 */
public final class KvCache implements AutoCloseable {
    private final List<Tensor> keys;   // per layer [B, K, capacity, D]
    private final List<Tensor> values; // per layer [B, K, capacity, D]
    private final int capacity;
    private int length;

    private KvCache(List<Tensor> keys, List<Tensor> values, int capacity, int length) {
        this.keys = keys;
        this.values = values;
        this.capacity = capacity;
        this.length = length;
    }

    /**
     * An empty cache for {@code batch} sequences of up to {@code capacity} positions of a model of
     * {@code dtype} on {@code device}, held in {@link #storage(DType, Device)}.
     */
    public static KvCache allocate(ModelConfig config, int batch, int capacity, DType dtype, Device device) {
        return allocateAs(config, batch, capacity, storage(dtype, device), device);
    }

    /** The dtype of a cache for a model of {@code dtype} on {@code device}: float32 for a 16-bit model on the CPU. */
    static DType storage(DType dtype, Device device) {
        return !device.isCuda() && (dtype == DType.BF16 || dtype == DType.F16) ? DType.F32 : dtype;
    }

    /** {@link #allocate} with buffers of {@code dtype} whatever the model's (tests compare the two). */
    static KvCache allocateAs(ModelConfig config, int batch, int capacity, DType dtype, Device device) {
        List<Tensor> k = new ArrayList<>();
        List<Tensor> v = new ArrayList<>();
        for (int l = 0; l < config.numLayers(); l++) {
            k.add(Tensor.zerosOf(dtype, device, batch, config.numKvHeads(), capacity, config.headDim()).keep());
            v.add(Tensor.zerosOf(dtype, device, batch, config.numKvHeads(), capacity, config.headDim()).keep());
        }
        return new KvCache(k, v, capacity, 0);
    }

    public int length() {
        return length;
    }

    public int capacity() {
        return capacity;
    }

    public long batchSize() {
        return keys.get(0).size(0);
    }

    /**
     * Writes this step's keys and values {@code [B, K, S, D]} of layer {@code layer} at positions
     * {@code [length, length + S)} and returns the filled prefix {@code [B, K, length + S, D]} of both.
     * The cache's length advances once per step through {@link #advance(int)}.
     */
    Tensor[] append(int layer, Tensor k, Tensor v) {
        int s = (int) k.size(2);
        if (length + s > capacity) {
            throw new IllegalStateException("KV cache full: " + length + " + " + s + " > capacity " + capacity);
        }
        keys.get(layer).narrow(2, length, s).copy_(k);
        values.get(layer).narrow(2, length, s).copy_(v);
        return new Tensor[] {keys.get(layer).narrow(2, 0, length + s), values.get(layer).narrow(2, 0, length + s)};
    }

    void advance(int steps) {
        length += steps;
    }

    /**
     * A new cache whose row {@code i} is a copy of this cache's row {@code rows[i]} (e.g. each
     * prompt's prefix repeated for the G samples of its group), with room for {@code capacity}.
     */
    public KvCache selectRows(long[] rows, int newCapacity) {
        if (newCapacity < length) {
            throw new IllegalArgumentException("capacity " + newCapacity + " < cached length " + length);
        }
        List<Tensor> k = new ArrayList<>();
        List<Tensor> v = new ArrayList<>();
        Tensor index = Tensor.ofLongs(rows, keys.get(0).device());
        for (int l = 0; l < keys.size(); l++) {
            k.add(copyRows(keys.get(l), index, newCapacity));
            v.add(copyRows(values.get(l), index, newCapacity));
        }
        return new KvCache(k, v, newCapacity, length);
    }

    private Tensor copyRows(Tensor buffer, Tensor index, int newCapacity) {
        long[] s = buffer.shape();
        Tensor out = Tensor.zerosOf(buffer.dtype(), buffer.device(), index.size(0), s[1], newCapacity, s[3]).keep();
        if (length > 0) {
            out.narrow(2, 0, length).copy_(buffer.narrow(2, 0, length).indexSelect(0, index));
        }
        return out;
    }

    @Override
    public void close() {
        keys.forEach(Tensor::close);
        values.forEach(Tensor::close);
    }
}
