package comlrl.reward;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.data.TaskItem;
import comlrl.utils.RewardProcessor;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The actor-critic reward call {@link JointRewarder#rewardMatrix}: which entries of {@code r[i][k]} each
 * returned value fills, and with which completions' length it is processed. The processor below adds
 * 1000 × the length it is given, so every expected number shows the completions it was processed with.
 */
class JointRewarderTest {
    /** {@code r + 1000 · length}: the length a value was processed with is readable in the result. */
    private static final RewardProcessor LENGTH_MARK = new RewardProcessor() {
        @Override
        public double apply(double reward) {
            return reward;
        }

        @Override
        public double applyWithLength(double reward, int textLength) {
            return reward + 1000.0 * textLength;
        }
    };

    private static final TaskItem ITEM = TaskItem.of(Map.of("prompt", "p"));
    // [N=2][K=3], lengths 1 2 3 and 4 5 6
    private static final List<List<String>> COMPLETIONS = List.of(List.of("a", "bb", "ccc"),
            List.of("dddd", "eeeee", "ffffff"));

    private static double[][] matrix(List<Double> returned, List<List<String>> completions) {
        RewardFunction reward = (c, items) -> returned;
        return new JointRewarder(reward, LENGTH_MARK, completions.size(), completions.get(0).size(), "IAC", false)
                .rewardMatrix(ITEM, completions, "item 0");
    }

    @Test
    void oneValueFillsEveryEntryProcessedWithEveryCompletion() {
        // 0.5 + 1000 · (1+2+3+4+5+6)
        assertThat(matrix(List.of(0.5), COMPLETIONS)).isEqualTo(new double[][] {{21000.5, 21000.5, 21000.5},
                {21000.5, 21000.5, 21000.5}});
    }

    @Test
    void kValuesFillAGenerationForEveryAgentProcessedWithThatJointResponse() {
        // v_k + 1000 · (|a_k| + |b_k|): 1 + 1000·5, 2 + 1000·7, 3 + 1000·9
        assertThat(matrix(List.of(1.0, 2.0, 3.0), COMPLETIONS)).isEqualTo(new double[][] {{5001, 7002, 9003},
                {5001, 7002, 9003}});
    }

    @Test
    void nValuesFillAnAgentsRowProcessedWithItsCompletions() {
        // v_i + 1000 · Σ_k |c_{i,k}|: 10 + 1000·6, 20 + 1000·15
        assertThat(matrix(List.of(10.0, 20.0), COMPLETIONS)).isEqualTo(new double[][] {{6010, 6010, 6010},
                {15020, 15020, 15020}});
    }

    @Test
    void kEqualToNMeansOneValuePerGeneration() {
        List<List<String>> square = List.of(List.of("a", "bb"), List.of("ccc", "dddd")); // N = K = 2
        // per generation: 1 + 1000·(1+3), 2 + 1000·(2+4); per agent would give 1 + 1000·3 in row 0
        assertThat(matrix(List.of(1.0, 2.0), square)).isEqualTo(new double[][] {{4001, 6002}, {4001, 6002}});
    }

    @Test
    void anotherCountIsRefused() {
        assertThatThrownBy(() -> matrix(List.of(1.0, 2.0, 3.0, 4.0), COMPLETIONS))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
