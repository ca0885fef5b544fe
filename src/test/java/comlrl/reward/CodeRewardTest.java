package comlrl.reward;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import comlrl.data.TaskItem;
import comlrl.sandbox.Isolation;
import comlrl.sandbox.SandboxConfig;
import comlrl.sandbox.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Hand-worked values of every level and bonus of {@link CodeReward} (formulas in its class comment; default
 * weights 0.4 aux, 0.6 main, 0.5 syntax, 1.0 tests, 0.5 uses aux, 1.0 not a wrapper, −0.5 dropped value),
 * on small Python programs run in the sandbox.
 */
class CodeRewardTest {
    /** Sums of at most seven terms of exact decimals: a few ulps. */
    private static final double EPS = 1e-12;
    private static final String PROMPT = "from typing import List\n\ndef add_all(xs: List[int]) -> int:\n"
            + "    \"\"\"Return the sum of xs.\"\"\"\n";
    /** Four asserts and a trivial one (not counted). */
    private static final String TEST = "METADATA = {'author': 'comlrl'}\n\n\ndef check(candidate):\n"
            + "    assert candidate([1, 2]) == 3\n    assert candidate([]) == 0\n    assert candidate([5]) == 5\n"
            + "    assert candidate([-1, 1]) == 0\n    assert True, 'not a test'\n";
    private static final TaskItem TASK = TaskItem.of(Map.of("prompt", PROMPT, "test", TEST, "entry_point", "add_all"));
    private static final String AUX = "def aux(xs):\n    return sum(xs)\n";
    /** Uses aux's value and does more than return it; List needs the prompt's import. */
    private static final String MAIN = "def add_all(xs: List[int]) -> int:\n    total = aux(xs)\n    if not xs:\n"
            + "        return 0\n    return total\n";

    private static CodeReward reward;

    @BeforeAll
    static void sandbox() {
        reward = new CodeReward(CodeReward.Weights.DEFAULT, config());
    }

    @AfterAll
    static void close() {
        reward.close();
    }

    private static SandboxConfig config() {
        return SandboxConfig.builder().wallTime(Duration.ofSeconds(3)).cpuTime(Duration.ofSeconds(3)).build();
    }

    private static CodeReward.Breakdown score(String aux, String main) {
        return reward.breakdowns(List.of(List.of(aux), List.of(main)), List.of(TASK)).get(0);
    }

    @Test
    void everyLevelAndTheFullCollaborationBonusGiveFour() {
        CodeReward.Breakdown b = score(AUX, MAIN);
        assertThat(b.definitions()).isCloseTo(0.4 + 0.6, within(EPS));
        assertThat(b.syntax()).isEqualTo(0.5);
        assertThat(b.testsPassed()).isEqualTo(4);
        assertThat(b.testsTotal()).isEqualTo(4); // "assert True" of check() is not counted
        assertThat(b.tests()).isEqualTo(1.0);
        assertThat(b.bonus()).isEqualTo(0.5 + 1.0);
        assertThat(b.total()).isCloseTo(4.0, within(EPS));
        assertThat(b.solved()).isTrue();
        assertThat(b.levelsPassed()).isEqualTo(3);
        assertThat(reward.rewardRange()).containsExactly(0.0, 4.0);
    }

    @Test
    void aMereWrapperOfAuxEarnsTheUsageBonusOnly() {
        // 0.4 + 0.6 + 0.5 + 1.0 (4/4) + 0.5 (uses aux), no 1.0: main only returns aux(...)
        assertThat(score(AUX, "def add_all(xs):\n    \"\"\"Sum.\"\"\"\n    return aux(xs)\n").total())
                .isCloseTo(3.0, within(EPS));
        // v = aux(...); return v is a wrapper too
        assertThat(score(AUX, "def add_all(xs):\n    s = aux(xs)\n    return s\n").total()).isCloseTo(3.0, within(EPS));
    }

    @Test
    void droppingAuxsValueCostsHalfAPoint() {
        String main = "def add_all(xs):\n    aux(xs)\n    t = 0\n    for x in xs:\n        t += x\n    return t\n";
        // 0.4 + 0.6 + 0.5 + 1.0 + 0.5 + 1.0 (three statements: not a wrapper) − 0.5 (bare aux(xs))
        CodeReward.Breakdown b = score(AUX, main);
        assertThat(b.bonus()).isCloseTo(1.0, within(EPS));
        assertThat(b.total()).isCloseTo(3.5, within(EPS));
    }

    @Test
    void theTestLevelIsTheFractionOfAssertsPassed() {
        // len(xs): [1,2] → 2 ≠ 3, [] → 0 ok, [5] → 1 ≠ 5, [-1,1] → 2 ≠ 0: 1 of 4; aux unused: no bonus
        CodeReward.Breakdown b = score(AUX, "def add_all(xs):\n    return len(xs)\n");
        assertThat(b.testsPassed()).isEqualTo(1);
        assertThat(b.tests()).isCloseTo(0.25, within(EPS));
        assertThat(b.bonus()).isZero();
        assertThat(b.total()).isCloseTo(0.4 + 0.6 + 0.5 + 0.25, within(EPS));
        assertThat(b.message()).contains("candidate([1, 2]) == 3");
    }

    @Test
    void noBonusWithoutAPassingTest() {
        // aux(xs) + 1 fails all four asserts: 0.4 + 0.6 + 0.5, though main uses aux
        CodeReward.Breakdown b = score(AUX, "def add_all(xs):\n    return aux(xs) + 1\n");
        assertThat(b.testsPassed()).isZero();
        assertThat(b.total()).isCloseTo(1.5, within(EPS));
    }

    @Test
    void noBonusWithoutAnAuxFunction() {
        // aux missing: no 0.4, and main's call fails with a NameError: 0.6 + 0.5 + 0 tests
        CodeReward.Breakdown b = score("I would rather not.", MAIN);
        assertThat(b.definitions()).isEqualTo(0.6);
        assertThat(b.total()).isCloseTo(1.1, within(EPS));
        // an aux without a return earns no 0.4 but is part of the program
        CodeReward.Breakdown noReturn = score("def aux(xs):\n    print(xs)\n", "def add_all(xs):\n    return sum(xs)\n");
        assertThat(noReturn.total()).isCloseTo(0.6 + 0.5 + 1.0, within(EPS));
    }

    @Test
    void aSyntaxErrorStopsAfterLevelOne() {
        CodeReward.Breakdown b = score(AUX, "def add_all(xs):\n    return (xs\n");
        assertThat(b.status()).isEqualTo(Status.SYNTAX_ERROR);
        assertThat(b.levelsPassed()).isEqualTo(1);
        assertThat(b.total()).isCloseTo(1.0, within(EPS));
    }

    @Test
    void aMissingMainStopsAtLevelOneAndRunsNothing() {
        CodeReward.Breakdown b = score(AUX, "def solve(xs):\n    return sum(xs)\n");
        assertThat(b.total()).isCloseTo(0.4, within(EPS));
        assertThat(b.status()).isNull();
        assertThat(score("", "no code at all").total()).isZero();
        // main without a return statement is not defined
        assertThat(score(AUX, "def add_all(xs):\n    pass\n").total()).isCloseTo(0.4, within(EPS));
    }

    @Test
    void aTimeoutScoresZeroAtLevelThreeAndTrainingGoesOn() {
        // the first assert passes, the second loops forever: killed at the 3 s wall time → level 3 gives 0
        String main = "def add_all(xs):\n    while not xs:\n        pass\n    return aux(xs)\n";
        CodeReward.Breakdown b = score(AUX, main);
        assertThat(b.status()).isEqualTo(Status.TIMEOUT);
        assertThat(b.total()).isCloseTo(0.4 + 0.6 + 0.5, within(EPS));
    }

    @Test
    void markdownFencesAndProseAroundTheFunctionsAreIgnored() {
        String aux = "Here is the helper:\n```python\ndef aux(xs):\n    return sum(xs)\n```\nIt sums.";
        String main = "```python\n" + MAIN + "```\n\nThis calls aux.";
        assertThat(score(aux, main).total()).isCloseTo(4.0, within(EPS));
    }

    @Test
    void allJointResponsesOfACallRunTogetherInOrder() {
        List<String> auxes = new ArrayList<>();
        List<String> mains = new ArrayList<>();
        for (int k = 0; k < 6; k++) {
            auxes.add(AUX);
            mains.add(k % 2 == 0 ? MAIN : "def add_all(xs):\n    return len(xs)\n");
        }
        List<Double> rewards = reward.score(List.of(auxes, mains), List.of(TASK));
        assertThat(rewards).hasSize(6);
        for (int k = 0; k < 6; k++) {
            assertThat(rewards.get(k)).isCloseTo(k % 2 == 0 ? 4.0 : 1.75, within(EPS));
        }
    }

    @Test
    void weightsComeFromTheConfig() {
        try (CodeReward custom = CodeReward.fromConfig(new java.util.LinkedHashMap<>(Map.of("type", "code",
                "weights", Map.of("tests", 2.0, "not_wrapper", 0), "sandbox", Map.of("timeout_s", 3))))) {
            // 0.4 + 0.6 + 0.5 + 2.0 · 1 + 0.5 + 0 (not-wrapper weight 0)
            CodeReward.Breakdown b = custom.breakdowns(List.of(List.of(AUX), List.of(MAIN)), List.of(TASK)).get(0);
            assertThat(b.total()).isCloseTo(4.0, within(EPS));
            assertThat(custom.rewardRange()).containsExactly(0.0, 0.4 + 0.6 + 0.5 + 2.0 + 0.5);
        }
        assertThatThrownBy(() -> CodeReward.fromConfig(new java.util.LinkedHashMap<>(Map.of("type", "code",
                "weights", Map.of("test", 2.0))))).hasMessageContaining("unknown key 'test'");
        assertThatThrownBy(() -> CodeReward.fromConfig(new java.util.LinkedHashMap<>(Map.of("type", "code",
                "timeout_s", 3)))).hasMessageContaining("sandbox: {timeout_s: 10}");
        assertThatThrownBy(() -> new CodeReward.Weights(0.4, 0.6, 0.5, -1, 0.5, 1, 0.5))
                .hasMessageContaining("weights.tests must be a finite number >= 0");
        RewardFunction viaRegistry = RewardFunctions.fromConfig(Map.of("type", "code", "sandbox",
                Map.of("isolation", Isolation.NAMESPACES.key())), null);
        assertThat(viaRegistry).isInstanceOf(CodeReward.class);
        ((CodeReward) viaRegistry).close();
    }

    @Test
    void mbppTasksNameTheirFunctionInTheTestsOnly() {
        TaskItem mbpp = TaskItem.of(Map.of("prompt", "Write a function to add up a list.",
                "test_list", List.of("assert total_of([1, 2]) == 3", "assert set(total_of([])) == 0"),
                "test_imports", List.of("import math"), "code", "def total_of(xs):\n    return sum(xs)\n"));
        assertThat(CodePrograms.entryPoint(mbpp)).isEqualTo("total_of");
        // main's own name is bound to total_of; set(0) fails the second assert: 0 + 0.6 + 0.5 + 1/2
        CodeReward.Breakdown b = reward.breakdowns(List.of(List.of(""), List.of("def my_sum(xs):\n    return sum(xs)\n")),
                List.of(mbpp)).get(0);
        assertThat(b.testsTotal()).isEqualTo(2);
        assertThat(b.total()).isCloseTo(0.6 + 0.5 + 0.5, within(EPS));
    }

    @Test
    void runAllExecutesTextThatDefinesNoFunctionWithoutChangingTheReward() {
        try (CodeReward all = new CodeReward(CodeReward.Weights.DEFAULT, config(), true)) {
            CodeReward.Breakdown b = all.breakdowns(List.of(List.of(AUX), List.of("x = (")), List.of(TASK)).get(0);
            assertThat(b.total()).isCloseTo(0.4, within(EPS));
            assertThat(b.status()).isEqualTo(Status.SYNTAX_ERROR);
            assertThat(all.stats().get("executions")).isEqualTo(1.0);
        }
    }

    @Test
    void humanEvalChecksWithAssertsOnlyInsideLoopsBecomeOneTest() {
        TaskItem loop = TaskItem.of(Map.of("test", "def check(candidate):\n    for x in range(3):\n"
                + "        assert candidate(x) == x\n", "entry_point", "same"));
        assertThat(CodePrograms.tests(loop, "same")).endsWith("assert check(same) is None\n");
        assertThat(CodePrograms.tests(TASK, "add_all")).contains("\ncandidate = add_all\nassert candidate([1, 2]) == 3\n")
                .doesNotContain("\nassert True");
    }

    @Test
    void passAtKIsOneMinusTheChanceThatKDrawsAllFail() {
        assertThat(CodeReward.passAtK(4, 1, 1)).isCloseTo(0.25, within(EPS));            // c / n
        assertThat(CodeReward.passAtK(4, 1, 2)).isCloseTo(1 - 3.0 / 6, within(EPS));      // 1 − C(3,2)/C(4,2)
        assertThat(CodeReward.passAtK(5, 2, 2)).isCloseTo(1 - 3.0 / 10, within(EPS));     // 1 − C(3,2)/C(5,2)
        assertThat(CodeReward.passAtK(3, 2, 2)).isEqualTo(1.0);                            // n − c < k
        assertThat(CodeReward.passAtK(5, 0, 3)).isZero();
        assertThatThrownBy(() -> CodeReward.passAtK(2, 1, 3)).hasMessageContaining("1 <= k <= n");
    }

    @Test
    void theCodeEnvironmentsEvaluationMetricsArePassAtOnePerTurn() {
        // two items: the first solved in turn 2 only, the second never (the wrong sum fails every assert)
        String wrong = "def add_all(xs: List[int]) -> int:\n    return aux(xs) + 1\n";
        List<List<List<String>>> completions = List.of(
                List.of(List.of(AUX, AUX), List.of(AUX, AUX)),
                List.of(List.of(wrong, MAIN), List.of(wrong, wrong)));
        List<Map<String, Double>> rows = comlrl.env.CodeEnvironment.evalLogger(reward)
                .log(completions, List.of(TASK, TASK), List.of("", ""));
        assertThat(rows.get(0)).containsEntry("code_pass_at_1_turn_1", 0.0).containsEntry("code_pass_at_1_turn_2", 1.0)
                .containsEntry("code_pass_at_1", 1.0).containsEntry("code_tests_passed", 1.0)
                .containsEntry("code_reward", 4.0).containsEntry("code_levels_passed", 3.0);
        // the wrong main still defines, parses and runs: 0.4 + 0.6 + 0.5, no asserts, no bonus
        assertThat(rows.get(1)).containsEntry("code_pass_at_1_turn_2", 0.0).containsEntry("code_pass_at_1", 0.0)
                .containsEntry("code_tests_passed", 0.0);
        assertThat(rows.get(1).get("code_reward")).isCloseTo(1.5, within(EPS));
        // pass@1 of the team: the mean over the items
        assertThat(comlrl.trainers.EvalAggregator.mean().aggregate(rows, 2)).containsEntry("code_pass_at_1", 0.5);
    }

    @Test
    void severalSamplesPerTaskGivePassAtKPerTaskAndItsMeanOverTasks() {
        String wrong = "def add_all(xs: List[int]) -> int:\n    return aux(xs) + 1\n";
        // four samples of two tasks: the first solved by sample 2 only, the second by samples 0, 1 and 3
        String[][] mains = {{wrong, MAIN}, {wrong, MAIN}, {MAIN, wrong}, {wrong, MAIN}};
        List<List<List<List<String>>>> samples = new ArrayList<>();
        for (String[] m : mains) {
            samples.add(List.of(List.of(List.of(AUX), List.of(AUX)), List.of(List.of(m[0]), List.of(m[1]))));
        }
        List<Map<String, Double>> rows = comlrl.env.CodeEnvironment.evalLogger(reward)
                .logSamples(samples, List.of(TASK, TASK), List.of("", ""));
        // c = 1 of n = 4: pass@1 = 1/4, pass@2 = 1 − C(3,2)/C(4,2) = 1/2, pass@3 = 1 − C(3,3)/C(4,3) = 3/4, pass@4 = 1
        assertThat(rows.get(0).keySet()).containsExactly("code_reward", "code_levels_passed", "code_tests_passed",
                "code_pass_at_1", "code_pass_at_2", "code_pass_at_3", "code_pass_at_4");
        assertThat(rows.get(0).get("code_pass_at_1")).isCloseTo(0.25, within(EPS));
        assertThat(rows.get(0).get("code_pass_at_2")).isCloseTo(0.5, within(EPS));
        assertThat(rows.get(0).get("code_pass_at_3")).isCloseTo(0.75, within(EPS));
        assertThat(rows.get(0).get("code_pass_at_4")).isEqualTo(1.0);
        // the means over the samples: (4.0 + 3 · 1.5) / 4 and (1 + 0 + 0 + 0) / 4 of the asserts
        assertThat(rows.get(0).get("code_reward")).isCloseTo(2.125, within(EPS));
        assertThat(rows.get(0).get("code_tests_passed")).isCloseTo(0.25, within(EPS));
        // c = 3: pass@1 = 3/4, pass@2 = 1 (n − c < k)
        assertThat(rows.get(1).get("code_pass_at_1")).isCloseTo(0.75, within(EPS));
        assertThat(rows.get(1).get("code_pass_at_2")).isEqualTo(1.0);
        assertThat(rows.get(1).get("code_reward")).isCloseTo(3.375, within(EPS));
        Map<String, Double> team = comlrl.trainers.EvalAggregator.mean().aggregate(rows, 1);
        assertThat(team.get("code_pass_at_1")).isCloseTo(0.5, within(EPS));
        assertThat(team.get("code_pass_at_2")).isCloseTo(0.75, within(EPS));
        // a chosen list of k; one larger than the samples is refused naming the setting
        assertThat(comlrl.env.CodeEnvironment.evalLogger(reward, List.of(1, 3)).logSamples(samples, List.of(TASK, TASK),
                List.of("", "")).get(0).keySet()).containsExactly("code_reward", "code_levels_passed",
                "code_tests_passed", "code_pass_at_1", "code_pass_at_3");
        assertThatThrownBy(() -> comlrl.env.CodeEnvironment.evalLogger(reward, List.of(5)).logSamples(samples,
                List.of(TASK, TASK), List.of("", ""))).hasMessageContaining("eval_num_generations >= 5");
    }
}
