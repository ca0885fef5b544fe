package comlrl.reward;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import comlrl.data.TaskItem;
import comlrl.sandbox.SandboxConfig;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Hand-worked values of {@link CoderTesterReward} (formulas in its class comment; default weights: coder 0.6
 * defined, 0.5 syntax, 1.0 × hidden tests passed; tester 0.4 written, 1.0 × valid on the reference, 0.5
 * rejects the stub, 1.0 agrees with the hidden tests on the coder), on small programs run in the sandbox.
 */
class CoderTesterRewardTest {
    /** Sums of at most seven exact decimals and one third: a few ulps. */
    private static final double EPS = 1e-12;
    /** Three hidden asserts; the reference is sum(xs). */
    private static final TaskItem TASK = TaskItem.of(Map.of("prompt", "def add_all(xs):\n    \"\"\"Return the sum of xs.\"\"\"\n",
            "canonical_solution", "    return sum(xs)\n", "entry_point", "add_all", "test",
            "def check(candidate):\n    assert candidate([1, 2]) == 3\n    assert candidate([]) == 0\n"
                    + "    assert candidate([5]) == 5\n"));
    private static final String RIGHT = "```python\ndef add_all(xs):\n    return sum(xs)\n```";
    /** Fails every hidden assert. */
    private static final String OFF_BY_ONE = "def add_all(xs):\n    return sum(xs) + 1\n";
    /** Passes two of the three hidden asserts (not the empty list). */
    private static final String EMPTY_WRONG = "def add_all(xs):\n    return sum(xs) if xs else 1\n";
    private static final String GOOD_TESTS = "Here are my tests:\n```python\nassert add_all([1, 2]) == 3\n"
            + "assert add_all([]) == 0\n```\n";

    private static CoderTesterReward reward;

    @BeforeAll
    static void sandbox() {
        reward = new CoderTesterReward(CoderTesterReward.Weights.DEFAULT,
                SandboxConfig.builder().wallTime(Duration.ofSeconds(3)).cpuTime(Duration.ofSeconds(3)).build(), false);
    }

    @AfterAll
    static void close() {
        reward.close();
    }

    private static CoderTesterReward.Breakdown score(String coder, String tester) {
        return reward.breakdowns(List.of(List.of(coder), List.of(tester)), List.of(TASK)).get(0);
    }

    @Test
    void aRightCoderAndAValidDiscriminatingTesterEarnFive() {
        CoderTesterReward.Breakdown b = score(RIGHT, GOOD_TESTS);
        assertThat(b.coder()).isCloseTo(0.6 + 0.5 + 1.0, within(EPS));
        assertThat(b.codeTestsPassed()).isEqualTo(3);
        assertThat(b.solved()).isTrue();
        assertThat(b.testsWritten()).isEqualTo(2);
        assertThat(b.testsValidOnReference()).isEqualTo(2);
        assertThat(b.testsDefined()).isEqualTo(0.4);
        assertThat(b.testsValid()).isEqualTo(1.0);
        assertThat(b.catchesStub()).isEqualTo(0.5); // None == 3 fails
        assertThat(b.agrees()).isEqualTo(1.0);      // the tests accept the coder, who passes the hidden ones
        assertThat(b.total()).isCloseTo(5.0, within(EPS));
        assertThat(reward.rewardRange()).containsExactly(0.0, 5.0);
    }

    @Test
    void aTesterWhoseTestsRejectAWrongCoderAgreesWithTheHiddenTests() {
        CoderTesterReward.Breakdown b = score(OFF_BY_ONE, GOOD_TESTS);
        // coder: 0.6 + 0.5 + 0/3; tester: 0.4 + 1.0 + 0.5 + 1.0 (rejects the coder, as the hidden tests do)
        assertThat(b.coder()).isCloseTo(1.1, within(EPS));
        assertThat(b.tester()).isCloseTo(2.9, within(EPS));
        assertThat(b.solved()).isFalse();
        assertThat(b.message()).contains("failed: assert candidate([1, 2]) == 3");
    }

    @Test
    void testsThatMissTheCodersBugDoNotAgree() {
        CoderTesterReward.Breakdown b = score(EMPTY_WRONG, "assert add_all([1, 2]) == 3\n");
        // coder: 0.6 + 0.5 + 2/3; tester: 0.4 + 1.0 + 0.5, no agreement (accepts a coder the hidden tests reject)
        assertThat(b.codeTestsPassed()).isEqualTo(2);
        assertThat(b.coder()).isCloseTo(1.1 + 2.0 / 3, within(EPS));
        assertThat(b.tester()).isCloseTo(1.9, within(EPS));
        assertThat(b.agrees()).isZero();
    }

    @Test
    void anInvalidAssertCostsItsShareAndTheGatedParts() {
        // 1 of 2 asserts holds on the reference: 0.4 + 1.0 · 1/2; not valid, so neither stub nor agreement
        CoderTesterReward.Breakdown b = score(RIGHT, "assert add_all([1, 2]) == 4\nassert add_all([]) == 0\n");
        assertThat(b.testsValidOnReference()).isEqualTo(1);
        assertThat(b.tester()).isCloseTo(0.9, within(EPS));
        assertThat(b.total()).isCloseTo(3.0, within(EPS));
    }

    @Test
    void aTautologyIsValidButCatchesNothing() {
        String tautology = "assert add_all([1]) == add_all([1])\n";
        // the stub passes it (None == None): 0.4 + 1.0, agreement only when the coder is right
        assertThat(score(RIGHT, tautology).tester()).isCloseTo(0.4 + 1.0 + 1.0, within(EPS));
        assertThat(score(OFF_BY_ONE, tautology).tester()).isCloseTo(0.4 + 1.0, within(EPS));
    }

    @Test
    void onlyTheTestersTopLevelAssertsOnTheEntryPointAndImportsRun() {
        String tester = "    import math\n    def add_all(xs):\n        return 0\n\n    assert add_all([]) == 0\n"
                + "    assert 1 + 1 == 2\n    print(add_all([1]))\n    assert add_all(\n        [2, 2]) == 4\n";
        assertThat(CodePrograms.writtenTests(tester, "add_all"))
                .isEqualTo("import math\nassert add_all([]) == 0\nassert add_all(\n    [2, 2]) == 4\n");
        // its own add_all (returning 0) is dropped, so the stub is rejected: 0.4 + 1.0 + 0.5 + 1.0
        assertThat(score(RIGHT, tester).tester()).isCloseTo(2.9, within(EPS));
        assertThat(score(RIGHT, "assert 1 + 1 == 2\nThe function adds.").tester()).isZero();
        assertThat(score(RIGHT, "assert add_all([1) == 1\n").tester()).isZero(); // does not parse
    }

    @Test
    void anAssertWhoseClosingBracketIsAtColumnZeroIsKeptWhole() {
        String tester = "assert add_all([\n    1,\n    2,\n]) == 3  # ( in a comment\nassert add_all(['(']) is not None\n"
                + "print(add_all([\n1]))\nassert add_all([5]) == 5\n";
        assertThat(CodePrograms.writtenTests(tester, "add_all")).isEqualTo("assert add_all([\n    1,\n    2,\n]) == 3  "
                + "# ( in a comment\nassert add_all(['(']) is not None\nassert add_all([5]) == 5\n");
    }

    @Test
    void aCoderWithoutTheFunctionOrWithASyntaxErrorEarnsTheTesterNoAgreement() {
        // coder: nothing; tester: 0.4 + 1.0 + 0.5
        CoderTesterReward.Breakdown prose = score("I would sum the list.", GOOD_TESTS);
        assertThat(prose.coder()).isZero();
        assertThat(prose.tester()).isCloseTo(1.9, within(EPS));
        // defined (it has a return) but does not parse: 0.6 only; the tester as above
        CoderTesterReward.Breakdown broken = score("def add_all(xs):\n    return sum(xs\n", GOOD_TESTS);
        assertThat(broken.coder()).isCloseTo(0.6, within(EPS));
        assertThat(broken.total()).isCloseTo(2.5, within(EPS));
    }

    @Test
    void jointResponsesOfACallAreScoredInOrderAndWeightsComeFromTheConfig() {
        List<Double> scores = reward.score(List.of(List.of(RIGHT, OFF_BY_ONE), List.of(GOOD_TESTS, GOOD_TESTS)),
                List.of(TASK));
        assertThat(scores.get(0)).isCloseTo(5.0, within(EPS));
        assertThat(scores.get(1)).isCloseTo(4.0, within(EPS));
        try (CoderTesterReward doubled = (CoderTesterReward) RewardFunctions.fromConfig(Map.of("type", "coder_tester",
                "weights", Map.of("agrees", 2.0, "code_tests", 3.0), "sandbox", Map.of("timeout_s", 3)), null)) {
            assertThat(doubled.weights().max()).isCloseTo(0.6 + 0.5 + 3.0 + 0.4 + 1.0 + 0.5 + 2.0, within(EPS));
            assertThat(doubled.score(List.of(List.of(OFF_BY_ONE), List.of(GOOD_TESTS)), List.of(TASK)).get(0))
                    .isCloseTo(1.1 + 0.4 + 1.0 + 0.5 + 2.0, within(EPS));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        assertThatThrownBy(() -> CoderTesterReward.fromConfig(Map.of("type", "coder_tester", "weights",
                Map.of("aux_defined", 1.0)))).hasMessageContaining("unknown key 'aux_defined'");
    }

    @Test
    void tasksWithoutAReferenceOrAnEntryPointAreRefused() {
        TaskItem noReference = TaskItem.of(Map.of("prompt", "def f():\n", "entry_point", "f", "test", "assert f() == 1\n"));
        assertThatThrownBy(() -> reward.score(List.of(List.of(RIGHT), List.of(GOOD_TESTS)), List.of(noReference)))
                .hasMessageContaining("canonical_solution");
        TaskItem mbpp = TaskItem.of(Map.of("prompt", "Add.", "code", "def f(x):\n    return x\n", "test_list",
                List.of("assert f(1) == 1")));
        assertThatThrownBy(() -> reward.score(List.of(List.of(RIGHT), List.of(GOOD_TESTS)), List.of(mbpp)))
                .hasMessageContaining("entry_point");
    }
}
