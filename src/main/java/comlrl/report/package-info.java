/**
 * Run reports: a run directory's {@code config.json} and {@code metrics.jsonl} read back
 * ({@link comlrl.report.RunReport}) and drawn as one self-contained HTML file of inline SVG charts
 * ({@link comlrl.report.HtmlReport}), one run or several side by side; and the per-iteration reward histograms
 * of the iterative preference trainers ({@link comlrl.report.RewardDistribution}: JSON and SVG beside the run).
 */
package comlrl.report;
