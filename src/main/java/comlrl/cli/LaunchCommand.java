package comlrl.cli;

import comlrl.distributed.Launcher;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code launch --nproc-per-node N COMMAND...}: one process per rank, as torchrun starts them. */
@Command(name = "launch", mixinStandardHelpOptions = true,
        description = {"Run a command in several processes on this machine (e.g. launch --nproc-per-node 2 train "
                + "CONFIG.yaml), each with torchrun's variables (WORLD_SIZE, RANK, LOCAL_RANK, MASTER_ADDR, "
                + "MASTER_PORT); output lines are prefixed with [rank r]. When one process fails the others are "
                + "stopped and launch exits with its code.",
                "Options end at the command's name; everything after it is the command's own."})
final class LaunchCommand implements Callable<Integer> {
    @Option(names = "--nproc-per-node", required = true, paramLabel = "N", description = "processes on this machine")
    int nprocPerNode;

    @Option(names = "--nnodes", defaultValue = "1", paramLabel = "M", description = "machines in the run (default ${DEFAULT-VALUE})")
    int nnodes;

    @Option(names = "--node-rank", defaultValue = "0", paramLabel = "R", description = "this machine's index (default ${DEFAULT-VALUE})")
    int nodeRank;

    @Option(names = "--master-addr", paramLabel = "ADDR", description = "host of the machine with --node-rank 0 "
            + "(default 127.0.0.1; required with --nnodes > 1)")
    String masterAddr;

    @Option(names = "--master-port", defaultValue = "0", paramLabel = "PORT", description = "rendezvous port (default: a "
            + "free one; required with --nnodes > 1)")
    int masterPort;

    @Option(names = "--grace-period", defaultValue = "5", paramLabel = "SECONDS", description = "how long a process may "
            + "take to stop when asked before it is killed (default ${DEFAULT-VALUE})")
    double gracePeriod;

    @Parameters(arity = "1..*", paramLabel = "COMMAND", description = "a bin/comlrl command and its arguments")
    List<String> command;

    /** Options end at the command's name, so that the command's own options stay its own. */
    static void configure(CommandLine launch) {
        launch.setStopAtPositional(true);
    }

    @Override
    public Integer call() throws InterruptedException {
        if (command.get(0).equals("launch")) {
            throw new IllegalArgumentException("launch cannot run launch; give the command each process runs (e.g. train CONFIG.yaml)");
        }
        Launcher.Spec spec = new Launcher.Spec(nprocPerNode, nnodes, nodeRank, masterAddr, masterPort,
                Duration.ofMillis(Math.round(gracePeriod * 1000)));
        Launcher launcher = new Launcher(Launcher.javaCommand(Main.class.getName()), System.out, System.err);
        return launcher.run(spec, command);
    }

    /**
     * In a process that {@code launch} started: exit (code 1) when the launcher's process ends, so
     * that no process outlives a launcher killed before its shutdown hook could stop them.
     */
    static void exitWithLauncher() {
        String pid = System.getenv(Launcher.LAUNCHER_PID);
        if (pid == null) {
            return;
        }
        long id;
        try {
            id = Long.parseLong(pid.trim());
        } catch (NumberFormatException e) {
            return;
        }
        Runnable stop = () -> {
            System.err.println("launch: the launcher (pid " + id + ") has exited; stopping");
            System.exit(1);
        };
        ProcessHandle.of(id).ifPresentOrElse(launcher -> launcher.onExit().thenRun(stop), stop);
    }
}
