package comlrl.cli;

import comlrl.report.HtmlReport;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code report}: one self-contained HTML file charting the metrics and config of one or more run directories. */
@Command(name = "report", mixinStandardHelpOptions = true,
        description = "Write a self-contained HTML report (inline SVG charts of every logged metric, the resolved "
                + "config) of one or more run directories; several runs share each chart, one colour per run.")
final class ReportCommand implements Callable<Integer> {
    @Parameters(arity = "1..*", paramLabel = "RUN_DIR", description = "run directories (a training run's output_dir: "
            + "metrics.jsonl, config.json)")
    List<Path> runDirs;

    @Option(names = "--out", paramLabel = "FILE", description = "the HTML file to write (default: RUN_DIR/report.html "
            + "for one run, report.html in the working directory for several)")
    Path out;

    @Option(names = "--smoothing", paramLabel = "WEIGHT", description = "also draw each curve smoothed by an "
            + "exponential moving average of this weight in [0, 1), as TensorBoard's smoothing (0.6 there), the raw "
            + "curve kept faintly beneath (default: 0, none)")
    double smoothing;

    @Override
    public Integer call() {
        Path target = out != null ? out : runDirs.size() == 1 ? runDirs.get(0).resolve(HtmlReport.FILE_NAME)
                : Path.of(HtmlReport.FILE_NAME);
        HtmlReport.write(runDirs, target, smoothing);
        System.out.println("report: " + target);
        return 0;
    }
}
