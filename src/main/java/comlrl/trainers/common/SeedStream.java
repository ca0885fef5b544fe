package comlrl.trainers.common;

import comlrl.generation.Generator;

/**
 * The deterministic stream of sampling and shuffling seeds of a run: seed k is
 * {@code Generator.rowSeed(seed, k >>> 20, k & 0xFFFFF)}. Its position is saved in checkpoints, so a
 * resumed run draws the seeds the uninterrupted run would have drawn.
 */
public final class SeedStream {
    private final long seed;
    private long counter;

    public SeedStream(long seed) {
        this.seed = seed;
    }

    /** The next seed. */
    public synchronized long next() {
        return Generator.rowSeed(seed, (int) (counter >>> 20), (int) (counter++ & 0xFFFFF));
    }

    /** How many seeds were drawn (the checkpointed position). */
    public synchronized long position() {
        return counter;
    }

    public synchronized void restore(long position) {
        this.counter = position;
    }
}
