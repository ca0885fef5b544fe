package comlrl.data;

/**
 * NumPy's {@code SeedSequence} for one non-negative integer seed (no spawn key, the default pool
 * of four 32-bit words): it turns the seed into well-mixed words that initialise {@link Pcg64}, so
 * that {@code np.random.default_rng(seed)} and this class start from the same state.
 *
 * <p>All arithmetic is on unsigned 32-bit words modulo 2^32 ({@code int}s here). With
 * {@code >>} the logical shift and {@code hashmix} carrying a running multiplier {@code h}:
 * <pre>
 *   hashmix(v):  v ^= h;  h *= 0x931e8875;  v *= h;  v ^= v >> 16;  return v      (h starts at 0x43b0d7e5)
 *   mix(x, y):   r = 0xca01f9dd * x - 0x4973f715 * y;  r ^= r >> 16;  return r
 * </pre>
 * <ol>
 *   <li>Entropy: the seed's 32-bit words, least significant first ({@code 0} is one zero word;
 *       {@code 2^32 + 7} is {@code [7, 1]}).</li>
 *   <li>Pool: {@code pool[i] = hashmix(entropy[i])} for {@code i < 4}, {@code hashmix(0)} past the
 *       entropy's end; then for every ordered pair {@code src != dst} (src outer, dst inner):
 *       {@code pool[dst] = mix(pool[dst], hashmix(pool[src]))}. A seed below 2^64 has at most two
 *       words, so no entropy is left over for NumPy's final mixing pass.</li>
 *   <li>Output word {@code k} (cycling through the pool, with its own multiplier {@code g}
 *       starting at {@code 0x8b51f9dd}): {@code v = pool[k mod 4] ^ g;  g *= 0x58f38ded;  v *= g;
 *       v ^= v >> 16}. 64-bit words are pairs of 32-bit words, the first one low
 *       ({@code generate_state(n, np.uint64)}).</li>
 * </ol>
 */
final class SeedSequence {
    private static final int POOL_SIZE = 4;
    private static final int INIT_A = 0x43b0d7e5;
    private static final int MULT_A = 0x931e8875;
    private static final int INIT_B = 0x8b51f9dd;
    private static final int MULT_B = 0x58f38ded;
    private static final int MIX_MULT_L = 0xca01f9dd;
    private static final int MIX_MULT_R = 0x4973f715;
    private static final int XSHIFT = 16;

    private final int[] pool = new int[POOL_SIZE];
    /** The running multiplier of {@code hashmix} while the pool is built. */
    private int hashConst = INIT_A;

    /**
     * The seed sequence of {@code seed}.
     *
     * @throws IllegalArgumentException when {@code seed < 0}: NumPy rejects negative seeds
     *     ({@code ValueError: expected non-negative integer})
     */
    SeedSequence(long seed) {
        if (seed < 0) {
            throw new IllegalArgumentException("seed=" + seed + " is negative; NumPy's SeedSequence (behind "
                    + "np.random.default_rng and datasets' shuffle/train_test_split) accepts only seeds >= 0");
        }
        int[] entropy = (seed >>> 32) == 0
                ? new int[] {(int) seed}
                : new int[] {(int) seed, (int) (seed >>> 32)};
        for (int i = 0; i < POOL_SIZE; i++) {
            pool[i] = hashmix(i < entropy.length ? entropy[i] : 0);
        }
        for (int src = 0; src < POOL_SIZE; src++) {
            for (int dst = 0; dst < POOL_SIZE; dst++) {
                if (src != dst) {
                    pool[dst] = mix(pool[dst], hashmix(pool[src]));
                }
            }
        }
    }

    /** The mixed entropy pool ({@code SeedSequence(seed).pool}), four unsigned 32-bit words. */
    int[] pool() {
        return pool.clone();
    }

    /** {@code generate_state(n, np.uint64)}: {@code n} 64-bit words, each two 32-bit words, low first. */
    long[] generateState64(int n) {
        int[] words = generateState32(2 * n);
        long[] out = new long[n];
        for (int i = 0; i < n; i++) {
            out[i] = Integer.toUnsignedLong(words[2 * i]) | ((long) words[2 * i + 1] << 32);
        }
        return out;
    }

    /** {@code generate_state(n, np.uint32)}. */
    int[] generateState32(int n) {
        int[] out = new int[n];
        int multiplier = INIT_B;
        for (int i = 0; i < n; i++) {
            int value = pool[i % POOL_SIZE] ^ multiplier;
            multiplier *= MULT_B;
            value *= multiplier;
            out[i] = value ^ (value >>> XSHIFT);
        }
        return out;
    }

    private int hashmix(int value) {
        value ^= hashConst;
        hashConst *= MULT_A;
        value *= hashConst;
        return value ^ (value >>> XSHIFT);
    }

    private static int mix(int x, int y) {
        int result = MIX_MULT_L * x - MIX_MULT_R * y;
        return result ^ (result >>> XSHIFT);
    }
}
