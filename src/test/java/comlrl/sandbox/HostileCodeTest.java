package comlrl.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile programs, each contained and reported (the default isolation, small limits). Processes a program
 * starts name themselves with a marker unique to the test (their {@code comm}, and their command line where
 * they exec), and {@code /proc} of the host is scanned for it afterwards.
 */
class HostileCodeTest {
    private static final SandboxConfig LIMITS = SandboxConfig.builder().wallTime(Duration.ofSeconds(2))
            .cpuTime(Duration.ofSeconds(2)).memoryBytes(128L << 20).maxProcesses(16).maxOpenFiles(32)
            .maxFileBytes(8L << 20).maxOutputBytes(64L << 10).scratchBytes(32L << 20).parallelism(2).cacheSize(0).build();
    private static Sandbox sandbox;

    @BeforeAll
    static void start() {
        sandbox = Sandbox.create(LIMITS);
    }

    @AfterAll
    static void stop() {
        sandbox.close();
    }

    /** A 15-character name (the kernel's limit for comm) no other process has. */
    private static String marker() {
        return "cx" + UUID.randomUUID().toString().replace("-", "").substring(0, 13);
    }

    /** Python that names the calling process {@code marker} (prctl PR_SET_NAME). */
    private static String nameSelf(String marker) {
        return "import ctypes\nctypes.CDLL(None).prctl(15, b'" + marker + "', 0, 0, 0)\n";
    }

    /** Host processes whose name or command line holds the marker, after the kernel has had up to 2 s to reap them. */
    private static List<String> processesWith(String marker) throws InterruptedException {
        List<String> found = List.of();
        for (long deadline = System.nanoTime() + 2_000_000_000L; System.nanoTime() < deadline; Thread.sleep(50)) {
            found = scan(marker);
            if (found.isEmpty()) {
                return found;
            }
        }
        return found;
    }

    private static List<String> scan(String marker) {
        List<String> found = new ArrayList<>();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            procs.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).forEach(p -> {
                try {
                    String comm = Files.readString(p.resolve("comm")).strip();
                    String cmdline = new String(Files.readAllBytes(p.resolve("cmdline")), StandardCharsets.UTF_8);
                    if (comm.contains(marker) || cmdline.contains(marker)) {
                        found.add(p.getFileName() + " " + comm);
                    }
                } catch (IOException gone) {
                    // exited while we looked
                }
            });
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return found;
    }

    @Test
    void anInfiniteLoopTimesOutAndIsKilled() throws Exception {
        String marker = marker();
        ExecutionResult r = sandbox.run(nameSelf(marker) + "while True:\n    pass\n", "assert True\n");
        assertThat(r.status()).isEqualTo(Status.TIMEOUT);
        assertThat(r.message()).startsWith("wall-time limit of 2.0 s");
        assertThat(r.wallTime()).isLessThan(Duration.ofSeconds(4));
        assertThat(processesWith(marker)).isEmpty();
    }

    @Test
    void theCpuLimitStopsABusyLoopBeforeTheWallLimit() throws Exception {
        String marker = marker();
        try (Sandbox cpu = Sandbox.create(LIMITS.toBuilder().wallTime(Duration.ofSeconds(20)).cpuTime(Duration.ofSeconds(1))
                .build())) {
            ExecutionResult r = cpu.run(nameSelf(marker) + "while True:\n    pass\n", "");
            assertThat(r.status()).isEqualTo(Status.TIMEOUT);
            assertThat(r.message()).contains("CPU-time limit of 1 s");
            assertThat(r.wallTime()).isLessThan(Duration.ofSeconds(10));
        }
        assertThat(processesWith(marker)).isEmpty();
    }

    @Test
    void aForkBombIsContainedAndNothingOfItIsLeft() throws Exception {
        String marker = marker();
        // every process forks for ever and survives its failed forks: the process limit holds it, the timeout ends it
        String bomb = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n";
        ExecutionResult r = sandbox.run(nameSelf(marker) + bomb, "assert True\n");
        assertThat(r.status()).isEqualTo(Status.TIMEOUT);
        assertThat(r.testsPassed()).isZero();
        assertThat(processesWith(marker)).isEmpty();
    }

    @Test
    void theProcessLimitHolds() throws Exception {
        String marker = marker();
        String forks = nameSelf(marker) + "import os, sys, time\nstarted = 0\ntry:\n    for _ in range(200):\n"
                + "        if os.fork() == 0:\n"
                + "            os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(30)', '" + marker + "'])\n"
                + "        started += 1\nexcept OSError as e:\n    print(started, type(e).__name__)\n";
        ExecutionResult r = sandbox.run(forks, "");
        assertThat(r.status()).isEqualTo(Status.OK);
        String[] printed = r.stdout().strip().split(" ");
        assertThat(printed[1]).isEqualTo("BlockingIOError");
        // 16 processes and threads: the shell, the interpreter and at most 14 children
        assertThat(Integer.parseInt(printed[0])).isBetween(1, LIMITS.maxProcesses() - 2);
        assertThat(processesWith(marker)).isEmpty();
    }

    @Test
    void aMemoryHogHitsTheMemoryLimit() {
        ExecutionResult r = sandbox.run("hog = bytearray(1 << 30)\n", "assert len(hog) > 0\n");
        assertThat(r.status()).isEqualTo(Status.MEMORY_LIMIT);
        assertThat(r.message()).isEqualTo("line 1: hog = bytearray(1 << 30): MemoryError");
        assertThat(r.testsPassed()).isZero();
    }

    @Test
    void aTenGigabyteFileStopsAtTheFileSizeLimitAndNothingStaysOnDisk() {
        String code = "import os\nchunk = b'x' * (1 << 20)\ntry:\n    with open('big', 'wb') as f:\n"
                + "        for _ in range(10 * 1024):\n            f.write(chunk)\n"
                + "finally:\n    print(os.path.realpath('big'), os.path.getsize('big'))\n";
        ExecutionResult r = sandbox.run(code, "");
        assertThat(r.status()).isEqualTo(Status.RUNTIME_ERROR);
        assertThat(r.message()).contains("File too large");
        String[] printed = r.stdout().strip().split(" ");
        assertThat(Long.parseLong(printed[1])).isLessThanOrEqualTo(LIMITS.maxFileBytes());
        assertThat(Path.of(printed[0])).doesNotExist(); // the private /tmp went with the run

        ExecutionResult sparse = sandbox.run("f = open('sparse', 'wb', buffering=0)\nf.seek(10 << 30)\nf.write(b'x')\n", "");
        assertThat(sparse.status()).isEqualTo(Status.RUNTIME_ERROR);
        assertThat(sparse.message()).contains("File too large");
    }

    @Test
    void aGigabyteOfOutputHitsTheOutputLimitAndOnlyABoundedPartIsKept() {
        ExecutionResult r = sandbox.run("import sys\nchunk = 'x' * (1 << 20)\nfor _ in range(1024):\n"
                + "    sys.stdout.write(chunk)\n    sys.stderr.write(chunk)\n", "assert True\n");
        assertThat(r.status()).isEqualTo(Status.OUTPUT_LIMIT);
        assertThat(r.message()).startsWith("output limit of 65536 bytes");
        assertThat(r.stdout().length() + r.stderr().length()).isLessThanOrEqualTo(2 * ExecutionResult.CAPTURED_BYTES);
        assertThat(r.wallTime()).isLessThan(Duration.ofSeconds(2));
    }

    @Test
    void noConnectionReachesALoopbackServer() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
                DatagramSocket udp = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            server.setSoTimeout(300);
            udp.setSoTimeout(300);
            String code = "import socket\n"
                    + "def udp():\n    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                    + "    s.sendto(b'hello', ('127.0.0.1', " + udp.getLocalPort() + "))\n    return True\n"
                    + "socket.create_connection(('127.0.0.1', " + server.getLocalPort() + "), timeout=1).sendall(b'hello')\n";
            ExecutionResult r = sandbox.run(code, "assert udp()\n");
            assertThat(r.status()).isEqualTo(Status.RUNTIME_ERROR);
            assertThat(r.message()).contains("socket.create_connection").contains("Network is unreachable");
            ExecutionResult datagram = sandbox.run(code.substring(0, code.lastIndexOf("socket.create_connection")),
                    "assert udp()\n");
            assertThat(datagram.status()).isEqualTo(Status.OK);
            assertThat(datagram.testsPassed()).isZero();
            assertThat(datagram.message()).contains("Network is unreachable");
            assertThatThrownBy(server::accept).isInstanceOf(SocketTimeoutException.class);
            assertThatThrownBy(() -> udp.receive(new DatagramPacket(new byte[16], 16))).isInstanceOf(SocketTimeoutException.class);
        }
    }

    @Test
    void killingItsParentReachesNeitherTheJvmNorTheRun() {
        long jvm = ProcessHandle.current().pid();
        String code = "import os\nfor pid in (os.getppid(), 1, " + jvm + "):\n    try:\n        os.kill(pid, 9)\n"
                + "        print(pid, 'sent')\n    except OSError as e:\n        print(pid, type(e).__name__)\nprint('still here')\n";
        ExecutionResult r = sandbox.run(code, "assert True\n");
        assertThat(r.status()).isEqualTo(Status.OK); // the shell is PID 1 of the namespace: SIGKILL from inside is ignored
        assertThat(r.stdout()).endsWith("still here\n").contains(jvm + " ProcessLookupError"); // the JVM is not in its namespace
        assertThat(r.testsPassed()).isEqualTo(1);
        ExecutionResult group = sandbox.run("import os\nos.killpg(0, 9)\n", "assert True\n");
        assertThat(group.status()).isEqualTo(Status.KILLED); // its own process group only (setsid)
        assertThat(ProcessHandle.current().isAlive()).isTrue();
        assertThat(sandbox.run("x = 1\n", "assert x == 1\n").passed()).isTrue();
    }

    @Test
    void theWeakerProcessModeKeepsTheJvmToo() {
        try (Sandbox weak = Sandbox.create(LIMITS.toBuilder().isolation(Isolation.PROCESS).build())) {
            ExecutionResult r = weak.run("import os, time\nos.kill(os.getppid(), 9)\ntime.sleep(0.5)\n", "assert True\n");
            assertThat(r.status()).isEqualTo(Status.KILLED); // its parent was the shell, not the JVM
            assertThat(ProcessHandle.current().isAlive()).isTrue();
        }
    }

    @Test
    void aDaemonThatOutlivesTheProgramDoesNotOutliveTheRun() throws Exception {
        String marker = marker();
        String daemon = "import os, sys, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
                + "        os.close(1)\n        os.close(2)\n"
                + "        os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(30)', '" + marker + "'])\n"
                + "    os._exit(0)\ntime.sleep(0.3)\nprint('parent done')\n";
        ExecutionResult r = sandbox.run(daemon, "assert True\n");
        assertThat(r.status()).isEqualTo(Status.OK);
        assertThat(r.stdout()).isEqualTo("parent done\n");
        assertThat(processesWith(marker)).isEmpty();
    }

    @Test
    void nothingIsWrittenOutsideTheWorkingDirectory(@TempDir Path runDir) throws Exception {
        String marker = marker();
        // directories the sandbox's user could write to, were the file system not read-only
        Path output = Files.createDirectories(Path.of("target", "hostile-" + marker, "output")).toAbsolutePath();
        Path model = Files.createDirectories(output.resolveSibling("model"));
        for (Path dir : List.of(output, model, output.getParent(), runDir)) {
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        }
        Path home = Path.of(System.getProperty("user.home"));
        List<Path> targets = List.of(output, model, home, runDir);
        String code = "import os, subprocess\n"
                + "for point in ('/', '" + output + "'):\n"  // a program cannot undo the read-only mounts
                + "    subprocess.run(['mount', '-o', 'remount,bind,rw', point], capture_output=True)\n"
                + "def write(d):\n    with open(os.path.join(d, 'escaped-" + marker + "'), 'w') as f:\n"
                + "        f.write('x')\n    return True\n"
                + "with open('inside', 'w') as f:\n    f.write('the working directory is writable')\n";
        StringBuilder tests = new StringBuilder("assert open('inside').read().startswith('the working')\n");
        targets.forEach(t -> tests.append("assert write('").append(t).append("')\n"));
        ExecutionResult r = sandbox.run(code, tests.toString());
        assertThat(r.status()).isEqualTo(Status.OK);
        assertThat(r.testsTotal()).isEqualTo(5);
        assertThat(r.testsPassed()).isEqualTo(1);
        // the first write refused: read-only, or not there at all when the checkout lies under /tmp (the sandbox's
        // /tmp is a private file system that hides the host's)
        assertThat(r.message()).containsAnyOf("Read-only file system", "No such file or directory");
        for (Path target : targets) {
            assertThat(target.resolve("escaped-" + marker)).doesNotExist();
        }
        Isolation.deleteTree(output.getParent());
    }

    @Test
    void theProgramSeesOnlyAMinimalEnvironmentAndItsOwnProcesses() {
        String code = "import json, os\nprint(json.dumps(sorted(os.environ)))\nprint(os.environ['HOME'], os.getcwd())\n"
                + "print(sum(p.isdigit() for p in os.listdir('/proc')))\n";
        ExecutionResult r = sandbox.run(code, "");
        assertThat(r.status()).isEqualTo(Status.OK);
        String[] lines = r.stdout().split("\n");
        assertThat(lines[0]).isEqualTo("[\"HOME\", \"LANG\", \"PATH\"]");
        assertThat(lines[1]).isEqualTo("/tmp/sandbox /tmp/sandbox");
        assertThat(Integer.parseInt(lines[2])).isEqualTo(2); // the shell (PID 1) and the interpreter
        assertThat(System.getenv()).containsKey("PATH").hasSizeGreaterThan(3); // the JVM's own is larger
    }
}
