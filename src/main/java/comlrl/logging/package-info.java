/**
 * Metric sinks: {@code metrics.jsonl} lines keyed by env_step, TensorBoard event files, and the console progress bar. Trainers fan their events out to these.
 */
package comlrl.logging;
