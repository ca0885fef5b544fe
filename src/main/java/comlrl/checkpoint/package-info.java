/**
 * Training checkpoints written atomically (temporary directory renamed into place, then the {@code latest} pointer) and their metadata.
 */
package comlrl.checkpoint;
