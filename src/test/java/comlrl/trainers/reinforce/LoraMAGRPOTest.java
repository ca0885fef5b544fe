package comlrl.trainers.reinforce;

import static comlrl.trainers.reinforce.ReinforceFixtures.bytes;
import static comlrl.trainers.reinforce.ReinforceFixtures.fast;
import static comlrl.trainers.reinforce.ReinforceFixtures.lengthDifference;
import static comlrl.trainers.reinforce.ReinforceFixtures.snapshot;
import static comlrl.trainers.reinforce.ReinforceFixtures.tasks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.checkpoint.Checkpoints;
import comlrl.generation.CausalLm;
import comlrl.model.LoraAdapter;
import comlrl.model.LoraConfig;
import comlrl.tensor.Device;
import comlrl.trainers.TinyAgents;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * MAGRPO with LoRA agents: one shared frozen base and one batched team rollout give what separate
 * bases and separate rollouts give; only adapters change; save_model writes PEFT adapter
 * directories (or merged models); checkpoints hold adapters and resume bit for bit (dropout on);
 * saved adapters are a starting point.
 */
class LoraMAGRPOTest {
    @TempDir
    static Path models;
    static Path base;
    static final LoraConfig LORA = new LoraConfig(4, 8, 0.0, List.of("all-linear"), false);

    @BeforeAll
    static void writeBase() {
        base = TinyAgents.create(models.resolve("base"), 3);
    }

    static MAGRPOTrainer.Builder builder(int epochs, LoraConfig lora, Boolean share) {
        MAGRPOConfig config = fast(MAGRPOConfig.builder()).numTrainEpochs(epochs).rolloutBufferSize(2)
                .agentLearningRate(3e-2).loggingSteps(1).evalInterval(2).build();
        return MAGRPOTrainer.builder().agentModel(base.toString()).numAgents(2).lora(lora).agentsShareBase(share)
                .rewardFunc(lengthDifference()).trainDataset(tasks(3)).evalDataset(tasks(2)).args(config).verbose(false);
    }

    static List<Map<String, float[]>> adapters(MAGRPOTrainer t) {
        return t.agents().stream().map(ReinforceFixtures::snapshot).toList();
    }

    /** A reward that records every call's completions (per agent, in call order) and scores with {@code inner}. */
    static final class Recorded implements comlrl.reward.RewardFunction {
        final comlrl.reward.RewardFunction inner = lengthDifference();
        final List<List<List<String>>> calls = java.util.Collections.synchronizedList(new ArrayList<>());

        @Override
        public List<Double> score(List<List<String>> agentCompletions, List<comlrl.data.TaskItem> items) {
            calls.add(agentCompletions.stream().map(List::copyOf).toList());
            return inner.score(agentCompletions, items);
        }
    }

    /**
     * One epoch over 3 items with an update after every 2: the third item's rollout and the
     * evaluation sample from updated adapters (the team batch must not reuse a stale snapshot).
     *
     * <p>What can be equal, and why it is compared exactly:
     * <ul>
     *   <li>The sampled completions: each agent's rows draw from the same per-row seeds in both runs;
     *       only float rounding differs (the team batch is padded to the longest prompt of all agents
     *       and its adapters run as one batched product). A draw could flip only if its uniform fell
     *       within that rounding (~1e-9 of the CDF, measured) of a token boundary; the closest of this
     *       run's ~120 draws is ~2e-6 away on AVX2 and AVX-512 kernels alike. Asserted identical.</li>
     *   <li>Everything after the rollout: given the same completions, both runs score, backpropagate
     *       and step each agent's own view (its adapter over the base) with the same kernels on the
     *       same shapes; the base being shared or copied changes no arithmetic. So the rewards and the
     *       trained adapters are compared bit for bit: any tolerance would only hide a wrong adapter
     *       (AdamW's first steps move every element by about ±lr = ±3e-2 whatever the gradient's size).</li>
     * </ul>
     */
    @Test
    void aSharedBaseWithOneTeamRolloutTrainsAsSeparateBasesWithSeparateRollouts() {
        List<Map<String, Double>> shared;
        List<Map<String, float[]>> sharedAdapters;
        Recorded sharedRollouts = new Recorded();
        Map<String, float[]> baseBefore;
        try (MAGRPOTrainer t = builder(1, LORA, null).rewardFunc(sharedRollouts).build()) {
            assertThat(t.agents().get(0).model().base()).isSameAs(t.agents().get(1).model().base());
            baseBefore = snapshot(new CausalLm("base", t.agents().get(0).model().base(), t.agents().get(0).tokenizer(),
                    t.agents().get(0).generationConfig()));
            t.train();
            shared = List.copyOf(t.logHistory());
            sharedAdapters = adapters(t);
            Map<String, float[]> baseAfter = snapshot(new CausalLm("base", t.agents().get(0).model().base(),
                    t.agents().get(0).tokenizer(), t.agents().get(0).generationConfig()));
            baseBefore.forEach((k, v) -> assertThat(baseAfter.get(k)).as(k).containsExactly(v)); // the base is frozen
            assertThat(sharedAdapters.get(0).keySet()).allMatch(k -> k.contains(".lora_"));
        }
        Recorded separateRollouts = new Recorded();
        try (MAGRPOTrainer t = builder(1, LORA, false).rewardFunc(separateRollouts).build()) {
            assertThat(t.agents().get(0).model().base()).isNotSameAs(t.agents().get(1).model().base());
            t.train();
            assertThat(separateRollouts.calls).as("every rollout and evaluation sampled the same completions")
                    .isEqualTo(sharedRollouts.calls);
            List<Map<String, Double>> separate = t.logHistory();
            assertThat(separate).hasSameSizeAs(shared);
            for (int e = 0; e < shared.size(); e++) {
                for (String key : shared.get(e).keySet()) {
                    if (key.contains("reward") || key.contains("length") || key.equals("env_step")) {
                        assertThat(separate.get(e).get(key)).as("%s at entry %d", key, e).isEqualTo(shared.get(e).get(key));
                    }
                }
            }
            List<Map<String, float[]>> separateAdapters = adapters(t);
            for (int i = 0; i < 2; i++) {
                for (String k : sharedAdapters.get(i).keySet()) {
                    assertThat(separateAdapters.get(i).get(k)).as("%s of agent %d", k, i)
                            .containsExactly(sharedAdapters.get(i).get(k));
                }
            }
            // the adapters trained: B moved away from zero
            assertThat(sharedAdapters.get(0).entrySet().stream().filter(e -> e.getKey().contains("lora_B"))
                    .anyMatch(e -> Arrays.stream(toDoubles(e.getValue())).anyMatch(x -> x != 0))).isTrue();
        }
    }

    static double[] toDoubles(float[] f) {
        double[] d = new double[f.length];
        for (int i = 0; i < f.length; i++) {
            d[i] = f[i];
        }
        return d;
    }

    @Test
    void saveModelWritesPeftAdapterDirectoriesOrMergedModelsAndSavedAdaptersAreAStartingPoint(@TempDir Path out) {
        List<Map<String, float[]>> trained;
        try (MAGRPOTrainer t = builder(1, LORA, null).build()) {
            t.train();
            trained = adapters(t);
            t.saveModel(out.resolve("peft"));
        }
        Path agent0 = out.resolve("peft/agent_0");
        assertThat(agent0.resolve(LoraAdapter.CONFIG_FILE)).isRegularFile();
        assertThat(agent0.resolve(LoraAdapter.WEIGHTS_FILE)).isRegularFile();
        assertThat(agent0.resolve("model.safetensors")).doesNotExist();
        assertThat(agent0.resolve("tokenizer.json")).isRegularFile();
        assertThat(LoraAdapter.readPeftConfig(agent0)).isEqualTo(LORA);
        // continue from the saved adapters: the agents start where the saved ones ended
        try (MAGRPOTrainer t = builder(1, LORA, null)
                .loraAdapters(List.of(agent0, out.resolve("peft/agent_1"))).build()) {
            List<Map<String, float[]>> loaded = adapters(t);
            for (int i = 0; i < 2; i++) {
                for (String k : trained.get(i).keySet()) {
                    assertThat(loaded.get(i).get(k)).as(k).containsExactly(trained.get(i).get(k));
                }
            }
        }
        // the run's lora.autocast reaches adapters loaded from directories (it is no field of theirs)
        try (MAGRPOTrainer t = builder(1, LORA.withAutocast(true), null)
                .loraAdapters(List.of(agent0, out.resolve("peft/agent_1"))).build()) {
            assertThat(t.agents()).allSatisfy(a -> assertThat(a.model().adapter().config().autocast()).isTrue());
        }
        // merged: full models whose forward equals base + adapter
        try (MAGRPOTrainer t = builder(1, LORA, null).mergeAdaptersOnSave(true).build()) {
            t.train();
            t.saveModel(out.resolve("merged"));
            try (CausalLm merged = CausalLm.load(out.resolve("merged/agent_1").toString(), null, Device.CPU);
                    comlrl.tensor.Scope s = comlrl.tensor.Scope.open();
                    comlrl.tensor.GradMode g = comlrl.tensor.GradMode.noGrad()) {
                assertThat(merged.model().adapter()).isNull();
                long[] ids = merged.encode("Say hello.");
                comlrl.tensor.Tensor x = comlrl.tensor.Tensor.ofLongs(ids, Device.CPU, 1, ids.length);
                long[] p = new long[ids.length];
                for (int i = 0; i < p.length; i++) {
                    p[i] = i;
                }
                comlrl.tensor.Tensor pos = comlrl.tensor.Tensor.ofLongs(p, Device.CPU, 1, ids.length);
                double diff = merged.model().forward(x, pos, null, null, 0).logits()
                        .sub(t.agents().get(1).model().forward(x, pos, null, null, 0).logits()).abs().max().item();
                assertThat(diff).isLessThan(1e-4);
            }
        }
    }

    @Test
    void checkpointsHoldAdaptersAndResumeBitForBitWithDropout(@TempDir Path checkpoints) throws Exception {
        LoraConfig dropout = new LoraConfig(4, 8, 0.3, List.of("q_proj", "v_proj", "down_proj"), false);
        List<Map<String, byte[]>> straight = new ArrayList<>();
        List<Map<String, Double>> straightLog;
        try (MAGRPOTrainer t = builder(2, dropout, null).build()) {
            t.train();
            t.agents().forEach(a -> straight.add(bytes(a)));
            straightLog = List.copyOf(t.logHistory());
        }
        try (MAGRPOTrainer t = builder(1, dropout, null).build()) {
            t.train(checkpoints, 1);
        }
        Path c1 = checkpoints.resolve("checkpoint-1");
        assertThat(c1.resolve("agent_0/" + LoraAdapter.WEIGHTS_FILE)).isRegularFile();
        assertThat(c1.resolve("agent_0/model.safetensors")).doesNotExist(); // the frozen base is not repeated
        assertThat(c1.resolve("agent_0/lora_state.json")).isRegularFile();
        assertThat(Files.size(c1.resolve("optimizer_0.safetensors"))).isLessThan(Files.size(base.resolve("model.safetensors")));
        assertThat(Checkpoints.readMetadata(c1).toString()).contains("lora");
        // resumed with lora.autocast set: a setting of the run, no part of the adapters' shape (and a no-op on
        // this float32 base, so the run still matches bit for bit)
        try (MAGRPOTrainer t = builder(2, dropout.withAutocast(true), null).build()) {
            t.train(checkpoints, 1, c1);
            for (int i = 0; i < 2; i++) {
                Map<String, byte[]> now = bytes(t.agents().get(i));
                straight.get(i).forEach((k, v) -> assertThat(now.get(k)).as(k).isEqualTo(v));
            }
            List<Map<String, Double>> log = t.logHistory();
            assertThat(log.get(log.size() - 1)).isEqualTo(straightLog.get(straightLog.size() - 1));
        }
        // another adapter shape cannot resume this checkpoint
        try (MAGRPOTrainer t = builder(2, LORA, null).build()) {
            assertThatThrownBy(() -> t.train(checkpoints, 1, c1)).hasMessageContaining("another model shape");
        }
    }

    @Test
    void loraSettingsThatCannotWorkFailBeforeAnyModelLoads() throws Exception {
        assertThatThrownBy(() -> builder(1, null, true).build()).hasMessageContaining("agents_share_base: true needs LoRA");
        assertThatThrownBy(() -> builder(1, LORA, true).agentModel(null)
                .agents(List.of(base.toString(), models.resolve("other").toString())).build())
                .hasMessageContaining("same base model");
        assertThatThrownBy(() -> builder(1, LORA, null).loraAdapters(List.of(base)).build())
                .hasMessageContaining("lora_adapters has 1 entries for 2");
        // a saved adapter we cannot load as it was trained: refused by name, before the base (here missing) loads
        Path dora = models.resolve("dora");
        try (LoraAdapter a = LoraAdapter.init(comlrl.model.ModelConfig.load(base), LORA, comlrl.tensor.DType.F32,
                Device.CPU, 1)) {
            a.savePeft(dora, base.toString());
        }
        Path cfg = dora.resolve(LoraAdapter.CONFIG_FILE);
        Files.writeString(cfg, Files.readString(cfg).replace("\"use_dora\" : false", "\"use_dora\" : true"));
        assertThatThrownBy(() -> builder(1, LORA, null).agentModel(models.resolve("nowhere").toString())
                .loraAdapters(Arrays.asList(null, dora)).build())
                .hasMessageContaining("lora_adapters[1]: " + cfg + ": use_dora = true is not supported");
    }
}
