package comlrl.trainers.reinforce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

/** dr_grpo divides by the budget L of the agent whose samples the minibatch holds: its own max_new_tokens. */
class PerAgentDrGrpoTest {
    @Test
    void drGrpoDividesByTheAgentsOwnMaxNewTokens() {
        MAGRPOConfig args = MAGRPOConfig.builder().lossType("dr_grpo").maxNewTokensPerAgent(List.of(3, 7)).build();
        // G = 2 completions of 2 tokens, returns [1, 0]: mean baseline A = [0.5, -0.5], group scaling by
        // std_pop 0.5 gives A = [1, -1]; w_k = -A_k / (M·L·|B|) with M = 2, |B| = 1
        for (int agent = 0; agent < 2; agent++) {
            NodeSample s = new NodeSample(agent, 0, new long[] {1}, List.of(new long[] {4, 5}, new long[] {6, 7}),
                    new double[] {1.0, 0.0}, null, 0.5, 0.5, 2, "item", new boolean[2], null, null);
            double l = agent == 0 ? 3 : 7;
            double[] w = MAGRPOLoss.weights(List.of(s), args)[0];
            assertThat(w[0]).as("agent %d", agent).isCloseTo(-1.0 / (2 * l), within(1e-15));
            assertThat(w[1]).as("agent %d", agent).isCloseTo(1.0 / (2 * l), within(1e-15));
        }
    }
}
