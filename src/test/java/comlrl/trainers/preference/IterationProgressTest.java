package comlrl.trainers.preference;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The iterative trainers' line after each iteration: the whole run's elapsed time and time left. */
class IterationProgressTest {
    @Test
    void theTimeLeftIsTheTimePerIterationSoFarTimesTheIterationsLeft() {
        // 2 iterations in 120 s: 60 s each, 3 left -> 180 s
        assertThat(IterativeTrainer.overall(120, 2, 3)).isEqualTo("elapsed 2:00, ETA 3:00 for 3 more iterations");
        // a resumed run counts only its own iterations: 1 in 45 s, 1 left
        assertThat(IterativeTrainer.overall(45, 1, 1)).isEqualTo("elapsed 0:45, ETA 0:45 for 1 more iteration");
        assertThat(IterativeTrainer.overall(3725, 4, 0)).isEqualTo("all iterations done in 1:02:05");
    }
}
