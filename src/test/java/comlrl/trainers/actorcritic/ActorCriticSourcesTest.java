package comlrl.trainers.actorcritic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.generation.CausalLm;
import comlrl.tensor.Device;
import comlrl.tokenizer.TinyTokenizerFactory;
import comlrl.tokenizer.Tokenizer;
import comlrl.trainers.actorcritic.ActorCriticSources.CriticLayout;
import comlrl.trainers.actorcritic.ActorCriticSources.Placement;
import comlrl.trainers.actorcritic.ActorCriticSources.Sources;
import comlrl.utils.ParallelTraining;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** §6.1/§6.2 source rules and §9 placement of the actor-critic trainers (nothing is loaded). */
class ActorCriticSourcesTest {
    private static final IACConfig IAC = IACConfig.builder().build();
    private static final IACConfig IAC_SHARED = IACConfig.builder().useSeparateCritic(false).build();
    private static final MAACConfig MAAC = MAACConfig.builder().build();
    private static final Device CUDA0 = new Device("cuda", 0);
    private static final Device CUDA1 = new Device("cuda", 1);
    private static final Device CUDA2 = new Device("cuda", 2);

    private static Tokenizer tokenizer;

    @BeforeAll
    static void loadTokenizer(@TempDir Path dir) {
        TinyTokenizerFactory.write(dir);
        tokenizer = Tokenizer.load(dir);
    }

    @AfterAll
    static void closeTokenizer() {
        tokenizer.close();
    }

    /** A loaded model object (no weights needed: nothing here touches them). */
    private static CausalLm model(Tokenizer tok) {
        return new CausalLm("in-memory", null, tok, null);
    }

    // ------------------------------------------------------------------ actors (IAC and MAAC)

    @Test
    void actorsNeedAgentModelOrAgents() {
        assertThatThrownBy(() -> ActorCriticSources.iac(IAC, null, null, null, "critic", null))
                .hasMessage("Either agent_model or agents must be provided.");
        assertThatThrownBy(() -> ActorCriticSources.maac(MAAC, null, null, null, "critic", null))
                .hasMessage("Either agent_model or agents must be provided.");
    }

    @Test
    void theShortcutIsReplicatedToNumAgents() {
        Sources s = ActorCriticSources.iac(IACConfig.builder().numAgents(3).build(), "Qwen/Qwen2.5-0.5B", null, null,
                "critic-dir", null);
        assertThat(s.actors()).containsExactly("Qwen/Qwen2.5-0.5B", "Qwen/Qwen2.5-0.5B", "Qwen/Qwen2.5-0.5B");
        assertThat(s.tokenizers()).containsExactly(null, null, null);   // each comes with its model
        assertThat(s.critics()).containsExactly("critic-dir", "critic-dir", "critic-dir");
    }

    @Test
    void multiAgentNeedsAnIdentifierShortcut() {
        assertThatThrownBy(() -> ActorCriticSources.iac(IAC, model(tokenizer), null, null, "critic", null))
                .hasMessageStartingWith("Multi-agent IAC requires `agent_model` to be a pretrained identifier string.");
        assertThatThrownBy(() -> ActorCriticSources.maac(MAAC, model(tokenizer), null, null, "critic", null))
                .hasMessageStartingWith("Multi-agent MAAC requires `agent_model` to be a pretrained identifier string.");
        // one agent may be a loaded model
        CausalLm lm = model(tokenizer);
        Sources one = ActorCriticSources.iac(IACConfig.builder().numAgents(1).build(), lm, null, null, "critic", null);
        assertThat(one.actors()).containsExactly(lm);
        assertThat(one.tokenizers()).containsExactly(tokenizer);
    }

    @Test
    void agentListRules() {
        assertThatThrownBy(() -> ActorCriticSources.iac(IAC, null, List.of("a", "b", "c"), null, "critic", null))
                .hasMessage("agents length (3) must match num_agents (2).");
        assertThatThrownBy(() -> ActorCriticSources.maac(MAAC, "a", List.of("a", "b"), null, "critic", null))
                .hasMessageContaining("conflict");
        assertThatThrownBy(() -> ActorCriticSources.iac(IAC, "a", List.of(model(tokenizer), "a"), null, "critic", null))
                .hasMessage("Cannot provide both agent_model and agents unless agents is a list of model names.");
        assertThatThrownBy(() -> ActorCriticSources.iac(IAC, null, List.of("a", 7), null, "critic", null))
                .hasMessage("agents[1] must be a model id/directory (String) or a CausalLm, got java.lang.Integer");
        Sources s = ActorCriticSources.maac(MAAC, null, List.of("a", "b"), null, "critic", null);
        assertThat(s.actors()).containsExactly("a", "b");
    }

    // ------------------------------------------------------------------ tokenizers

    @Test
    void aModelObjectWithoutTokenizerNeedsOne() {
        List<Object> agents = List.of("a", model(null));
        assertThatThrownBy(() -> ActorCriticSources.iac(IAC, null, agents, null, "critic", null))
                .hasMessageStartingWith("Tokenizer must be provided when using agents. agents[1] is a CausalLm built "
                        + "without a tokenizer");
        assertThatThrownBy(() -> ActorCriticSources.maac(MAAC, null, agents, null, "critic", null))
                .hasMessageStartingWith("Tokenizer must be provided when using agents.");
        assertThatThrownBy(() -> ActorCriticSources.iac(IACConfig.builder().numAgents(1).build(), model(null), null,
                null, "critic", null)).hasMessageStartingWith("Tokenizer must be provided when using agents.");
        // a given tokenizer is used for every agent
        Sources s = ActorCriticSources.iac(IAC, null, agents, List.of(tokenizer), "critic", null);
        assertThat(s.tokenizers()).containsExactly(tokenizer, tokenizer);
    }

    @Test
    void agentsCarryTheirOwnTokenizerUnlessOneIsGiven() {
        CausalLm withOwn = model(tokenizer);
        Sources own = ActorCriticSources.iac(IAC, null, List.of("a", withOwn), null, "critic", null);
        assertThat(own.tokenizers()).containsExactly(null, tokenizer);
        Sources perAgent = ActorCriticSources.iac(IAC, null, List.of("a", "b"), Arrays.asList(tokenizer, null),
                "critic", null);
        assertThat(perAgent.tokenizers()).containsExactly(tokenizer, null);
        assertThatThrownBy(() -> ActorCriticSources.iac(IAC, "a", null, List.of(tokenizer, tokenizer, tokenizer),
                "critic", null))
                .hasMessage("tokenizers length (3) must match agents (2); give one tokenizer for all agents or one "
                        + "per agent");
    }

    // ------------------------------------------------------------------ IAC critics

    @Test
    void sharedValueHeadsTakeNoCritics() {
        String message = "critics can only be provided when use_separate_critic=True.";
        assertThatThrownBy(() -> ActorCriticSources.iac(IAC_SHARED, "a", null, null, "critic", null))
                .hasMessageStartingWith(message);
        assertThatThrownBy(() -> ActorCriticSources.iac(IAC_SHARED, "a", null, null, null, List.of("c", "c")))
                .hasMessageStartingWith(message);
        assertThat(ActorCriticSources.iac(IAC_SHARED, "a", null, null, null, null).critics()).isEmpty();
    }

    @Test
    void separateCriticsAreRequired() {
        assertThatThrownBy(() -> ActorCriticSources.iac(IAC, "a", null, null, null, null))
                .hasMessageStartingWith("Either critic_model or critics must be provided when use_separate_critic=True.");
    }

    @Test
    void criticListRules() {
        assertThatThrownBy(() -> ActorCriticSources.iac(IAC, "a", null, null, null, List.of("c1", "c2", "c3")))
                .hasMessage("critics length (3) must match num_agents (2).");
        assertThat(ActorCriticSources.iac(IAC, "a", null, null, null, List.of("c1", "c2")).critics())
                .containsExactly("c1", "c2");
        CausalLm critic = model(tokenizer);
        assertThatThrownBy(() -> ActorCriticSources.iac(IAC, "a", null, null, critic, null))
                .hasMessageStartingWith("Multi-agent IAC requires string identifiers for separate critics");
        assertThat(ActorCriticSources.iac(IACConfig.builder().numAgents(1).build(), "a", null, null, critic, null)
                .critics()).containsExactly(critic);
        assertThatThrownBy(() -> ActorCriticSources.iac(IAC, "a", null, null, null, List.of("c", 1.5)))
                .hasMessage("critics[1] must be a model id/directory (String) or a CausalLm, got java.lang.Double");
    }

    // ------------------------------------------------------------------ MAAC critic

    @Test
    void maacNeedsExactlyOneCritic() {
        assertThatThrownBy(() -> ActorCriticSources.maac(MAAC, "a", null, null, null, null))
                .hasMessageStartingWith("Either critic_model or critics must be provided for MAAC.");
        assertThatThrownBy(() -> ActorCriticSources.maac(MAAC, "a", null, null, null, List.of("c1", "c2")))
                .hasMessage("critics length (2) must match 1 critic: MAAC trains one critic shared by all agents; "
                        + "pass critic_model, or a one-element critics list");
        assertThat(ActorCriticSources.maac(MAAC, "a", null, null, "c", null).critics()).containsExactly("c");
        CausalLm critic = model(tokenizer);
        assertThat(ActorCriticSources.maac(MAAC, "a", null, null, null, List.of(critic)).critics())
                .containsExactly(critic);
        assertThat(ActorCriticSources.maac(MAAC, "a", null, null, critic, null).critics()).containsExactly(critic);
    }

    // ------------------------------------------------------------------ placement

    @Test
    void noneModePutsEveryModelOnTheFirstDevice() {
        Placement iac = ActorCriticSources.place(IACConfig.builder().agentDevices(List.of("cuda:1", "cuda:0"))
                .criticDevices("cuda:2").build(), null);
        assertThat(iac.agents()).containsExactly(CUDA1, CUDA1);
        assertThat(iac.critics()).containsExactly(CUDA1, CUDA1);
        assertThat(iac.references()).isEmpty();
        // without agent_devices the first critic device
        Placement maac = ActorCriticSources.place(MAACConfig.builder().criticDevices("cuda:2").build(), null);
        assertThat(maac.agents()).containsExactly(CUDA2, CUDA2);
        assertThat(maac.critics()).containsExactly(CUDA2);
    }

    @Test
    void separateCriticsFollowCriticDevicesElseTheirActors() {
        Placement given = ActorCriticSources.place(IACConfig.builder().parallelTraining("mp")
                .agentDevices(List.of("cuda:0", "cuda:1")).criticDevices(List.of("cuda:2", "cuda:1")).build(), null);
        assertThat(given.agents()).containsExactly(CUDA0, CUDA1);
        assertThat(given.critics()).containsExactly(CUDA2, CUDA1);
        Placement defaulted = ActorCriticSources.place(ParallelTraining.MP, 2, List.of("cuda:1", "cuda:0"), null,
                CriticLayout.PER_AGENT, false, null);
        assertThat(defaulted.critics()).containsExactly(CUDA1, CUDA0);
        assertThatThrownBy(() -> ActorCriticSources.place(IACConfig.builder().parallelTraining("mp")
                .agentDevices(List.of("cuda:0", "cuda:1")).criticDevices(List.of("cuda:0", "cuda:1", "cuda:2")).build(),
                null))
                .hasMessage("critic_devices length (3) must be 1 or 2.");
    }

    @Test
    void valueHeadsStayWithTheirActors() {
        Placement p = ActorCriticSources.place(IACConfig.builder().useSeparateCritic(false).parallelTraining("mp")
                .agentDevices(List.of("cuda:1", "cuda:0")).criticDevices("cuda:2").build(), null);
        assertThat(p.critics()).containsExactly(CUDA1, CUDA0);
    }

    @Test
    void maacCriticGoesToCriticDevicesElseAgentZero() {
        Placement given = ActorCriticSources.place(MAACConfig.builder().parallelTraining("mp")
                .agentDevices(List.of("cuda:1", "cuda:0")).criticDevices("cuda:2").build(), null);
        assertThat(given.agents()).containsExactly(CUDA1, CUDA0);
        assertThat(given.critics()).containsExactly(CUDA2);
        Placement defaulted = ActorCriticSources.place(ParallelTraining.MP, 2, List.of("cuda:1", "cuda:0"), null,
                CriticLayout.SHARED, false, null);
        assertThat(defaulted.critics()).containsExactly(CUDA1);
        assertThatThrownBy(() -> ActorCriticSources.place(MAACConfig.builder().parallelTraining("mp")
                .agentDevices(List.of("cuda:1", "cuda:0")).criticDevices(List.of("cuda:2", "cuda:3")).build(), null))
                .hasMessageStartingWith("critic_devices length (2) must be 1: MAAC has one shared critic");
    }

    @Test
    void referencesFollowReferenceDevicesElseTheActors() {
        Placement withActors = ActorCriticSources.place(MAACConfig.builder().referenceKlEnabled(true)
                .agentDevices("cuda:1").build(), null);
        assertThat(withActors.references()).containsExactly(CUDA1, CUDA1);
        Placement given = ActorCriticSources.place(IACConfig.builder().referenceKlEnabled(true).agentDevices("cuda:1")
                .referenceDevices(List.of("cpu", "cuda:0")).build(), null);
        assertThat(given.references()).containsExactly(Device.CPU, CUDA0);
    }
}
