package comlrl.trainers.actorcritic;

import comlrl.data.Stateful;
import comlrl.generation.CausalLm;
import comlrl.tensor.AdamW;
import comlrl.trainers.common.HeldAgents;
import comlrl.trainers.common.MetricsLogger;
import comlrl.trainers.common.RankWork;
import comlrl.trainers.common.SeedStream;
import comlrl.trainers.common.TrainerCheckpoint;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The checkpoint of a whole actor-critic trainer: per agent {@code agent_i} (its weights) and
 * {@code optimizer_i.safetensors}, then the critic's parts of that agent ({@link Critic#agentParts}),
 * then the critic's shared parts; the model shapes of the actors and the critic; progress, seeds and
 * the stateful parts. In the agents split each process writes and restores the agents it owns.
 */
final class ActorCriticCheckpoint {
    private ActorCriticCheckpoint() {
    }

    /** The parts of the agents this process holds ({@code agents}, {@code optimizers}). */
    static TrainerCheckpoint of(String algorithmName, ActorCriticConfig args, HeldAgents<CausalLm> held,
            HeldAgents<AdamW> optimizers, Critic critic, RankWork work, Map<String, Stateful> stateful, SeedStream seeds,
            MetricsLogger logger, TrainerCheckpoint.Extension extension) {
        List<TrainerCheckpoint.ShapeGroup> shapes = new ArrayList<>();
        shapes.add(TrainerCheckpoint.ShapeGroup.of("model_shapes", "agent", held.map(CausalLm::model)));
        shapes.addAll(critic.shapes());
        Map<String, TrainerCheckpoint.Part> parts = new LinkedHashMap<>();
        for (int i : held.indices()) { // the agents split: each agent's owner writes and restores it
            parts.putAll(TrainerCheckpoint.agentParts(i, held.get(i), optimizers.get(i)));
            parts.putAll(critic.agentParts(i));
        }
        parts.putAll(critic.sharedParts());
        return new TrainerCheckpoint(algorithmName, held.size(), args.numTrainEpochs(), args.saveTotalLimit(),
                shapes, parts, stateful, seeds, logger, work).extendedBy(extension);
    }
}
