/**
 * Metric sinks: {@code metrics.jsonl} lines keyed by env_step, TensorBoard event files, Weights &amp; Biases, and the console progress bar. Trainers fan their events out to these through {@link comlrl.logging.MetricsLogger} (the {@code logging_steps} gate, the in-memory history, the log position a checkpoint restores), which also records the run directory ({@link comlrl.logging.RunRecord}: {@code config.json}, {@code splits.json}, {@code run.json}) and the evaluation samples ({@link comlrl.logging.EvalSamples}).
 */
package comlrl.logging;
