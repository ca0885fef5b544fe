package comlrl.trainers;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.generation.CausalLm;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Two {@link TinyAgents#createWide} agents whose packed decoding copies
 * ({@link comlrl.model.DecoderLm#decodeWeights}, about the weights' size each for a full agent) a trainer
 * test watches: which agents hold one at reward time (after a rollout) and at each optimizer step. A
 * rollout of 24 new tokens or more and at most 8 rows decodes with them (Generator.PACKED_MIN_STEPS).
 */
public final class DecodeCopyProbe implements AutoCloseable {
    private final List<CausalLm> team;
    private final List<String> atRewards = Collections.synchronizedList(new ArrayList<>());
    private final List<String> atSteps = Collections.synchronizedList(new ArrayList<>());

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

    /** Records the holders now, from a reward function. */
    public void atReward() {
        atRewards.add(holders());
    }

    /** Records the holders now, from an observer of the optimizer steps. */
    public void atStep() {
        atSteps.add(holders());
    }

    /** Both agents held a copy at every reward call, and none at any step (there were some of each). */
    public void assertReleasedDuringUpdates() {
        assertThat(atRewards).as("agents holding a packed copy after each rollout").isNotEmpty().containsOnly("0 1");
        assertThat(atSteps).as("agents holding a packed copy at each optimizer step").isNotEmpty().containsOnly("");
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
