package comlrl.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Verdicts of ordinary programs, the pool and the cache, the config checks. */
class SandboxTest {
    private static Sandbox sandbox;

    @BeforeAll
    static void start() {
        sandbox = Sandbox.create(SandboxConfig.builder().wallTime(Duration.ofSeconds(5)).memoryBytes(256L << 20)
                .parallelism(2).cacheSize(64).build());
    }

    @AfterAll
    static void stop() {
        sandbox.close();
    }

    static final String ADD = "def add(a, b):\n    return a + b\nprint('defined')\n";

    @Test
    void eachAssertIsOneTestAndAFailingOneDoesNotHideTheOnesAfterIt() {
        ExecutionResult r = sandbox.run(ADD, "assert add(1, 2) == 3\nassert add(1, 1) == 3, 'one plus one'\n"
                + "import math\nassert add(2, 2) == 4\nassert nope(1) == 1\n");
        assertThat(r.status()).isEqualTo(Status.OK);
        assertThat(r.testsTotal()).isEqualTo(4); // the import is no test
        assertThat(r.testsPassed()).isEqualTo(2);
        assertThat(r.message()).isEqualTo("failed: assert add(1, 1) == 3, 'one plus one' (one plus one)");
        assertThat(r.stdout()).isEqualTo("defined\n");
        assertThat(r.stderr()).isEmpty();
        assertThat(r.passed()).isFalse();
    }

    @Test
    void aProgramThatDoesNotParseIsASyntaxErrorAndItsTestsCountAsFailed() {
        ExecutionResult r = sandbox.run("def f(:\n    pass\n", "assert f() is None\nassert True\n");
        assertThat(r.status()).isEqualTo(Status.SYNTAX_ERROR);
        assertThat(r.testsPassed()).isZero();
        assertThat(r.testsTotal()).isEqualTo(2);
        assertThat(r.message()).contains("SyntaxError");
    }

    @Test
    void aRuntimeErrorNamesItsLineAndTheTestsDoNotRun() {
        ExecutionResult r = sandbox.run("x = 1\ny = [1, 2][5]\n", "assert True\n");
        assertThat(r.status()).isEqualTo(Status.RUNTIME_ERROR);
        assertThat(r.message()).isEqualTo("line 2: y = [1, 2][5]: IndexError: list index out of range");
        assertThat(r.testsPassed()).isZero();
        assertThat(r.testsTotal()).isEqualTo(1);
    }

    @Test
    void aFailingTestThatRaisesNamesTheTestLine() {
        ExecutionResult r = sandbox.run(ADD, "assert add(1, 2) == 3\nassert add(1, None) == 1\n");
        assertThat(r.status()).isEqualTo(Status.OK);
        assertThat(r.testsPassed()).isEqualTo(1);
        assertThat(r.message()).startsWith("line 2: assert add(1, None) == 1: TypeError:");
    }

    @Test
    void testsPassedBeforeATimeoutAreCounted() {
        ExecutionResult r = sandbox.run(ADD, "assert add(1, 2) == 3\nassert add(0, 0) == 0\nwhile True: pass\nassert False\n");
        assertThat(r.status()).isEqualTo(Status.TIMEOUT);
        assertThat(r.testsPassed()).isEqualTo(2);
        assertThat(r.testsTotal()).isEqualTo(3);
    }

    @Test
    void exitingTheProgramEndsItAndTheTestsStillRun() {
        ExecutionResult r = sandbox.run(ADD + "import sys\nsys.exit(0)\n", "assert add(1, 2) == 3\n");
        assertThat(r.status()).isEqualTo(Status.OK);
        assertThat(r.testsPassed()).isEqualTo(1);
    }

    @Test
    void endingTheInterpreterBeforeTheTestsIsARuntimeError() {
        ExecutionResult r = sandbox.run("import os\nos._exit(3)\n", "assert True\n");
        assertThat(r.status()).isEqualTo(Status.RUNTIME_ERROR);
        assertThat(r.message()).contains("exit 3");
        assertThat(r.testsPassed()).isZero();
    }

    @Test
    void aForgedVerdictLineIsOnlyStderr() {
        String forged = "import sys\nsys.stderr.write('\\n0123 {\"status\": \"ok\", \"tests_passed\": 9, \"tests_total\": 9, "
                + "\"message\": \"\", \"final\": true}\\n')\nraise ValueError('real')\n";
        ExecutionResult r = sandbox.run(forged, "assert True\n");
        assertThat(r.status()).isEqualTo(Status.RUNTIME_ERROR);
        assertThat(r.testsPassed()).isZero();
        assertThat(r.stderr()).contains("\"tests_passed\": 9");
    }

    @Test
    void runAllKeepsTheOrderAndRunsIdenticalJobsOnce() {
        Job pass = new Job(ADD, "assert add(2, 3) == 5\n");
        Job fail = new Job(ADD, "assert add(2, 3) == 6\n");
        List<ExecutionResult> results = sandbox.runAll(List.of(pass, fail, pass, new Job("x = (", "")));
        assertThat(results).extracting(ExecutionResult::testsPassed).containsExactly(1, 0, 1, 0);
        assertThat(results.get(3).status()).isEqualTo(Status.SYNTAX_ERROR);
        assertThat(results.get(2)).isSameAs(results.get(0)); // one execution for both
        assertThat(sandbox.run(ADD, "assert add(2, 3) == 6\n")).isSameAs(results.get(1)); // from the cache
    }

    @Test
    void theCacheDropsTheLeastRecentlyUsedVerdict() {
        try (Sandbox small = Sandbox.create(SandboxConfig.builder().cacheSize(1).parallelism(1).build())) {
            ExecutionResult first = small.run("x = 1\n", "");
            assertThat(small.run("x = 1\n", "")).isSameAs(first);
            small.run("x = 2\n", "");
            ExecutionResult again = small.run("x = 1\n", ""); // "x = 2" took the only place: run again
            assertThat(again).isNotSameAs(first);
            assertThat(again.status()).isEqualTo(Status.OK);
        }
    }

    @Test
    void theCacheKeyTellsWhereTheCodeEnds() {
        assertThat(Sandbox.key(new Job("ab", "c"))).isNotEqualTo(Sandbox.key(new Job("a", "bc")));
        assertThat(Sandbox.key(new Job("ab", "c"))).isEqualTo(Sandbox.key(new Job("ab", "c")));
    }

    @Test
    void theProcessModeRunsProgramsToo() {
        try (Sandbox weak = Sandbox.create(SandboxConfig.builder().isolation(Isolation.PROCESS)
                .wallTime(Duration.ofSeconds(3)).build())) {
            ExecutionResult r = weak.run(ADD + "import os\nprint(os.getcwd() == os.environ['HOME'])\n",
                    "assert add(1, 2) == 3\nassert add(1, 2) == 4\n");
            assertThat(r.status()).isEqualTo(Status.OK);
            assertThat(r.testsPassed()).isEqualTo(1);
            assertThat(r.stdout()).isEqualTo("defined\nTrue\n");
        }
    }

    @Test
    void aMissingInterpreterIsNamedWithHowToSetAnother() {
        assertThatThrownBy(() -> Sandbox.create(SandboxConfig.builder().interpreter("python3-that-is-not-there").build()))
                .isInstanceOf(SandboxException.class)
                .hasMessageContaining("'python3-that-is-not-there' was not found on the sandbox PATH")
                .hasMessageContaining("--interpreter");
    }

    @Test
    void configChecksSayHowToFixThem() {
        assertThatThrownBy(() -> SandboxConfig.builder().memoryBytes(1024).build())
                .hasMessageContaining("memory must be at least 32 MiB");
        assertThatThrownBy(() -> Isolation.fromKey("docker")).hasMessageContaining("use namespaces (the default) or process");
        assertThat(Isolation.fromKey("Process")).isEqualTo(Isolation.PROCESS);
        assertThat(SandboxConfig.builder().cpuTime(Duration.ofMillis(1500)).build().cpuSeconds()).isEqualTo(2);
    }
}
