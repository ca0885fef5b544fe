package comlrl.rl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** EnvSteps, TrainLogGate and EvalSchedule. */
class BookkeepingTest {
    @Test
    void envStepsCountJointActionsPerNode() {
        // single-turn aligned run, 3 items, G = 4, N = 2: 3 nodes × 4 = 12
        EnvSteps steps = new EnvSteps();
        for (int item = 0; item < 3; item++) {
            steps.advanceNode(JointMode.ALIGNED, 4, 2);
        }
        assertThat(steps.current()).isEqualTo(12);
        // one cross node, G = 2, N = 3 → +8
        assertThat(steps.advanceNode(JointMode.CROSS, 2, 3)).isEqualTo(20);
        assertThat(new EnvSteps(7).advance(0)).isEqualTo(7);
        assertThatThrownBy(() -> steps.advance(-1)).hasMessageContaining("negative");
        assertThatThrownBy(() -> new EnvSteps(-1)).hasMessageContaining("negative");
    }

    @Test
    void logGateKeepsTheMinimumGap() {
        TrainLogGate gate = new TrainLogGate(50);
        assertThat(gate.lastLoggedStep()).isEmpty();
        assertThat(gate.shouldLog(4)).isTrue();      // first call always logs
        assertThat(gate.shouldLog(8)).isFalse();     // 8 − 4 = 4 < 50
        assertThat(gate.shouldLog(53)).isFalse();    // 49 < 50
        assertThat(gate.shouldLog(54)).isTrue();     // 50 ≥ 50
        assertThat(gate.shouldLog(54)).isFalse();    // second agent at the same step
        assertThat(gate.shouldLog(104)).isTrue();
        assertThat(gate.lastLoggedStep()).hasValue(104);
    }

    @Test
    void logGateWithSmallIntervalLogsEverything() {
        for (int interval : new int[] {1, 0, -3}) {
            TrainLogGate gate = new TrainLogGate(interval);
            assertThat(gate.shouldLog(4)).isTrue();
            assertThat(gate.shouldLog(4)).isTrue();
            assertThat(gate.shouldLog(5)).isTrue();
        }
    }

    @Test
    void logGateRestoresFromACheckpoint() {
        TrainLogGate gate = new TrainLogGate(10);
        gate.restore(100);
        assertThat(gate.shouldLog(105)).isFalse();
        assertThat(gate.shouldLog(110)).isTrue();
        assertThat(gate.loggingSteps()).isEqualTo(10);
    }

    @Test
    void evalSchedule() {
        assertThat(EvalSchedule.shouldEvaluate(0, 16)).isTrue();    // before item 0
        assertThat(EvalSchedule.shouldEvaluate(15, 16)).isFalse();
        assertThat(EvalSchedule.shouldEvaluate(16, 16)).isTrue();
        assertThat(EvalSchedule.shouldEvaluate(32, 16)).isTrue();
        assertThat(EvalSchedule.shouldEvaluate(0, 0)).isFalse();    // manual only
        assertThat(EvalSchedule.shouldEvaluate(5, 1)).isTrue();
    }

    @Test
    void stats() {
        // x = [1, 2, 3, 6]: sum 12, mean 3, max 6, std_pop = sqrt((4+1+0+9)/4) = sqrt(3.5)
        double[] x = {1, 2, 3, 6};
        assertThat(Stats.sum(x)).isEqualTo(12);
        assertThat(Stats.mean(x)).isEqualTo(3);
        assertThat(Stats.max(x)).isEqualTo(6);
        assertThat(Stats.populationStd(x)).isEqualTo(Math.sqrt(3.5));
        assertThatThrownBy(() -> Stats.mean(new double[0])).hasMessageContaining("empty");
    }
}
