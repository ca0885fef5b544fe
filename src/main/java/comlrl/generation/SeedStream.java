package comlrl.generation;

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
     * The evaluations' own stream, seeded {@code seed ^ EVALUATION_SALT} and advancing over all of a run's
     * evaluations: evaluating (and how often, {@code eval_interval}) never changes which samples training
     * draws. Its position is checkpointed too, so a resumed run evaluates on the uninterrupted run's seeds.
     */
    public synchronized SeedStream evaluation() {
        if (evaluation == null) {
            evaluation = new SeedStream(seed ^ EVALUATION_SALT);
        }
        return evaluation;
    }

    private SeedStream evaluation;

    /** How many seeds evaluations drew (the checkpointed position of {@link #evaluation()}). */
    public long evaluationPosition() {
        return evaluation().position();
    }

    /** Restores {@link #evaluation()}'s position. */
    public void restoreEvaluation(long position) {
        evaluation().restore(position);
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
