package comlrl.trainers.actorcritic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import comlrl.trainers.TinyAgents;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The actor-critic formulas on hand-worked numbers, and the targets a multi-turn rollout records. */
class ActorCriticLossTest {
    @Test
    void tdTargetsBootstrapFromTheNextTurnsOldValueExceptOnTheLastTurn() {
        // y_0 = 1 + 0.9·0.4 = 1.36, y_1 = 0.5 + 0.9·0.6 = 1.04, y_2 = 2 (the last turn)
        assertThat(ActorCriticLoss.tdTargets(new double[] {1, 0.5, 2}, new double[] {0.2, 0.4, 0.6}, 0.9))
                .containsExactly(new double[] {1.36, 1.04, 2}, within(1e-12));
        // an episode that terminated after two turns: its second turn is the last executed one
        assertThat(ActorCriticLoss.tdTargets(new double[] {1, 0.5}, new double[] {0.2, 0.4}, 0.9))
                .containsExactly(new double[] {1.36, 0.5}, within(1e-12));
        // G_2 = 2, G_1 = 0.5 + 0.9·2 = 2.3, G_0 = 1 + 0.9·2.3 = 3.07
        assertThat(ActorCriticLoss.discountedReturns(new double[] {1, 0.5, 2}, 0.9))
                .containsExactly(new double[] {3.07, 2.3, 2}, within(1e-12));
    }

    @Test
    void anEpisodeShapesRewardsByTheKlPenaltyBeforeTargetsReturnsAndAdvantages() {
        // β = 0.5: r' = (1 − 0.5·0.4, 0.5 − 0.5·0.2, 2 − 0.5·0) = (0.8, 0.4, 2)
        // y = (0.8 + 0.9·0.4, 0.4 + 0.9·0.6, 2) = (1.16, 0.94, 2);  A = y − V_old = (0.96, 0.54, 1.4)
        // G (γ = 0.9) = (0.8 + 0.9·2.2, 0.4 + 0.9·2, 2) = (2.78, 2.2, 2);  G (γ = 1) = (3.2, 2.4, 2)
        // each value is at most five operations on numbers below 4: error below 5·4·2⁻⁵³ < 1e-14
        double[] rewards = {1, 0.5, 2};
        double[] kls = {0.4, 0.2, 0};
        double[] old = {0.2, 0.4, 0.6};
        ActorCriticLoss.Episode iac = ActorCriticLoss.episode(rewards, kls, old, 0.5, 0.9, 0.9);
        assertThat(iac.shapedRewards()).containsExactly(new double[] {0.8, 0.4, 2}, within(1e-14));
        assertThat(iac.targets()).containsExactly(new double[] {1.16, 0.94, 2}, within(1e-14));
        assertThat(iac.advantages()).containsExactly(new double[] {0.96, 0.54, 1.4}, within(1e-14));
        assertThat(iac.returns()).containsExactly(new double[] {2.78, 2.2, 2}, within(1e-14));
        ActorCriticLoss.Episode maac = ActorCriticLoss.episode(rewards, kls, old, 0.5, 0.9, 1.0);
        assertThat(maac.targets()).containsExactly(new double[] {1.16, 0.94, 2}, within(1e-14));
        assertThat(maac.returns()).containsExactly(new double[] {3.2, 2.4, 2}, within(1e-14));
    }

    @Test
    void advantagesAreNormalisedOverTheGroup() {
        // A = y − V_old = [1, 2, 3, 4]: mean 2.5, std_pop = sqrt(1.25) = 1.1180340
        double[] a = ActorCriticLoss.advantages(new double[] {1, 2, 3, 6}, new double[] {0, 0, 0, 2}, true);
        assertThat(a).containsExactly(new double[] {-1.3416408, -0.4472136, 0.4472136, 1.3416408}, within(1e-6));
        assertThat(ActorCriticLoss.advantages(new double[] {1, 2, 3, 6}, new double[] {0, 0, 0, 2}, false))
                .containsExactly(1, 2, 3, 4);
        // one sample, or no spread: not divided by a zero deviation
        assertThat(ActorCriticLoss.advantages(new double[] {3}, new double[] {1}, true)).containsExactly(2);
        assertThat(ActorCriticLoss.advantages(new double[] {2, 2}, new double[] {1, 1}, true)).containsExactly(0, 0);
    }

    @Test
    void explainedVarianceIsOneMinusTheResidualVarianceOverTheTargetVariance() {
        double[] y = {1, 2, 3, 4}; // mean 2.5, Var[y] = (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25
        // V = [1.5, 1.5, 3.5, 3.5]: y − V = [−0.5, 0.5, −0.5, 0.5], Var = 0.25: EV = 1 − 0.25/1.25 = 0.8
        assertThat(ActorCriticLoss.explainedVariance(y, new double[] {1.5, 1.5, 3.5, 3.5})).isCloseTo(0.8, within(1e-15));
        // V = y: a perfect critic explains everything
        assertThat(ActorCriticLoss.explainedVariance(y, y.clone())).isEqualTo(1.0);
        // V = a constant: y − V has y's variance, EV = 0 (a shift does not count against it)
        assertThat(ActorCriticLoss.explainedVariance(y, new double[] {7, 7, 7, 7})).isCloseTo(0.0, within(1e-15));
        // V reversed = [4, 3, 2, 1]: y − V = [−3, −1, 1, 3], Var = 5: EV = 1 − 5/1.25 = −3 (worse than the mean)
        assertThat(ActorCriticLoss.explainedVariance(y, new double[] {4, 3, 2, 1})).isCloseTo(-3.0, within(1e-15));
        // Var[y] = 0 (equal targets, or one sample): undefined
        assertThat(ActorCriticLoss.explainedVariance(new double[] {2, 2}, new double[] {1, 3})).isNaN();
        assertThat(ActorCriticLoss.explainedVariance(new double[] {2}, new double[] {1})).isNaN();
    }

    @Test
    void valueClippingTakesTheLargerErrorAroundTheOldValue() {
        // y = 1, V = 0.5, V_old = 0, ε = 0.2: plain (0.5)² = 0.25; V_clip = 0.2, (0.8)² = 0.64 → 0.64
        try (Scope s = Scope.open()) {
            Tensor plain = Tensor.ofDoubles(new double[] {0.5}, comlrl.tensor.Device.CPU).toFloat();
            assertThat(ActorCriticLoss.valueErrors(plain, new double[] {1}, new double[] {0}, null).toDoubleArray())
                    .containsExactly(new double[] {0.25}, within(1e-6));
            // gradients: the clipped branch does not move V (∂/∂V = 0); inside the range ∂/∂V = −2(y − V)
            Tensor v = Tensor.ofDoubles(new double[] {0.5, 0.1}, comlrl.tensor.Device.CPU).toFloat().requiresGrad(true);
            Tensor e = ActorCriticLoss.valueErrors(v, new double[] {1, 1}, new double[] {0, 0}, 0.2);
            assertThat(e.toDoubleArray()).containsExactly(new double[] {0.64, 0.81}, within(1e-6));
            e.sum().backward();
            assertThat(v.grad().toDoubleArray()).containsExactly(new double[] {0, -1.8}, within(1e-6));
        }
    }

    @Test
    void aMaacEpisodeBootstrapsFromTheNextJointValueAndLogsUndiscountedReturns(@TempDir Path dir) {
        Path agent = TinyAgents.create(dir.resolve("agent"), 11);
        AtomicInteger calls = new AtomicInteger();
        comlrl.reward.RewardFunction byTurn = (c, items) -> List.of(calls.getAndIncrement() % 2 == 0 ? 0.5 : 2.0);
        List<RolloutSample> seen = new ArrayList<>();
        MAACConfig config = MAACConfig.builder().numAgents(2).numTurns(2).numGenerations(1).numTrainEpochs(1)
                .maxNewTokens(4).temperature(1.0).topP(1.0).topK(0).discount(0.8).earlyTerminationThreshold(null)
                .rolloutBufferSize(8).evalInterval(0).seed(3).build();
        try (MAACTrainer t = MAACTrainer.builder().agentModel(agent.toString()).criticModel(agent.toString())
                .rewardFunc(byTurn).trainDataset(ActorCriticTrainerTest.tasks(1)).args(config).verbose(false)
                .externalTransition(ctx -> List.of("next", "next"))
                .metricsCallback(r -> {
                    seen.addAll(r);
                    return Map.of();
                }).build()) {
            t.train();
        }
        assertThat(seen).hasSize(4);
        RolloutSample a0t0 = seen.stream().filter(x -> x.agentIdx() == 0 && x.turnIdx() == 0).findFirst().orElseThrow();
        RolloutSample a0t1 = seen.stream().filter(x -> x.agentIdx() == 0 && x.turnIdx() == 1).findFirst().orElseThrow();
        RolloutSample a1t1 = seen.stream().filter(x -> x.agentIdx() == 1 && x.turnIdx() == 1).findFirst().orElseThrow();
        assertThat(a1t1.oldValue()).isEqualTo(a0t1.oldValue()); // one joint value per turn
        assertThat(a0t0.valueTarget()).isCloseTo(0.5 + 0.8 * a0t1.oldValue(), within(1e-12));
        assertThat(a0t1.valueTarget()).isEqualTo(2.0);
        assertThat(a0t0.returns()).isCloseTo(2.5, within(1e-12)); // MAAC logs the undiscounted suffix sum
    }

    @Test
    void aMultiTurnRolloutRecordsTdTargetsAndStopsEarly(@TempDir Path dir) {
        Path agent = TinyAgents.create(dir.resolve("agent"), 11);
        AtomicInteger calls = new AtomicInteger();
        // turn 1 scores 0 (below the threshold: the episode goes on), turn 2 scores 1 (above: it ends there)
        comlrl.reward.RewardFunction byTurn = (c, items) -> List.of(calls.getAndIncrement() % 2 == 0 ? 0.0 : 1.0);
        List<RolloutSample> seen = new ArrayList<>();
        IACConfig config = IACConfig.builder().numAgents(2).numTurns(3).numGenerations(1).numTrainEpochs(1)
                .maxNewTokens(4).temperature(1.0).topP(1.0).topK(0).discount(0.9).earlyTerminationThreshold(0.5)
                .rolloutBufferSize(8).evalInterval(0).seed(3).build();
        try (IACTrainer t = IACTrainer.builder().agentModel(agent.toString()).criticModel(agent.toString())
                .rewardFunc(byTurn).trainDataset(ActorCriticTrainerTest.tasks(1)).args(config).verbose(false)
                .externalTransition(ctx -> List.of("go on", "go on"))
                .metricsCallback(r -> {
                    seen.addAll(r);
                    return Map.of();
                }).build()) {
            t.train();
            assertThat(t.envStep()).isEqualTo(2); // two turns executed
        }
        assertThat(seen).hasSize(4);
        for (int agentIdx = 0; agentIdx < 2; agentIdx++) {
            int a = agentIdx;
            List<RolloutSample> mine = seen.stream().filter(x -> x.agentIdx() == a).toList();
            assertThat(mine).extracting(RolloutSample::turnIdx).containsExactly(0, 1);
            RolloutSample first = mine.get(0);
            RolloutSample second = mine.get(1);
            assertThat(first.valueTarget()).isCloseTo(0 + 0.9 * second.oldValue(), within(1e-12));
            assertThat(second.valueTarget()).isEqualTo(1.0);
            assertThat(first.returns()).isCloseTo(0 + 0.9 * 1.0, within(1e-12));
            assertThat(first.advantage()).isCloseTo(first.valueTarget() - first.oldValue(), within(1e-12));
            assertThat(second.prompt()).contains("go on");
        }
    }
}
