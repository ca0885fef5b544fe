/**
 * Training checkpoints written atomically (temporary directory renamed into place, then the {@code latest} pointer),
 * their metadata, the {@code latest} pointer's checks, and the cleanup after a writer killed mid-checkpoint;
 * {@link comlrl.checkpoint.TrainerCheckpoint}: what every trainer writes into one and restores from it.
 */
package comlrl.checkpoint;
