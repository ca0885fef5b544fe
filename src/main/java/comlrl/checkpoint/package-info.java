/**
 * Training checkpoints written atomically (temporary directory renamed into place, then the {@code latest} pointer),
 * their metadata, the {@code latest} pointer's checks, and the cleanup after a writer killed mid-checkpoint.
 */
package comlrl.checkpoint;
