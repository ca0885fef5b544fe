package comlrl.data;

/**
 * NumPy's {@code PCG64} bit generator (the one {@code np.random.default_rng} uses): a 128-bit
 * linear congruential generator with the XSL-RR output function, seeded through
 * {@link SeedSequence} as NumPy seeds it.
 *
 * <p>All values are unsigned; a 128-bit number is kept as two {@code long}s (high, low).
 * <pre>
 *   step:     s = s * M + inc  (mod 2^128),  M = 0x2360ed051fc65da4_4385df649fccf645
 *   output:   rotr64(hi(s) ^ lo(s), hi(s) >> 58)            (the rotation is the top 6 bits)
 *   next64:   step, then output of the new state             (= bit_generator.random_raw())
 *   next32:   the low half of a fresh next64; the next call returns its buffered high half
 *   seeding:  w = SeedSequence(seed).generate_state(4, uint64);
 *             initstate = w[0]:w[1],  initseq = w[2]:w[3]   (first word high);
 *             inc = (initseq &lt;&lt; 1) | 1;  s = 0;  step;  s += initstate;  step
 * </pre>
 * Java 17 has no unsigned 64x64 -&gt; 128 multiply ({@code Math.unsignedMultiplyHigh} is Java 18),
 * so {@link #unsignedMultiplyHigh} derives it from the signed {@link Math#multiplyHigh}.
 */
final class Pcg64 {
    private static final long MULT_HIGH = 0x2360ed051fc65da4L;
    private static final long MULT_LOW = 0x4385df649fccf645L;

    private long stateHigh;
    private long stateLow;
    private final long incHigh;
    private final long incLow;
    /** Whether {@link #bufferedHalf} holds the unused high half of the last 64-bit draw. */
    private boolean hasBufferedHalf;
    private int bufferedHalf;

    /** {@code PCG64(seed)}: the state NumPy derives from {@code SeedSequence(seed)}. */
    Pcg64(long seed) {
        long[] words = new SeedSequence(seed).generateState64(4);
        long initHigh = words[0];
        long initLow = words[1];
        long seqHigh = words[2];
        long seqLow = words[3];
        incHigh = (seqHigh << 1) | (seqLow >>> 63);
        incLow = (seqLow << 1) | 1;
        stateHigh = 0;
        stateLow = 0;
        step();
        long low = stateLow + initLow;
        stateHigh = stateHigh + initHigh + (Long.compareUnsigned(low, stateLow) < 0 ? 1 : 0);
        stateLow = low;
        step();
    }

    /** The high 64 bits of the 128-bit state ({@code bit_generator.state["state"]["state"] >> 64}). */
    long stateHigh() {
        return stateHigh;
    }

    /** The low 64 bits of the 128-bit state. */
    long stateLow() {
        return stateLow;
    }

    /** The high 64 bits of the 128-bit increment ({@code state["state"]["inc"] >> 64}). */
    long incHigh() {
        return incHigh;
    }

    /** The low 64 bits of the 128-bit increment (always odd). */
    long incLow() {
        return incLow;
    }

    /** The next 64 random bits ({@code random_raw()}), as a {@code long} holding them. */
    long nextUint64() {
        step();
        int rotation = (int) (stateHigh >>> 58);
        return Long.rotateRight(stateHigh ^ stateLow, rotation);
    }

    /** The next 32 random bits: the two halves of one 64-bit draw, low half first. */
    int nextUint32() {
        if (hasBufferedHalf) {
            hasBufferedHalf = false;
            return bufferedHalf;
        }
        long bits = nextUint64();
        bufferedHalf = (int) (bits >>> 32);
        hasBufferedHalf = true;
        return (int) bits;
    }

    /** {@code s = s * M + inc (mod 2^128)}. */
    private void step() {
        long low = stateLow * MULT_LOW;
        long high = unsignedMultiplyHigh(stateLow, MULT_LOW) + stateLow * MULT_HIGH + stateHigh * MULT_LOW;
        long sumLow = low + incLow;
        stateHigh = high + incHigh + (Long.compareUnsigned(sumLow, low) < 0 ? 1 : 0);
        stateLow = sumLow;
    }

    /**
     * The high 64 bits of the unsigned 128-bit product {@code a * b}: the signed high product,
     * corrected by {@code b} when {@code a}'s top bit is set and by {@code a} when {@code b}'s is
     * (reading a negative {@code long} {@code x} unsigned adds {@code 2^64} to it).
     */
    static long unsignedMultiplyHigh(long a, long b) {
        return Math.multiplyHigh(a, b) + ((a >> 63) & b) + ((b >> 63) & a);
    }
}
