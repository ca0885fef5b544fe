package comlrl.distributed;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A child of the launcher tests: prints the variables it was given, then rank
 * {@code args[0]} exits with code {@code args[1]} once every other rank is ready, while the other
 * ranks start a grandchild ({@code sleep}), say they are ready and wait; with {@code args[2] =
 * stubborn} they also ignore a polite stop for a minute (a shutdown hook that sleeps), so only a
 * kill ends them. The ranks meet through files in a directory named after {@code MASTER_PORT}.
 */
public final class LaunchProbe {
    private LaunchProbe() {
    }

    public static void main(String[] args) throws Exception {
        int rank = Integer.parseInt(System.getenv("RANK"));
        int world = Integer.parseInt(System.getenv("WORLD_SIZE"));
        System.out.println("env: " + System.getenv("WORLD_SIZE") + " " + rank + " " + System.getenv("LOCAL_RANK") + " "
                + System.getenv("LOCAL_WORLD_SIZE") + " " + System.getenv("MASTER_ADDR") + " " + System.getenv("MASTER_PORT"));
        System.out.println("pid: " + ProcessHandle.current().pid());
        Path meeting = Files.createDirectories(Path.of(System.getProperty("java.io.tmpdir"),
                "comlrl-launch-probe-" + System.getenv("MASTER_PORT")));
        if (rank == Integer.parseInt(args[0])) {
            long end = System.nanoTime() + 60_000_000_000L;
            while (countReady(meeting) < world - 1 && System.nanoTime() < end) {
                Thread.sleep(20); // until the others have their grandchildren and hooks (a loaded machine starts JVMs slowly)
            }
            try (var ready = Files.list(meeting)) {
                for (Path p : ready.toList()) {
                    Files.deleteIfExists(p);
                }
            }
            Files.deleteIfExists(meeting);
            System.err.println("failing on purpose");
            System.exit(Integer.parseInt(args[1]));
        }
        Process sleeper = new ProcessBuilder("sleep", "120").start();
        System.out.println("grandchild: " + sleeper.pid());
        if (args.length > 2 && args[2].equals("stubborn")) {
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    Thread.sleep(60_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        System.out.print("progress 1\rprogress 2\r\n");
        System.out.flush();
        Files.createFile(meeting.resolve("ready-" + rank));
        Thread.sleep(120_000);
    }

    private static long countReady(Path meeting) throws java.io.IOException {
        try (var files = Files.list(meeting)) {
            return files.count();
        }
    }
}
