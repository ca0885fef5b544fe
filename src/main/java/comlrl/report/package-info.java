/**
 * Run reports: a run directory's {@code config.json} and {@code metrics.jsonl} read back
 * ({@link comlrl.report.RunReport}) and drawn as one self-contained HTML file of inline SVG charts
 * ({@link comlrl.report.HtmlReport}), one run or several side by side.
 */
package comlrl.report;
