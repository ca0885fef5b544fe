package comlrl.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

class BenchCommandTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void theBlasEntryNamesOpenBlasKernelsWhenTheEnvironmentForcesThem() {
        assertThat(BenchCommand.blasDescription(name -> null)).isEqualTo("openblas (kernels by CPU)");
        assertThat(BenchCommand.blasDescription(name -> " ")).isEqualTo("openblas (kernels by CPU)");
        assertThat(BenchCommand.blasDescription(name -> name.equals("OPENBLAS_CORETYPE") ? "Haswell" : null))
                .isEqualTo("openblas (OPENBLAS_CORETYPE=Haswell)");
    }

    @Test
    void theHugePagesEntrySaysWhetherFreshMemoryComesInHugePages() {
        assertThat(BenchCommand.hugePagesDescription(null, name -> null)).isEqualTo("unknown");
        assertThat(BenchCommand.hugePagesDescription("always", name -> null)).isEqualTo("always");
        assertThat(BenchCommand.hugePagesDescription("never", name -> "glibc.malloc.hugetlb=1")).isEqualTo("never");
        assertThat(BenchCommand.hugePagesDescription("madvise", name -> null))
                .isEqualTo("madvise, not requested (glibc.malloc.hugetlb unset)");
        assertThat(BenchCommand.hugePagesDescription("madvise", name -> "glibc.malloc.check=0:glibc.malloc.hugetlb=0"))
                .isEqualTo("madvise, not requested (glibc.malloc.hugetlb=0)");
        assertThat(BenchCommand.hugePagesDescription("madvise", name -> name.equals("GLIBC_TUNABLES")
                ? "glibc.malloc.check=0:glibc.malloc.hugetlb=1" : null))
                .isEqualTo("madvise, requested (glibc.malloc.hugetlb=1)");
    }

    /** Each round's ratio pairs that round's two runs: a host that slows down between rounds does not mix them. */
    @Test
    void roundRatiosPairEachRoundsRuns() {
        List<java.util.Map<String, Object>> lora = List.of(java.util.Map.of("gen_tokens_per_s", 160.0),
                java.util.Map.of("gen_tokens_per_s", 120.0), java.util.Map.of("gen_tokens_per_s", 150.0));
        List<java.util.Map<String, Object>> full = List.of(java.util.Map.of("gen_tokens_per_s", 80.0),
                java.util.Map.of("gen_tokens_per_s", 50.0), java.util.Map.of("gen_tokens_per_s", 100.0));
        assertThat(BenchCommand.roundRatios(lora, full, "gen_tokens_per_s")).containsExactly(2.0, 2.4, 1.5);
        assertThat(org.assertj.core.api.Assertions.catchThrowable(
                () -> BenchCommand.roundRatios(lora, full.subList(0, 2), "gen_tokens_per_s")))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @Tag("slow")
    void loraComparesFullAndLoraAgentsEachInItsOwnJvm() throws Exception {
        CliTest.Result r = CliTest.run("bench", "--shape", "tiny", "--lora", "4", "--agents", "3", "--generations", "2",
                "--prompt-len", "8", "--new-tokens", "4", "--warmup", "0", "--steps", "1", "--json");
        assertThat(r.code()).as(r.err()).isZero();
        JsonNode o = JSON.readTree(r.out().trim());
        assertThat(o.get("lora_r").asInt()).isEqualTo(4);
        assertThat(o.get("lora_alpha").asDouble()).isEqualTo(8.0);
        assertThat(o.get("lora_targets")).hasSize(7);
        for (String config : new String[] {"full", "lora"}) {
            JsonNode c = o.get(config);
            assertThat(c.get("config").asText()).isEqualTo(config);
            assertThat(c.get("others_cpu_share").asDouble()).isBetween(0.0, 1.0);
            assertThat(c.get("agents").asInt()).isEqualTo(3);
            for (String key : BenchCommand.LORA_KEYS) {
                assertThat(c.get(key).asDouble()).as(config + " " + key).isPositive();
                assertThat(o.get("ratios").get(key).asDouble()).as("ratio " + key).isPositive();
            }
        }
        assertThat(o.get("lora").get("team_generation").asBoolean()).isTrue();
        assertThat(o.get("full").get("team_generation").asBoolean()).isFalse();
        assertThat(o.get("gen_ratio_by_round")).hasSize(1); // one round: the ratio of the medians
        assertThat(o.get("gen_ratio_by_round").get(0).asDouble()).isEqualTo(o.get("ratios").get("gen_tokens_per_s").asDouble());
        // rank 4 over all 7 projections of 2 layers: 4·(in + out) each, against every weight of a full agent
        assertThat(o.get("lora").get("trainable_parameters").asLong()).isEqualTo(8192);
        assertThat(o.get("ratios").get("trainable_parameters").asDouble()).isLessThan(0.1);
        assertThat(o.get("ratios").get("optimizer_state_mib").asDouble()).isLessThan(0.1);
        assertThat(o.get("lora").get("weights_mib").asDouble()).isLessThan(o.get("full").get("weights_mib").asDouble());
        JsonNode goals = o.get("goals");
        assertThat(goals.get("peak_rss_mib_ratio_at_most").asDouble()).isEqualTo(0.45);
        assertThat(goals.get("gen_tokens_per_s_ratio_at_least").asDouble()).isEqualTo(2.0);
        assertThat(goals.has("peak_rss_mib_met")).isTrue();
        assertThat(goals.has("gen_tokens_per_s_met")).isTrue();
    }

    /**
     * {@code --memory-trace} prints each phase's resident size and peak, in order, and the result's
     * peak is still the run's (the trace resets the process's mark after each phase).
     */
    @Test
    void memoryTracePrintsEveryPhaseAndTheResultKeepsTheRunsPeak() throws Exception {
        CliTest.Result r = CliTest.run("bench", "--shape", "tiny", "--agents", "1", "--generations", "2",
                "--prompt-len", "8", "--new-tokens", "4", "--warmup", "0", "--steps", "1", "--lora-config", "full",
                "--memory-trace");
        assertThat(r.code()).as(r.err()).isZero();
        java.util.regex.Matcher m = java.util.regex.Pattern
                .compile("memory: (.+?) +resident +([0-9]+) MiB, phase peak +([0-9]+) MiB").matcher(r.err());
        java.util.List<String> phases = new java.util.ArrayList<>();
        double highest = 0;
        while (m.find()) {
            phases.add(m.group(1));
            highest = Math.max(highest, Double.parseDouble(m.group(3)));
        }
        assertThat(phases).containsExactly("agents loaded", "load", "before generation, step 0", "generation",
                "scoring agent 0", "step agent 0");
        String[] out = r.out().trim().split("\n");
        JsonNode o = JSON.readTree(out[out.length - 1]);
        assertThat(o.get("peak_rss_mib").asDouble()).isGreaterThanOrEqualTo(highest - 1); // printed rounded
    }

    @Test
    @Tag("slow")
    void loraOnlyMeasuresTheTeamWithoutTheFullAgents() throws Exception {
        CliTest.Result r = CliTest.run("bench", "--shape", "tiny", "--lora", "4", "--lora-only", "--agents", "2",
                "--generations", "2", "--prompt-len", "8", "--new-tokens", "4", "--warmup", "0", "--steps", "1", "--json");
        assertThat(r.code()).as(r.err()).isZero();
        JsonNode o = JSON.readTree(r.out().trim());
        assertThat(o.has("full")).isFalse();
        assertThat(o.has("ratios")).isFalse();
        assertThat(o.get("agents").asInt()).isEqualTo(2);
        assertThat(o.get("lora").get("config").asText()).isEqualTo("lora");
        assertThat(o.get("lora").get("trainable_parameters").asLong()).isEqualTo(8192);
    }

    /**
     * {@code --generation-only}: generation is measured, and nothing of a training step runs (no
     * scoring or AdamW phase in the trace, their times zero, no optimizer state counted); the whole-step
     * measurements are refused beside it.
     */
    @Test
    void generationOnlyMeasuresGenerationAndNoTrainingStep() throws Exception {
        CliTest.Result r = CliTest.run("bench", "--shape", "tiny", "--agents", "2", "--generations", "2",
                "--prompt-len", "8", "--new-tokens", "4", "--warmup", "0", "--steps", "2", "--lora", "4",
                "--lora-config", "lora", "--generation-only", "--memory-trace");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.err()).contains("memory: generation").doesNotContain("scoring agent").doesNotContain("step agent");
        String[] out = r.out().trim().split("\n");
        JsonNode o = JSON.readTree(out[out.length - 1]);
        assertThat(o.get("generation_only").asBoolean()).isTrue();
        assertThat(o.get("team_generation").asBoolean()).isTrue();
        assertThat(o.get("gen_tokens_per_s").asDouble()).isPositive();
        assertThat(o.get("score_ms").asDouble()).isZero();
        assertThat(o.get("optim_ms").asDouble()).isZero();
        assertThat(o.get("optimizer_state_mib").asDouble()).isZero();
        assertThat(o.get("gradients_mib").asDouble()).isZero();
        CliTest.Result refused = CliTest.run("bench", "--shape", "tiny", "--generation-only", "--compare-pytorch");
        assertThat(refused.code()).isEqualTo(1);
        assertThat(refused.err()).contains("--generation-only").contains("--compare-pytorch");
    }

    /**
     * {@code --sampling}: the presets and KEY=VALUE lists become the draw's settings (a field dropped
     * on the way would draw differently), the run reports them, and a bad one fails before any model
     * is written.
     */
    @Test
    void samplingSettingsReachTheDrawAndABadOneFailsFirst() throws Exception {
        comlrl.generation.SamplingConfig qwen = BenchSampling.parse("qwen2.5").config(32, 4);
        assertThat(List.of(qwen.temperature(), qwen.topK(), qwen.topP(), qwen.processing().repetitionPenalty()))
                .containsExactly(0.7, 20, 0.8, 1.05);
        assertThat(qwen.maxNewTokens()).isEqualTo(32);
        assertThat(qwen.numReturnSequences()).isEqualTo(4);
        comlrl.generation.SamplingConfig plain = BenchSampling.parse("plain").config(8, 2);
        assertThat(plain.topK()).isNull();
        assertThat(plain.topP()).isNull();
        assertThat(plain.processing().isNone()).isTrue();
        assertThat(BenchSampling.parse("top_p=0.9, repetition_penalty=1.2")).isEqualTo(new BenchSampling(1.0, 0, 0.9, 1.2));
        assertThat(BenchSampling.parse(BenchSampling.QWEN25.spec())).isEqualTo(BenchSampling.QWEN25);
        CliTest.Result r = CliTest.run("bench", "--shape", "tiny", "--agents", "1", "--generations", "2", "--prompt-len",
                "8", "--new-tokens", "4", "--warmup", "0", "--steps", "1", "--sampling", "qwen2.5", "--json");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(JSON.readTree(r.out().trim()).get("sampling").asText())
                .isEqualTo("temperature=0.7,top_k=20,top_p=0.8,repetition_penalty=1.05");
        for (String bad : new String[] {"top_q=1", "top_p=1.5", "top_k=x"}) {
            CliTest.Result refused = CliTest.run("bench", "--shape", "tiny", "--sampling", bad);
            assertThat(refused.code()).as(bad).isEqualTo(1);
            assertThat(refused.err()).as(bad).contains("--sampling").doesNotContain("Exception");
        }
    }

    @Test
    void loraRefusesTheFullAgentOnlyMeasurements() {
        CliTest.Result only = CliTest.run("bench", "--shape", "tiny", "--lora-only");
        assertThat(only.code()).isEqualTo(1);
        assertThat(only.err()).contains("--lora-only needs --lora R");
        CliTest.Result r = CliTest.run("bench", "--shape", "tiny", "--lora", "4", "--roofline");
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.err()).contains("--roofline").contains("without --lora");
        CliTest.Result bad = CliTest.run("bench", "--shape", "tiny", "--lora", "0");
        assertThat(bad.code()).isEqualTo(1);
        assertThat(bad.err()).contains("rank R >= 1");
    }

    /** {@code bench --processes N --json} on the tiny shape (2 agents, G=4, agents split): its rows. */
    private static JsonNode processesBench(int processes, int warmup, int steps) throws Exception {
        CliTest.Result r = CliTest.run("bench", "--shape", "tiny", "--processes", Integer.toString(processes), "--agents",
                "2", "--generations", "4", "--prompt-len", "8", "--new-tokens", "4", "--warmup", Integer.toString(warmup),
                "--steps", Integer.toString(steps), "--ddp-split", "agents", "--json");
        assertThat(r.code()).as(r.err()).isZero();
        return JSON.readTree(r.out().trim());
    }

    /**
     * The default run's check of {@code --processes}: one child JVM through the launcher, its
     * measurement read back into the JSON rows (the two-process comparison starts three JVMs, 13 to
     * 23 s on a loaded 2-core machine, and is tagged {@code multiprocess} below).
     */
    @Test
    void processesOneMeasuresOneProcessThroughTheLauncher() throws Exception {
        JsonNode rows = processesBench(1, 0, 1);
        assertThat(rows).hasSize(1);
        JsonNode row = rows.get(0);
        assertThat(row.get("processes").asInt()).isEqualTo(1);
        assertThat(row.get("item_s_all")).hasSize(1);
        assertThat(row.get("item_s").asDouble()).isPositive();
        assertThat(row.get("speedup").asDouble()).isEqualTo(1.0);
        assertThat(row.get("efficiency").asDouble()).isEqualTo(1.0);
        assertThat(row.get("collective_s").asDouble()).isZero();       // one process: no collectives
        assertThat(CliTest.run("bench", "--processes", "0").err()).contains("--processes must be >= 1");
    }

    @Test
    @Tag("multiprocess")
    void processesMeasuresOneAndSeveralProcessesOfOneRun() throws Exception {
        JsonNode rows = processesBench(2, 1, 2);
        assertThat(rows).hasSize(2);
        assertThat(rows.get(0).get("processes").asInt()).isEqualTo(1);
        assertThat(rows.get(1).get("processes").asInt()).isEqualTo(2);
        assertThat(rows.get(0).get("speedup").asDouble()).isEqualTo(1.0);
        for (JsonNode row : rows) {
            assertThat(row.get("item_s_all")).hasSize(2);
            assertThat(row.get("item_s").asDouble()).isPositive();
            double speedup = rows.get(0).get("item_s").asDouble() / row.get("item_s").asDouble();
            assertThat(row.get("speedup").asDouble()).isCloseTo(speedup, org.assertj.core.data.Offset.offset(1e-9));
            assertThat(row.get("efficiency").asDouble()).isCloseTo(speedup / row.get("processes").asInt(),
                    org.assertj.core.data.Offset.offset(1e-9));
        }
        assertThat(rows.get(0).get("collective_s").asDouble()).isZero();       // one process: no collectives
        assertThat(rows.get(1).get("collective_s").asDouble()).isPositive();   // the completions are exchanged
    }
}
