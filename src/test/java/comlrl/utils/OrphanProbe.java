package comlrl.utils;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * A JVM for {@link JsonLinesProcessLifetimeTest} to kill: starts a {@link JsonLinesProcess} child
 * that ignores the end of its input (and SIGTERM/SIGHUP/SIGINT) and has a grandchild, makes one
 * call, prints "ready" and waits to be killed.
 *
 * <p>Arguments: {@code PIDFILE guard|noguard}; the child writes "CHILD_PID GRANDCHILD_PID" to
 * PIDFILE before replying.
 */
public final class OrphanProbe {
    private OrphanProbe() {}

    public static void main(String[] args) throws Exception {
        Path pidFile = Path.of(args[0]);
        String script = String.join("\n",
                "trap '' TERM HUP INT",
                "IFS= read -r line",
                "sleep 300 &",
                "echo \"$$ $!\" > \"$1.tmp\" && mv \"$1.tmp\" \"$1\"",
                "echo '{\"ok\": true}'",
                "while :; do sleep 1; done   # ignores the end of its input");
        JsonLinesProcess.Builder<JsonLinesProcess> builder = JsonLinesProcess.builder("probe",
                List.of("bash", "-c", script, "probe-child", pidFile.toString())).timeout(Duration.ofSeconds(30));
        if (args[1].equals("noguard")) {
            builder.withoutGuard();
        }
        JsonLinesProcess process = builder.build();
        System.out.println(process.call("{}"));
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
