package comlrl.trainers.common;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.distributed.AgentExecutor;
import comlrl.distributed.RankWork;
import comlrl.generation.CausalLm;
import comlrl.generation.Completion;
import comlrl.generation.GenerationSettings;
import comlrl.generation.SamplingConfig;
import comlrl.model.LoraAdapter;
import comlrl.model.LoraConfig;
import comlrl.tensor.Device;
import comlrl.trainers.TinyAgents;
import comlrl.trainers.reinforce.MAGRPOConfig;
import java.nio.file.Path;
import java.util.List;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * LoRA agents on one shared base sample as one team only when their settings are equal: with
 * per-agent {@code max_new_tokens} and {@code temperature} that differ, the rollout falls back to
 * each agent's own generation, so agent i samples exactly what it samples alone, with its own cap.
 */
class PerAgentTeamGenerationTest {
    @TempDir
    static Path models;

    @Test
    void loraAgentsWithDifferentSettingsFallBackToTheirOwnGenerations() {
        try (CausalLm base = CausalLm.load(TinyAgents.create(models.resolve("base"), 31).toString(), null, Device.CPU);
                LoraAdapter a0 = LoraAdapter.init(base.model().config(), new LoraConfig(2, 4, 0, List.of("q_proj"), false),
                        base.model().dtype(), Device.CPU, 1);
                LoraAdapter a1 = LoraAdapter.init(base.model().config(), new LoraConfig(2, 4, 0, List.of("q_proj"), false),
                        base.model().dtype(), Device.CPU, 2);
                CausalLm v0 = base.withAdapter(a0, false);
                CausalLm v1 = base.withAdapter(a1, false);
                AgentExecutor executor = AgentExecutor.create(2, false)) {
            List<CausalLm> team = List.of(v0, v1);
            MAGRPOConfig same = MAGRPOConfig.builder().maxNewTokens(7).temperature(1.0).topP(1.0).topK(0).build();
            MAGRPOConfig own = MAGRPOConfig.builder().maxNewTokensPerAgent(List.of(3, 7))
                    .temperaturePerAgent(List.of(0.7, 1.3)).topP(1.0).topK(0).build();
            IntFunction<SamplingConfig> sameSampling = sampling(team, same);
            IntFunction<SamplingConfig> ownSampling = sampling(team, own);
            assertThat(JointRollout.teamable(team, sameSampling)).isTrue();
            assertThat(JointRollout.teamable(team, ownSampling)).isFalse();

            List<List<long[]>> prompts = List.of(List.of(new long[] {5, 6, 7}, new long[] {8, 9}),
                    List.of(new long[] {10, 11, 12, 13}, new long[] {14}));
            long[] seeds = {101, 202};
            List<List<List<Completion>>> rollout = JointRollout.generate(team, executor, prompts, ownSampling, seeds,
                    RankWork.single(2));
            int longest1 = 0;
            for (int i = 0; i < 2; i++) {
                List<List<Completion>> alone = team.get(i).generator().generate(prompts.get(i), ownSampling.apply(i), seeds[i]);
                for (int p = 0; p < 2; p++) {
                    for (int j = 0; j < 2; j++) {
                        Completion c = rollout.get(i).get(p).get(j);
                        assertThat(c.tokenIds()).as("agent %d prompt %d sample %d", i, p, j)
                                .containsExactly(alone.get(p).get(j).tokenIds());
                        assertThat(c.length()).isBetween(1, own.maxNewTokens(i));
                        longest1 = i == 1 ? Math.max(longest1, c.length()) : longest1;
                    }
                }
            }
            assertThat(longest1).isGreaterThan(3); // agent 1 is not held to agent 0's cap
        }
    }

    /** Each agent's sampling as {@link AgentGeneration#resolve} gives it from {@code args} (2 per prompt). */
    private static IntFunction<SamplingConfig> sampling(List<CausalLm> team, MAGRPOConfig args) {
        List<GenerationSettings.Resolved> settings = java.util.stream.IntStream.range(0, team.size())
                .mapToObj(i -> AgentGeneration.resolve(i, team.get(i), args, 2)).toList();
        return i -> settings.get(i).sampling();
    }
}
