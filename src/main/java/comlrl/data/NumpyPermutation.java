package comlrl.data;

/**
 * The random permutation behind {@link Dataset#shuffle(long)} and {@link Dataset#trainTestSplit}:
 * exactly {@code np.random.default_rng(seed).permutation(n)}, which is what Hugging Face
 * {@code datasets} draws for {@code shuffle(seed=...)} and {@code train_test_split(..., seed=...)}
 * (checked against values recorded from NumPy 2.4 and datasets 5.0 in
 * {@code src/test/resources/datasets-splits/}).
 *
 * <p>Algorithm: {@link Pcg64} seeded through {@link SeedSequence}; start from
 * {@code order = [0, 1, .., n-1]}; Fisher–Yates from the last position down,
 * {@code for i = n-1 .. 1: swap(order[i], order[j])} with {@code j = randomInterval(i)}, NumPy's
 * masked rejection draw uniform in {@code [0, i]}:
 * <pre>
 *   mask = the smallest 2^k - 1 >= i
 *   repeat  j = next32() &amp; mask  until j &lt;= i
 * </pre>
 * (NumPy draws 64-bit words instead for bounds above 2^32 - 1, which an {@code int}-indexed set
 * never reaches, and uses Lemire's multiply method only in {@code integers()} and {@code choice()},
 * not here.)
 */
final class NumpyPermutation {
    private NumpyPermutation() {}

    /**
     * {@code np.random.default_rng(seed).permutation(n)}.
     *
     * @throws IllegalArgumentException when {@code n < 0} or {@code seed < 0} (NumPy rejects
     *     negative seeds)
     */
    static int[] of(int n, long seed) {
        if (n < 0) {
            throw new IllegalArgumentException("n must be >= 0, got " + n);
        }
        Pcg64 bits = new Pcg64(seed);
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        for (int i = n - 1; i > 0; i--) {
            int j = randomInterval(bits, i);
            int held = order[i];
            order[i] = order[j];
            order[j] = held;
        }
        return order;
    }

    /** Uniform in {@code [0, max]} for {@code max >= 0}, by NumPy's masked rejection on 32-bit draws. */
    static int randomInterval(Pcg64 bits, int max) {
        if (max == 0) {
            return 0;
        }
        int mask = -1 >>> Integer.numberOfLeadingZeros(max);
        int value;
        do {
            value = bits.nextUint32() & mask;
        } while (value > max);
        return value;
    }
}
