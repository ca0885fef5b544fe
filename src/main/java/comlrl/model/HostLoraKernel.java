package comlrl.model;

/**
 * The host arithmetic of {@link LoraBatch}'s decoding steps on the CPU: each agent's
 * {@code y += s·(x·Aᵀ)·Bᵀ} for its few rows, in Java, over bfloat16 copies (in int arrays) of the
 * adapters and of the rows, where libtorch takes five to eight small operations per projection (a
 * team's 12-row decoding step at the 0.5B shape spent ~14 ms in them, ~25–90 µs per operation
 * between the base's streaming products; ~8 ms here). Implemented with the JDK's vector API
 * ({@code jdk.incubator.vector}, see {@link #get()}); float32 sums, in another order than libtorch's.
 */
interface HostLoraKernel {
    /** W, the ints of a vector: the pairs of every row (in/2, out/2) must be a multiple of it. */
    int lanes();

    /**
     * {@code t[i·r + k] = scale · Σ_j x[i, j] · a[k·in + j]} for {@code i < m}, {@code k < r}: m rows of
     * x ({@code [m, in]}, from int {@code xOff} on, {@code xStride} ints apart) times the r rows of A
     * ({@code [r, in]}, from int {@code aOff} on); float32 sums. x and A hold bfloat16 values in pairs
     * (element 2l in the low half of int l, 2l + 1 in the high half, as they lie in memory); offsets
     * count ints.
     */
    void down(int[] x, int xOff, int xStride, int m, int in, int[] a, int aOff, int r, float scale, float[] t);

    /**
     * {@code y[i, o] ← r(y[i, o] + Σ_k t[i·r + k] · Bᵀ[k, o])} for {@code i < m}, {@code o < out}: m rows
     * of t times Bᵀ ({@code [r, out]}, from int {@code btOff} on, in chunks: {@code [out/2W, r, W]}
     * pairs) added onto y ({@code [m, out]}, from int {@code yOff} on, {@code yStride} ints apart) in
     * float32 and rounded once to bfloat16 (nearest even, as libtorch; NaN stays NaN), in place. Bᵀ
     * and y hold bfloat16 pairs.
     */
    void up(float[] t, int m, int r, int[] bt, int btOff, int out, int[] y, int yOff, int yStride);

    /** The vector-API kernel, or null when the JVM runs without {@code --add-modules jdk.incubator.vector}. */
    static HostLoraKernel get() {
        return Loaded.KERNEL;
    }

    /** Loads the implementation only when its module is there (its classes would not link otherwise). */
    final class Loaded {
        private Loaded() {}

        static final HostLoraKernel KERNEL = load();

        private static HostLoraKernel load() {
            if (ModuleLayer.boot().findModule("jdk.incubator.vector").isEmpty()
                    || "0".equals(System.getenv("COMLRL_VECTOR_LORA"))) {
                return null;
            }
            try {
                return (HostLoraKernel) Class.forName("comlrl.model.VectorLoraKernel").getDeclaredConstructor().newInstance();
            } catch (ReflectiveOperationException | LinkageError e) {
                return null;
            }
        }
    }
}
