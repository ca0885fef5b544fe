package comlrl.trainers.actorcritic;

import comlrl.distributed.HeldAgents;
import comlrl.generation.CausalLm;
import comlrl.tensor.Device;
import comlrl.tokenizer.Tokenizer;
import comlrl.trainers.AgentSources;
import comlrl.trainers.Devices;
import comlrl.utils.ParallelTraining;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Which models an actor-critic trainer builds, and where they go, with the reference's rules and
 * messages (§6.1, §6.2, §9), in its constructors' order; nothing is loaded. Sources are model ids or
 * directories ({@code String}s) or loaded {@link CausalLm}s; the actor count is always
 * {@code args.num_agents} (unlike MAGRPO, whose constructor count wins).
 *
 * <p>Tokenizers: the reference always needs {@code tokenizer} with an agent list; here a loaded model
 * carries its tokenizer, so the rule applies only to a {@code CausalLm} built without one. A given
 * tokenizer (one for all, or one per agent) replaces the agents' own.
 */
public final class ActorCriticSources {
    private ActorCriticSources() {
    }

    /**
     * The resolved sources.
     *
     * @param actors one source per agent (String or CausalLm)
     * @param tokenizers one per agent: the given one, else the CausalLm's own, else null (loaded with the model)
     * @param critics IAC: one per agent with separate critics (read their actor's ids), none with value heads
     *     on the actors; MAAC: the one shared critic (reads agent 0's ids)
     */
    public record Sources(List<Object> actors, List<Tokenizer> tokenizers, List<Object> critics) {
        public Sources {
            actors = List.copyOf(actors);
            tokenizers = Collections.unmodifiableList(new ArrayList<>(tokenizers));
            critics = List.copyOf(critics);
        }

        /** The loaded actors, each with its tokenizer where one was given apart from the model. */
        HeldAgents<CausalLm> withTokenizers(HeldAgents<CausalLm> loaded) {
            return loaded.mapIndexed((i, lm) -> {
                Tokenizer tok = tokenizers.get(i);
                return tok == null || tok == lm.tokenizer() ? lm : lm.withTokenizer(tok);
            });
        }
    }

    /**
     * Devices of an actor-critic trainer's models: one per actor; IAC one critic device per agent (with
     * value heads, the actor's), MAAC one; one reference per actor when reference KL is on, else none.
     */
    public record Placement(List<Device> agents, List<Device> critics, List<Device> references) {
        public Placement {
            agents = List.copyOf(agents);
            critics = List.copyOf(critics);
            references = List.copyOf(references);
        }
    }

    /** How the critics are laid out: one model per agent (IAC), the actors themselves (value heads), one shared (MAAC). */
    enum CriticLayout { PER_AGENT, ON_ACTORS, SHARED }

    /**
     * IAC's sources: {@code agentModel} (a model id/directory for every agent, or a CausalLm for one) or
     * {@code agents} (one per agent); {@code tokenizers} null (the agents' own), one for all or one per
     * agent; {@code criticModel} (broadcast as {@code agentModel}) or {@code critics} (one per agent).
     */
    public static Sources iac(IACConfig args, Object agentModel, List<?> agents, List<Tokenizer> tokenizers,
                              Object criticModel, List<?> critics) {
        int n = args.numAgents();
        requireAgents(agentModel, agents);
        if (!args.useSeparateCritic() && (critics != null || criticModel != null)) {
            throw new IllegalArgumentException("critics can only be provided when use_separate_critic=True. With "
                    + "use_separate_critic=false each actor carries its own value head; drop critic_model/critics or "
                    + "set use_separate_critic=true");
        }
        List<Object> actors = actors(args, agentModel, agents);
        List<Tokenizer> resolvedTokenizers = tokenizers(actors, tokenizers);
        if (!args.useSeparateCritic()) {
            return new Sources(actors, resolvedTokenizers, List.of());
        }
        if (criticModel == null && critics == null) {
            throw new IllegalArgumentException("Either critic_model or critics must be provided when "
                    + "use_separate_critic=True. Give a critic model id/directory (one critic per agent is loaded "
                    + "from it) or one per agent in critics, or set use_separate_critic=false for value heads on the "
                    + "actors");
        }
        if (critics == null && n > 1 && !(criticModel instanceof String)) {
            throw new IllegalArgumentException("Multi-agent IAC requires string identifiers for separate critics: "
                    + "one loaded critic_model cannot be " + n + " independent critics. Pass critic_model as a model "
                    + "id/directory, or one model per agent in critics");
        }
        List<Object> resolvedCritics = AgentSources.resolve("critics", criticModel, critics, n, "num_agents");
        requireModels("critics", resolvedCritics);
        return new Sources(actors, resolvedTokenizers, resolvedCritics);
    }

    /** MAAC's sources: as {@link #iac}, with one critic shared by all agents (or a one-element {@code critics}). */
    public static Sources maac(MAACConfig args, Object agentModel, List<?> agents, List<Tokenizer> tokenizers,
                               Object criticModel, List<?> critics) {
        requireAgents(agentModel, agents);
        List<Object> actors = actors(args, agentModel, agents);
        List<Tokenizer> resolvedTokenizers = tokenizers(actors, tokenizers);
        if (criticModel == null && critics == null) {
            throw new IllegalArgumentException("Either critic_model or critics must be provided for MAAC. MAAC "
                    + "trains one critic shared by all agents: give its model id/directory (or a loaded model) as "
                    + "critic_model");
        }
        if (critics != null && critics.size() != 1) {
            throw new IllegalArgumentException("critics length (" + critics.size() + ") must match 1 critic: MAAC "
                    + "trains one critic shared by all agents; pass critic_model, or a one-element critics list");
        }
        List<Object> resolvedCritics = AgentSources.resolve("critics", criticModel, critics, 1, "1 critic");
        requireModels("critics", resolvedCritics);
        return new Sources(actors, resolvedTokenizers, resolvedCritics);
    }

    private static void requireAgents(Object agentModel, List<?> agents) {
        if (agentModel == null && agents == null) {
            throw new IllegalArgumentException("Either agent_model or agents must be provided.");
        }
    }

    /** One actor source per agent ({@code args.num_agents}), with the reference's checks. */
    private static List<Object> actors(ActorCriticConfig args, Object agentModel, List<?> agents) {
        int n = args.numAgents();
        if (agents == null && n > 1 && !(agentModel instanceof String)) {
            throw new IllegalArgumentException("Multi-agent " + args.algorithmName() + " requires `agent_model` to "
                    + "be a pretrained identifier string. One loaded model cannot be " + n + " independent actors: "
                    + "pass a model id/directory, or one model per agent in agents");
        }
        List<Object> actors = AgentSources.resolve("agents", agentModel, agents, n, "num_agents");
        requireModels("agents", actors);
        return actors;
    }

    private static void requireModels(String kind, List<Object> sources) {
        for (int i = 0; i < sources.size(); i++) {
            Object source = sources.get(i);
            if (!(source instanceof String) && !(source instanceof CausalLm)) {
                throw new IllegalArgumentException(kind + "[" + i + "] must be a model id/directory (String) or a "
                        + "CausalLm, got " + source.getClass().getName());
            }
        }
    }

    /** §6.2 with our models: see the class comment. */
    private static List<Tokenizer> tokenizers(List<Object> actors, List<Tokenizer> given) {
        int n = actors.size();
        if (given != null && given.size() != 1 && given.size() != n) {
            throw new IllegalArgumentException("tokenizers length (" + given.size() + ") must match agents (" + n
                    + "); give one tokenizer for all agents or one per agent");
        }
        List<Tokenizer> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Tokenizer tokenizer = given == null ? null : given.get(given.size() == 1 ? 0 : i);
            if (tokenizer == null && actors.get(i) instanceof CausalLm lm) {
                tokenizer = lm.tokenizer();
                if (tokenizer == null) {
                    throw new IllegalArgumentException("Tokenizer must be provided when using agents. agents[" + i
                            + "] is a CausalLm built without a tokenizer; pass one (for all agents or one per agent), "
                            + "or load the agent from its model directory");
                }
            }
            out.add(tokenizer);
        }
        return out;
    }

    /**
     * The devices of {@code args}' models, every one on {@code processDevice} (a ddp process's) when not
     * null. IAC (§9 {@code assign_devices}): with "none" every model on one device; with "mp" each actor
     * on its {@code agent_devices} entry and each separate critic on its {@code critic_devices} entry, or
     * with its actor when unset. MAAC (§9 {@code assign_shared_critic_device}): with "mp" the shared
     * critic on {@code critic_devices} (one device), or with agent 0 when unset.
     */
    public static Placement place(ActorCriticConfig args, Device processDevice) {
        CriticLayout layout = !(args instanceof IACConfig iac) ? CriticLayout.SHARED
                : iac.useSeparateCritic() ? CriticLayout.PER_AGENT : CriticLayout.ON_ACTORS;
        if (processDevice != null) {
            int critics = switch (layout) {
                case PER_AGENT -> args.numAgents();
                case ON_ACTORS -> 0;
                case SHARED -> 1;
            };
            return new Placement(Collections.nCopies(args.numAgents(), processDevice), Collections.nCopies(critics,
                    processDevice), args.referenceKlEnabled() ? Collections.nCopies(args.numAgents(), processDevice)
                    : List.of());
        }
        return place(args.parallelTraining(), args.numAgents(), args.agentDevices(), args.criticDevices(), layout,
                args.referenceKlEnabled(), args.referenceDevices());
    }

    /**
     * The placement rules. "none": every model on the first device of {@code agentDevices}, else of
     * {@code criticDevices}, else the automatic one. References go to {@code referenceDevices}, else with their actors.
     */
    static Placement place(ParallelTraining mode, int n, List<String> agentDevices, List<String> criticDevices,
                           CriticLayout layout, boolean referenceKl, List<String> referenceDevices) {
        List<Device> agents;
        List<Device> critics;
        if (mode == ParallelTraining.NONE) {
            List<String> first = agentDevices != null ? agentDevices : criticDevices;
            Device single = Devices.resolve(first == null ? null : first.get(0), 1, "agent_devices").get(0);
            agents = Collections.nCopies(n, single);
            critics = Collections.nCopies(layout == CriticLayout.SHARED ? 1 : n, single);
        } else {
            agents = Devices.resolve(agentDevices, n, "agent_devices");
            critics = switch (layout) {
                case PER_AGENT -> criticDevices == null ? agents : Devices.resolve(criticDevices, n, "critic_devices");
                case ON_ACTORS -> agents;
                case SHARED -> List.of(criticDevices == null ? agents.get(0) : sharedCriticDevice(criticDevices));
            };
        }
        List<Device> references = !referenceKl ? List.of()
                : referenceDevices == null ? agents : Devices.resolve(referenceDevices, n, "reference_devices");
        return new Placement(agents, critics, references);
    }

    private static Device sharedCriticDevice(List<String> criticDevices) {
        if (criticDevices.size() != 1) {
            throw new IllegalArgumentException("critic_devices length (" + criticDevices.size() + ") must be 1: MAAC "
                    + "has one shared critic; give its device, e.g. \"cuda:2\"");
        }
        return Devices.resolve(criticDevices, 1, "critic_devices").get(0);
    }
}
