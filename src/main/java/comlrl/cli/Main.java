package comlrl.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code bin/comlrl}: the command-line entry point. The only place that prints for humans or exits. */
@Command(name = "comlrl", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Cooperative multi-LLM reinforcement learning on the JVM.",
        subcommands = {InitModelCommand.class, GenerateCommand.class, TrainCommand.class, BenchCommand.class, ReportCommand.class, LaunchCommand.class, ConfigDocs.class, ConfigKeysCommand.class, SandboxCommand.class, ExampleFigures.class,
                CommandLine.HelpCommand.class})
public final class Main {

    public static void main(String[] args) {
        // no console line carries a registered secret (an API key, a token), whoever prints it
        System.setOut(comlrl.net.Secrets.scrubbing(System.out));
        System.setErr(comlrl.net.Secrets.scrubbing(System.err));
        LaunchCommand.exitWithLauncher();
        System.exit(run(args));
    }

    /** Runs a command line and returns its exit code (0 ok, 1 failure, 2 usage error). */
    public static int run(String... args) {
        CommandLine cl = new CommandLine(new Main());
        LaunchCommand.configure(cl.getSubcommands().get("launch"));
        // train --help lists every config key, as config-keys does
        cl.getSubcommands().get("train").getCommandSpec().usageMessage().footer("", ConfigDocs.keysText(null));
        cl.setExecutionExceptionHandler((ex, cmd, parsed) -> fail(ex, cmd.getErr()));
        try {
            return cl.execute(args);
        } catch (Error e) { // out of memory, a native library that cannot load: said as plainly, not as a stack trace
            return fail(e, cl.getErr());
        }
    }

    /** Prints {@code error: <what went wrong>} (never "null": an error without a message is named by its kind and place). */
    private static int fail(Throwable ex, java.io.PrintWriter err) {
        String message = ex.getMessage();
        err.println("error: " + (message != null && !message.isBlank() && ex instanceof Exception ? message
                : comlrl.distributed.DistributedException.describe(ex)));
        if (System.getenv("COMLRL_DEBUG") != null) {
            ex.printStackTrace(err);
        }
        err.flush();
        return 1;
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Main.class.getPackage().getImplementationVersion();
            return new String[] {"comlrl " + (v == null ? "dev" : v)};
        }
    }
}
