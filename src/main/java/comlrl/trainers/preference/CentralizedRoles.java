package comlrl.trainers.preference;

import comlrl.reward.RewardFunction;
import comlrl.trainers.EvalLogger;
import comlrl.trainers.reinforce.CentralizedAdapter;
import comlrl.trainers.reinforce.CentralizedMAGRPOTrainer;
import comlrl.trainers.reinforce.TaggedCentralizedAdapter;
import comlrl.utils.Formatter;
import comlrl.utils.Formatters;
import java.util.ArrayList;
import java.util.List;

/**
 * Centralized collaboration of the preference trainers (reference §7.5): one actor answers the
 * adapter's prompt built from the roles' prompts, and its completion is split into the roles'
 * answers for the task reward and the evaluation logger.
 *
 * @param adapter the builder's adapter, or {@link TaggedCentralizedAdapter}
 * @param roleFormatters the roles' formatters (the builder's {@code formatters})
 * @param roles {@code num_agents}
 */
record CentralizedRoles(CentralizedAdapter adapter, Formatters roleFormatters, int roles) {
    static CentralizedRoles of(CentralizedAdapter adapter, Object formatters, int roles) {
        return new CentralizedRoles(adapter != null ? adapter : new TaggedCentralizedAdapter(),
                Formatters.fromArgument(formatters, roles), roles);
    }

    /** The one actor's formatter: {@code build_prompt(item, [formatter_r(item)])}. */
    Formatters actorFormatters() {
        return Formatters.build((Formatter) item -> {
            List<String> prompts = new ArrayList<>(roles);
            for (int r = 0; r < roles; r++) {
                prompts.add(roleFormatters.format(r, item));
            }
            return adapter.buildPrompt(item, List.copyOf(prompts));
        }, 1);
    }

    /** {@code task} over the roles' parts of each joint completion. */
    RewardFunction reward(RewardFunction task) {
        return CentralizedMAGRPOTrainer.jointReward(adapter, task, roles);
    }

    /** {@code logger} over the roles' parts (null stays null). */
    EvalLogger evalLogger(EvalLogger logger) {
        return logger == null ? null : (completions, items, prompts) -> logger.log(
                CentralizedMAGRPOTrainer.splitEval(adapter, completions, items, roles), items, prompts);
    }
}
