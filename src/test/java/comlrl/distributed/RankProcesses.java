package comlrl.distributed;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * The tests' ranks as plain child JVMs (not through {@link Launcher}, which would stop the peers of
 * a failed rank before they could report): each runs a test main class with torchrun's variables
 * set, its output (stdout and stderr) going to a file.
 */
final class RankProcesses implements AutoCloseable {
    private final List<Process> processes = new ArrayList<>();
    private final List<Path> logs = new ArrayList<>();

    /** Starts ranks 0 .. worldSize-1 of {@code mainClass args} on a free local port. */
    static RankProcesses start(Path dir, int worldSize, Class<?> mainClass, String... args) throws IOException {
        return start(dir, worldSize, mainClass, rank -> List.of(args));
    }

    /** Starts ranks 0 .. worldSize-1 of {@code mainClass}, rank r with arguments {@code argsOfRank(r)}. */
    static RankProcesses start(Path dir, int worldSize, Class<?> mainClass, IntFunction<List<String>> argsOfRank)
            throws IOException {
        RankProcesses ranks = new RankProcesses();
        int port = Launcher.freePort();
        for (int r = 0; r < worldSize; r++) {
            List<String> cmd = new ArrayList<>(Launcher.javaCommand(mainClass.getName()));
            cmd.addAll(argsOfRank.apply(r));
            Path log = dir.resolve("rank" + r + ".log");
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
            pb.environment().putAll(new RankInfo(r, worldSize, r, "127.0.0.1", port).toEnvironment());
            ranks.logs.add(log);
            ranks.processes.add(pb.start());
        }
        return ranks;
    }

    Process process(int rank) {
        return processes.get(rank);
    }

    String output(int rank) {
        try {
            return Files.readString(logs.get(rank), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Waits until rank {@code rank} has printed a line equal to {@code line}; fails after {@code limit}. */
    void awaitLine(int rank, String line, Duration limit) throws InterruptedException {
        long end = System.nanoTime() + limit.toNanos();
        while (!output(rank).lines().anyMatch(line::equals)) {
            if (System.nanoTime() > end || !processes.get(rank).isAlive() && !output(rank).lines().anyMatch(line::equals)) {
                throw new AssertionError("rank " + rank + " did not print '" + line + "':\n" + output(rank));
            }
            Thread.sleep(50);
        }
    }

    /** The {@code key: value} lines a rank printed. */
    Map<String, String> values(int rank) {
        return values(output(rank), "");
    }

    /** The {@code key: value} lines of {@code text} that start with {@code prefix} (which is dropped). */
    static Map<String, String> values(String text, String prefix) {
        Map<String, String> values = new LinkedHashMap<>();
        text.lines().filter(l -> l.startsWith(prefix)).map(l -> l.substring(prefix.length())).forEach(l -> {
            int colon = l.indexOf(": ");
            if (colon > 0) {
                values.put(l.substring(0, colon), l.substring(colon + 2));
            }
        });
        return values;
    }

    @Override
    public void close() {
        processes.forEach(Process::destroyForcibly);
    }
}
