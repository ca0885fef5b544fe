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

    /**
     * A fresh stream for one evaluation, apart from this one: seeded {@code seed ^ EVALUATION_SALT},
     * at position 0. An evaluation draws from it only, so evaluating (and how often,
     * {@code eval_interval}) never changes which samples training draws, and two evaluations of the
     * same weights sample the same completions.
     */
    public SeedStream evaluation() {
        return new SeedStream(seed ^ EVALUATION_SALT);
    }

    /** What sets an evaluation's seeds apart from training's ("eval" in ASCII). */
    static final long EVALUATION_SALT = 0x6576616CL;

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
