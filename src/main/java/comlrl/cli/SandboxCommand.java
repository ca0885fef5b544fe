package comlrl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.sandbox.ExecutionResult;
import comlrl.sandbox.Isolation;
import comlrl.sandbox.Sandbox;
import comlrl.sandbox.SandboxConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code sandbox run}: one program (and its assert tests) through the code sandbox, for debugging a reward. */
@Command(name = "sandbox", mixinStandardHelpOptions = true, subcommands = SandboxCommand.Run.class,
        description = "Run model-written code in the sandbox the code rewards use.")
final class SandboxCommand implements Callable<Integer> {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(), "missing subcommand: sandbox run --code FILE "
                + "[--tests FILE] [--json]");
    }

    @Command(name = "run", mixinStandardHelpOptions = true,
            description = "Run one program and its assert tests in the sandbox and print the verdict (exit 0 whatever the "
                    + "verdict; 1 when the sandbox cannot run here).")
    static final class Run implements Callable<Integer> {
        @Option(names = "--code", required = true, description = "the program (Python)")
        Path code;

        @Option(names = "--tests", description = "assert statements run after the program; each assert is one test")
        Path tests;

        @Option(names = "--json", description = "print the verdict as one JSON object on the last stdout line: status, "
                + "tests_passed, tests_total, message, wall_time_s, stdout, stderr")
        boolean json;

        @Option(names = "--isolation", defaultValue = "namespaces",
                description = "namespaces, or process (weaker: no network or file-system isolation) (default ${DEFAULT-VALUE})")
        String isolation;

        @Option(names = "--interpreter", defaultValue = "python3",
                description = "interpreter name on the sandbox PATH or absolute path (default ${DEFAULT-VALUE})")
        String interpreter;

        @Option(names = "--interpreter-arg", description = "an argument for the interpreter before the harness (repeatable)")
        List<String> interpreterArgs;

        @Option(names = "--timeout", defaultValue = "10", description = "wall-time and CPU-time limit in seconds (default ${DEFAULT-VALUE})")
        double timeoutSeconds;

        @Option(names = "--memory-mb", defaultValue = "1024", description = "address-space limit in MiB (default ${DEFAULT-VALUE})")
        long memoryMb;

        @Override
        public Integer call() throws IOException {
            Duration limit = Duration.ofMillis(Math.round(timeoutSeconds * 1000));
            SandboxConfig config = SandboxConfig.builder().isolation(Isolation.fromKey(isolation)).interpreter(interpreter)
                    .interpreterArgs(interpreterArgs).wallTime(limit).cpuTime(limit).memoryBytes(memoryMb << 20)
                    .parallelism(1).cacheSize(0).build();
            String program = Files.readString(code);
            String asserts = tests == null ? "" : Files.readString(tests);
            try (Sandbox sandbox = Sandbox.create(config)) {
                ExecutionResult r = sandbox.run(program, asserts);
                if (json) {
                    System.out.println(new ObjectMapper().writeValueAsString(r.toJson()));
                    return 0;
                }
                System.out.print(r.stdout());
                System.err.print(r.stderr());
                System.out.printf("%s: %d of %d tests passed (%.2f s)%s%n", r.status().key(), r.testsPassed(),
                        r.testsTotal(), r.wallTime().toNanos() / 1e9, r.message().isEmpty() ? "" : "\n" + r.message());
                return 0;
            }
        }
    }
}
