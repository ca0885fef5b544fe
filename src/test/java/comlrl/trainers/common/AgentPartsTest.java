package comlrl.trainers.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import comlrl.checkpoint.TrainerCheckpoint;
import comlrl.distributed.HeldAgents;
import comlrl.distributed.RankWork;
import comlrl.distributed.TwoRanks;
import comlrl.generation.CausalLm;
import comlrl.generation.GenerationSettings;
import comlrl.generation.SamplingConfig;
import comlrl.model.DecoderLm;
import comlrl.model.LoraAdapter;
import comlrl.model.LoraConfig;
import comlrl.tensor.AdamW;
import comlrl.tensor.Device;
import comlrl.trainers.TinyAgents;
import comlrl.trainers.preference.MADPOConfig;
import comlrl.utils.DdpSplit;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The per-agent pieces every trainer shares: the checkpoint parts of the agents a process holds
 * ({@link TrainerCheckpoint#agentParts}) and their generation settings from a config
 * ({@link AgentGeneration#resolve}), on a team of three with the middle agent held elsewhere; and a
 * LoRA agent's shape ({@link TrainerCheckpoint#shapeOf}).
 */
class AgentPartsTest {
    @TempDir
    static Path models;
    static CausalLm first;
    static CausalLm third;
    static List<CausalLm> team;
    static List<AdamW> optimizers;

    @BeforeAll
    static void load() {
        first = CausalLm.load(TinyAgents.create(models.resolve("a"), 3).toString(), null, Device.CPU);
        third = CausalLm.load(TinyAgents.create(models.resolve("c"), 5).toString(), null, Device.CPU);
        team = Arrays.asList(first, null, third); // agent 1: another process's (the agents split)
        optimizers = Arrays.asList(new AdamW(first.model().parameters(), 1e-3, 0.01), null,
                new AdamW(third.model().parameters(), 1e-3, 0.01));
    }

    @AfterAll
    static void close() {
        optimizers.stream().filter(o -> o != null).forEach(AdamW::close);
        first.close();
        third.close();
    }

    @Test
    @SuppressWarnings("unchecked")
    void aLoraAgentsShapeHoldsItsAdapterSettingsButNotItsDropout() {
        LoraConfig settings = new LoraConfig(2, 4, 0.1, List.of("v_proj", "q_proj"), true);
        try (LoraAdapter adapter = LoraAdapter.init(first.model().config(), settings, first.model().dtype(), Device.CPU, 1);
                DecoderLm agent = first.model().withAdapter(adapter)) {
            assertThat((Map<String, Object>) TrainerCheckpoint.shapeOf(agent).get("lora")).containsExactly(entry("r", 2),
                    entry("alpha", 4.0), entry("target_modules", List.of("q_proj", "v_proj")), entry("use_rslora", true));
        }
    }

    @Test
    void checkpointPartsAreTheHeldAgentsWeightsAndOptimizersUnderTheirOwnIndex(@TempDir Path dir) throws Exception {
        // rank 0 of two in the agents split holds agents 0 and 2 (i mod 2); rank 1's agent 1 is not loaded here
        List<Future<List<String>>> ranks = TwoRanks.run(ctx -> {
            if (ctx.rank() != 0) {
                return List.of();
            }
            RankWork work = RankWork.of(ctx, DdpSplit.AGENTS, 3);
            var parts = TrainerCheckpoint.agentParts(HeldAgents.of(team, work), HeldAgents.of(optimizers, work));
            parts.get("agent_2").save(dir);
            parts.get("optimizer_0").save(dir);
            return List.copyOf(parts.keySet());
        });
        assertThat(ranks.get(0).get()).containsExactly("agent_0", "optimizer_0", "agent_2", "optimizer_2");
        assertThat(dir.resolve("agent_2")).isDirectory();
        assertThat(dir.resolve("optimizer_0.safetensors")).isRegularFile();
        // agent_2/ holds agent 2's weights (seed 5), not agent 0's (seed 3): they differ byte for byte
        first.model().save(dir.resolve("first"), CausalLm.MAX_SHARD_BYTES);
        third.model().save(dir.resolve("third"), CausalLm.MAX_SHARD_BYTES);
        assertThat(Files.readAllBytes(dir.resolve("agent_2/model.safetensors")))
                .isEqualTo(Files.readAllBytes(dir.resolve("third/model.safetensors")))
                .isNotEqualTo(Files.readAllBytes(dir.resolve("first/model.safetensors")));
    }

    @Test
    void generationSettingsComeFromTheConfigsSamplingFieldsPerHeldAgent() {
        MADPOConfig args = MADPOConfig.builder().temperature(0.7).topP(0.8).topK(3).maxNewTokens(5).build();
        for (int i : new int[] {0, 2}) {
            GenerationSettings.Resolved resolved = AgentGeneration.resolve(i, team.get(i), args, 4);
            SamplingConfig s = resolved.sampling();
            assertThat(s.temperature()).isEqualTo(0.7);
            assertThat(s.topP()).isEqualTo(0.8);
            assertThat(s.topK()).isEqualTo(3);
            assertThat(s.maxNewTokens()).isEqualTo(5);
            assertThat(s.numReturnSequences()).isEqualTo(4);
            assertThat(resolved.settings().get("temperature").source()).isEqualTo("run config");
        }
    }
}
