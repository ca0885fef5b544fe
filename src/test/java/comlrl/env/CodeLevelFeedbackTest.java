package comlrl.env;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.data.TaskItem;
import comlrl.reward.CodeReward;
import comlrl.sandbox.SandboxConfig;
import comlrl.trainers.TransitionContext;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link CodeLevelFeedback}: the next turn's prompts carry the first failing assert. */
class CodeLevelFeedbackTest {
    private static final TaskItem TASK = TaskItem.of(Map.of("prompt", "def add_all(xs):\n    \"\"\"Sum xs.\"\"\"\n",
            "entry_point", "add_all", "test", "def check(candidate):\n    assert candidate([]) == 0\n"
                    + "    assert candidate([1, 2]) == 3\n    assert candidate([4]) == 4\n"));

    private static List<String> next(CodeReward reward, String aux, String main) {
        return new CodeLevelFeedback(reward).next(new TransitionContext(TASK.getString("prompt"), List.of(aux, main), 2,
                List.of(List.of(), List.of()), List.of(List.of(), List.of()), TASK));
    }

    @Test
    void theFirstFailingAssertAndTheLevelsReachedAreFedBack() {
        try (CodeReward reward = new CodeReward(CodeReward.Weights.DEFAULT,
                SandboxConfig.builder().wallTime(Duration.ofSeconds(3)).build())) {
            // len(xs): [] → 0 passes, [1, 2] → 2 fails first, [4] → 1 fails
            List<String> prompts = next(reward, "def aux(xs):\n    return sum(xs)\n", "def add_all(xs):\n    return len(xs)\n");
            assertThat(prompts).hasSize(2);
            for (String p : prompts) {
                assertThat(p).contains("Problem:\ndef add_all(xs):").contains("- syntax: ok\n")
                        .contains("- tests: 1 of 3 passed\n")
                        .contains("- first failure: failed: assert candidate([1, 2]) == 3\n");
            }
            assertThat(prompts.get(0)).contains("- aux: defined\n").contains("Revise aux(...)");
            assertThat(prompts.get(1)).contains("- aux: your function does not call it\n")
                    .contains("Revise add_all(...)").contains("return len(xs)");

            List<String> broken = next(reward, "", "def add_all(xs):\n    return (xs\n");
            assertThat(broken.get(0)).contains("- aux: not defined with a return statement\n")
                    .contains("- syntax: error: ").doesNotContain("- tests:");
            List<String> missing = next(reward, "", "no code");
            assertThat(missing.get(1)).contains("- add_all: not defined with a return statement\n")
                    .doesNotContain("- syntax");
        }
    }
}
