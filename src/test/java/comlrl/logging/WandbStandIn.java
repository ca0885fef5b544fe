package comlrl.logging;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A stand-in for the W&amp;B bridge ({@code wandb_bridge.py}) speaking its protocol, for tests without
 * Python: appends every line it receives to a file and answers {@code init} and {@code finish}.
 * {@code args: FILE MODE}, MODE one of {@code ok}, {@code die-after=N} (exit after N log lines),
 * {@code hang} (stop reading after init), {@code fail-init}.
 */
public final class WandbStandIn {
    private WandbStandIn() {
    }

    public static void main(String[] args) throws Exception {
        Path file = Path.of(args[0]);
        String mode = args[1];
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        int logs = 0;
        String line;
        while ((line = in.readLine()) != null) {
            Files.writeString(file, line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            if (line.contains("\"op\":\"init\"")) {
                if (mode.equals("fail-init")) {
                    out.println("{\"op\": \"init\", \"ok\": false, \"error\": \"CommError: project not found\"}");
                    return;
                }
                out.println("{\"op\": \"init\", \"ok\": true, \"dir\": \"/tmp/stand-in\", \"identity\": {\"id\": \"abc123\", "
                        + "\"project\": \"p\", \"entity\": \"\", \"name\": \"n\"}}");
                System.err.println("wandb: stand-in run abc123 started");
                if (mode.equals("hang")) {
                    Thread.sleep(Long.MAX_VALUE);
                }
            } else if (line.contains("\"op\": \"finish\"") || line.contains("\"op\":\"finish\"")) {
                out.println("{\"op\": \"finish\", \"ok\": true}");
                return;
            } else if (line.contains("\"op\":\"log\"")) {
                logs++;
                if (mode.startsWith("die-after=") && logs >= Integer.parseInt(mode.substring("die-after=".length()))) {
                    System.exit(9);
                }
            }
        }
    }

    /** The command that runs this stand-in with the test JVM. */
    static java.util.List<String> command(Path file, String mode) {
        return java.util.List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                System.getProperty("java.class.path"), WandbStandIn.class.getName(), file.toString(), mode);
    }
}
