package comlrl.trainers;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.generation.CausalLm;
import comlrl.generation.SamplingConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Two {@link TinyAgents#createWide} agents whose packed decoding copies
 * ({@link comlrl.model.DecoderLm#decodeWeights}, about the weights' size each for a full agent) a trainer
 * test watches. At reward time (after a rollout, the first reward call after an update) it records which agents hold one, then samples from both
 * agents itself, as a reward that asks the agents would, and records again: both hold one then (24 new
 * tokens of 2 rows decode with packed weights, Generator.PACKED_MIN_STEPS), and the updates that follow
 * must free them. At each optimizer step it records the holders too.
 */
public final class DecodeCopyProbe implements AutoCloseable {
    private final List<CausalLm> team;
    private final List<String> atRewards = new ArrayList<>();
    private final List<String> afterOwnSampling = new ArrayList<>();
    private final List<String> atSteps = new ArrayList<>();

    private DecodeCopyProbe(List<CausalLm> team) {
        this.team = team;
    }

    /** Two wide agents written to and loaded from {@code dir}. */
    public static DecodeCopyProbe widePair(Path dir) {
        CausalLm a = TinyAgents.load(TinyAgents.createWide(dir.resolve("a"), 3));
        return new DecodeCopyProbe(List.of(a, TinyAgents.load(TinyAgents.createWide(dir.resolve("b"), 4))));
    }

    /** The agents, to hand to a trainer (which does not own them). */
    public List<CausalLm> team() {
        return team;
    }

    /** Whether the probe sampled since the last optimizer step (its copies then live until the next one). */
    private boolean sampled;

    /**
     * From a reward function: samples from every agent and records the holders after it; at the first call
     * after an optimizer step (or the start) records them before it too (after the rollout, not the probe's
     * own earlier sampling).
     */
    public synchronized void atReward() {
        if (!sampled) {
            atRewards.add(holders());
        }
        sampled = true;
        for (CausalLm lm : team) {
            lm.generator().generate(List.of(lm.encode("Say hello.")), SamplingConfig.sample(1.0, 0, 1.0, 24, 2), 1);
        }
        afterOwnSampling.add(holders());
    }

    /** Records the holders now, from an observer of the optimizer steps. */
    public synchronized void atStep() {
        sampled = false;
        atSteps.add(holders());
    }

    /**
     * No agent held a copy after a rollout or at any optimizer step, while both did after their own sampling at
     * reward time (there were some of each).
     */
    public void assertReleased() {
        assertReleasedAfterSampling();
        assertThat(atSteps).as("agents holding a packed copy at each optimizer step").isNotEmpty().containsOnly("");
    }

    /** As {@link #assertReleased}, for a trainer whose optimizer steps the probe does not see. */
    public void assertReleasedAfterSampling() {
        assertThat(afterOwnSampling).as("agents holding a packed copy after sampling at reward time").isNotEmpty()
                .containsOnly("0 1");
        assertThat(atRewards).as("agents holding a packed copy after each rollout").containsOnly("");
    }

    /** The indices of the agents that hold packed decoding weights, space-separated ("" for none). */
    private String holders() {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < team.size(); i++) {
            if (team.get(i).model().holdsDecodeWeights()) {
                out.add(String.valueOf(i));
            }
        }
        return String.join(" ", out);
    }

    @Override
    public void close() {
        team.forEach(CausalLm::close);
    }
}
