package comlrl.trainers.actorcritic;

import comlrl.distributed.AgentExecutor;
import comlrl.distributed.HeldAgents;
import comlrl.distributed.RankWork;
import comlrl.generation.CausalLm;
import comlrl.generation.CausalLmWithValueHead;
import comlrl.model.ValueHead;
import comlrl.tensor.AdamW;
import comlrl.tensor.Device;
import comlrl.trainers.common.AgentSet;
import comlrl.checkpoint.TrainerCheckpoint;
import comlrl.trainers.common.TrainerSettings;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import java.util.function.IntPredicate;

/**
 * How an actor-critic trainer values its samples and learns the values: a separate critic model per
 * agent ({@link SeparateCritics}), a value head on each actor ({@link ActorValueHeads}) or MAAC's one
 * centralised critic ({@link CentralCritic}). Call order: {@link #values} once per rollout turn
 * ({@code V_old}, without gradients), {@link #update} once per minibatch, {@link #save},
 * {@link #loadValueHeads} and the checkpoint parts when asked, {@link #close} once.
 */
sealed interface Critic extends AutoCloseable permits PerAgentCritics, CentralCritic {

    /** The old values of one turn and, for a joint critic, its input ids per joint action. */
    record Values(double[][] values, List<long[]> jointIds) {
    }

    /** The actors a critic serves: the models held here, their set (LoRA critics share its base), and their run. */
    record Actors(HeldAgents<CausalLm> lms, AgentSet set, long[] padIds, RankWork work, AgentExecutor executor,
            MinibatchSteps steps) {
    }

    /**
     * Loads the critic models {@code include} accepts (null for the others); LoRA critics
     * ({@code critic_lora}) sit on the actors' base when they name the same model on the same device.
     */
    static AgentSet loadModels(ActorCriticTrainerBase.Builder<?> b, long seed, List<Object> sources, List<Device> devices,
            Actors actors, IntPredicate include) {
        return AgentSet.load("critic", sources, b.get(TrainerSettings.DTYPE), devices, b.settings().criticLoraAgents(),
                seed ^ 0xC0FFEEL, actors.set(), include);
    }

    /**
     * The checkpoint parts of a critic model with its optimizer and head: {@code critic<suffix>},
     * {@code critic_optimizer<suffix>.safetensors} and {@code value_head<suffix>} ({@code label} names the model).
     */
    static Map<String, TrainerCheckpoint.Part> modelParts(String suffix, String label, CausalLm model, AdamW optimizer,
            ValueHead head) {
        Map<String, TrainerCheckpoint.Part> parts = new LinkedHashMap<>();
        parts.put("critic" + suffix, TrainerCheckpoint.weights("critic" + suffix, label, model));
        parts.put("critic_optimizer" + suffix, TrainerCheckpoint.optimizer("critic_optimizer" + suffix + ".safetensors",
                optimizer));
        parts.put("value_head" + suffix, ValueHeads.checkpointPart("value_head" + suffix, head));
        return parts;
    }

    /** The losses of one minibatch update. */
    record Losses(double policyLoss, double valueLoss) {
    }

    /**
     * The critic's values of one turn without gradients, the same on every process: {@code values[i][k]}
     * for agent i's generation k, from the prompts and the responses (cut at their first pad id).
     */
    Values values(int turn, List<String> prompts, List<long[]> promptIds,
            List<List<long[]>> responses, List<List<String>> texts);

    /** One minibatch update of {@code agent} (samples carry {@code y}, {@code V_old}, {@code Â}): actor and critic. */
    Losses update(int agent, List<RolloutSample> minibatch, HeldAgents<AdamW> actorOptimizers);

    /** The value head on agent {@code agent}'s actor, stepped with it; null when the critic is a model of its own. */
    default ValueHead headOnActor(int agent) {
        return null;
    }

    /** Whether one critic serves every agent: agents are updated in turn, and every process steps its copy. */
    default boolean sharedByAgents() {
        return false;
    }

    /** The critic models with their value heads, for {@code critics()} (null for other processes' agents). */
    default List<CausalLmWithValueHead> views() {
        return List.of();
    }

    /** The checkpoint's shape records of the critic models. */
    default List<TrainerCheckpoint.ShapeGroup> shapes() {
        return List.of();
    }

    /** The checkpoint parts that belong with agent {@code agent} (one this process holds). */
    default Map<String, TrainerCheckpoint.Part> agentParts(int agent) {
        return Map.of();
    }

    /** The checkpoint parts of a critic every agent shares. */
    default Map<String, TrainerCheckpoint.Part> sharedParts() {
        return Map.of();
    }

    /** Saves critics and heads (§11) under {@code dir}, agent i's by {@code actorDirs.apply(i)} if {@code writes}. */
    void save(Path dir, IntFunction<Path> actorDirs, boolean writes);

    /** Restores the value heads {@link #save} wrote (after checking their {@code critic_type}). */
    void loadValueHeads(Path savedDir, IntFunction<Path> actorDirs);

    /** Fails when {@code dir} is, or lies inside, a directory a critic was loaded from. */
    void requireOutside(Path dir, String what);

    @Override
    void close();
}
