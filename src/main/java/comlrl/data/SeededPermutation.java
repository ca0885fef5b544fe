package comlrl.data;

/**
 * The random permutation behind {@link Dataset#shuffle(long)} and
 * {@link Dataset#trainTestSplit(double, long)}: our own, fixed forever, and not numpy's (a seed
 * gives the same order on every JVM and platform, but not the order Python's {@code datasets}
 * would give for that seed).
 *
 * <p>Algorithm: Fisher–Yates from the last position down, {@code for i = n-1 .. 1: swap(i, j)} with
 * {@code j} uniform in {@code [0, i]}; the uniform draws come from SplitMix64 seeded with the seed
 * (state advanced by the golden gamma {@code 0x9E3779B97F4A7C15}, then the two xor-shift-multiply
 * rounds of the published finaliser), made unbiased by rejecting the top, incomplete block of
 * 63-bit values.
 */
final class SeededPermutation {
    private static final long GOLDEN_GAMMA = 0x9E3779B97F4A7C15L;

    private long state;

    private SeededPermutation(long seed) {
        this.state = seed;
    }

    /** A permutation of {@code 0..n-1} determined by {@code seed}. */
    static int[] of(int n, long seed) {
        if (n < 0) {
            throw new IllegalArgumentException("n must be >= 0, got " + n);
        }
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        SeededPermutation rng = new SeededPermutation(seed);
        for (int i = n - 1; i > 0; i--) {
            int j = (int) rng.nextBelow(i + 1L);
            int held = order[i];
            order[i] = order[j];
            order[j] = held;
        }
        return order;
    }

    /** The next SplitMix64 output. */
    private long nextLong() {
        state += GOLDEN_GAMMA;
        long z = state;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** Uniform in {@code [0, bound)}, {@code bound >= 1}, by rejection of the incomplete top block. */
    private long nextBelow(long bound) {
        while (true) {
            long bits = nextLong() >>> 1; // uniform in [0, 2^63)
            long value = bits % bound;
            // accept unless bits falls in the last, partial block of size < bound (overflow test)
            if (bits - value + (bound - 1) >= 0) {
                return value;
            }
        }
    }
}
