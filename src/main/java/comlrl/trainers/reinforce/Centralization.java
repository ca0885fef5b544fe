package comlrl.trainers.reinforce;

import comlrl.data.TaskItem;
import comlrl.reward.RewardFunction;
import comlrl.trainers.EvalLogger;
import comlrl.trainers.common.TrainerSettings;
import comlrl.utils.Formatter;
import comlrl.utils.Formatters;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.function.IntFunction;
import java.util.stream.IntStream;

/**
 * Centralized collaboration (reference §3.7, §7.5) as one transformation of a trainer's settings, used
 * by every family that offers it (centralized MAGRPO, MADPO, MARLHF, the iterative trainers): the N
 * roles' settings become those of one actor that answers every role in a single joint completion.
 * <ul>
 *   <li>{@code formatters}: the actor's one prompt
 *       {@code adapter.buildPrompt(item, [formatter_0(item), …, formatter_{N−1}(item)])};</li>
 *   <li>{@code reward_func}, {@code eval_reward_func}: the task reward of the role outputs
 *       {@code adapter.parseCompletion(joint, item, N)} (every role {@code ""} when the completion
 *       cannot be parsed), scored as N agents' joint response;</li>
 *   <li>{@code eval_logger}: receives role outputs {@code [role][item][turn]};</li>
 *   <li>{@code num_agents}: 1 (the actor); {@code agents}, when given, must hold exactly one model;</li>
 *   <li>{@code num_roles}: N (in the W&amp;B run's config, with {@code num_actor_models} 1).</li>
 * </ul>
 * Every other setting passes through unchanged ({@link TrainerSettings#with}).
 *
 * @param adapter how prompts are joined and completions split ({@link #ADAPTER}, default {@link TaggedCentralizedAdapter})
 * @param roleFormatters the roles' formatters, in role order
 * @param roles N, the number of roles the actor plays
 */
public record Centralization(CentralizedAdapter adapter, Formatters roleFormatters, int roles) {
    /** {@code centralized_adapter}: null means the {@link TaggedCentralizedAdapter}. */
    public static final TrainerSettings.Key<CentralizedAdapter> ADAPTER = TrainerSettings.key("centralized_adapter", null);

    public Centralization {
        Objects.requireNonNull(adapter, "centralized adapter");
        Objects.requireNonNull(roleFormatters, "role formatters");
    }

    /**
     * The centralization of {@code settings}' adapter (or the tagged one) and formatters for {@code roles} roles.
     *
     * @throws IllegalArgumentException when the formatters do not fit {@code roles}
     */
    public static Centralization of(TrainerSettings settings, int roles) {
        CentralizedAdapter adapter = settings.get(ADAPTER);
        return new Centralization(adapter != null ? adapter : new TaggedCentralizedAdapter(),
                Formatters.fromArgument(settings.get(TrainerSettings.FORMATTERS), roles), roles);
    }

    /**
     * The one actor's settings, replaced as the class describes.
     *
     * @throws IllegalArgumentException when {@code agents} holds other than one model
     */
    public TrainerSettings actorSettings(TrainerSettings settings) {
        List<?> agents = settings.get(TrainerSettings.AGENTS);
        if (agents != null && agents.size() != 1) {
            throw new IllegalArgumentException("Centralized collaboration trains one actor model: agents must hold "
                    + "exactly 1 model, got " + agents.size());
        }
        RewardFunction reward = settings.get(TrainerSettings.REWARD_FUNC);
        RewardFunction evalReward = settings.get(TrainerSettings.EVAL_REWARD_FUNC);
        EvalLogger logger = settings.get(TrainerSettings.EVAL_LOGGER);
        return settings.with(TrainerSettings.FORMATTERS, actorFormatter())
                .with(TrainerSettings.REWARD_FUNC, reward == null ? null : jointReward(reward))
                .with(TrainerSettings.EVAL_REWARD_FUNC, evalReward == null ? null : jointReward(evalReward))
                .with(TrainerSettings.EVAL_LOGGER, logger == null ? null : evalLogger(logger))
                .with(TrainerSettings.NUM_AGENTS, 1)
                .with(TrainerSettings.NUM_ROLES, roles);
    }

    /** The actor's formatter: {@code build_prompt(item, [formatter_r(item)]_r)}. */
    public Formatter actorFormatter() {
        return item -> Objects.requireNonNull(adapter.buildPrompt(item, IntStream.range(0, roles)
                .mapToObj(r -> roleFormatters.format(r, item)).toList()),
                "the centralized adapter's buildPrompt returned null");
    }

    /** {@code task} over the roles' parts of each joint completion ({@code completions = [1][K]}). */
    public RewardFunction jointReward(RewardFunction task) {
        return (completions, items) -> {
            List<String> joint = completions.get(0); // [K] joint completions
            return task.score(perRole(joint, k -> items.get(items.size() == joint.size() ? k : 0)), items); // [N][K]
        };
    }

    /** {@code logger} over the roles' parts: {@code [1][item][turn]} joint → {@code [role][item][turn]}. */
    public EvalLogger evalLogger(EvalLogger logger) {
        return (completions, items, prompts) -> {
            List<List<String>> actor = completions.get(0);
            return logger.log(transpose(IntStream.range(0, items.size()).mapToObj(j -> perRole(j < actor.size()
                    ? actor.get(j) : List.<String>of(), k -> items.get(j))).toList(), roles), items, prompts);
        };
    }

    /** The role outputs {@code [N][K]} of joint completions {@code [K]}, the k-th answering {@code item.apply(k)}. */
    private List<List<String>> perRole(List<String> joint, IntFunction<TaskItem> item) {
        return transpose(IntStream.range(0, joint.size()).mapToObj(k -> splitRoles(joint.get(k), item.apply(k)))
                .toList(), roles);
    }

    /** {@code rows} {@code [a][b]} as {@code [b][a]}, b = {@code width}. */
    private static <T> List<List<T>> transpose(List<List<T>> rows, int width) {
        return IntStream.range(0, width).mapToObj(r -> rows.stream().map(row -> row.get(r)).toList()).toList();
    }

    /** The role outputs of one joint completion ({@link #splitRoles(CentralizedAdapter, String, TaskItem, int)}). */
    public List<String> splitRoles(String completion, TaskItem item) {
        return splitRoles(adapter, completion, item, roles);
    }

    /**
     * The role outputs of one joint completion: {@code adapter.parseCompletion(...)}, or N empty
     * strings when the adapter throws (the completion did not follow the format).
     *
     * @throws IllegalStateException when the adapter returns null or not exactly N outputs
     */
    public static List<String> splitRoles(CentralizedAdapter adapter, String completion, TaskItem item, int roles) {
        List<String> outputs;
        try {
            outputs = adapter.parseCompletion(completion, item, roles);
        } catch (RuntimeException parseError) {
            return Collections.nCopies(roles, "");
        }
        if (outputs == null || outputs.size() != roles || outputs.stream().anyMatch(Objects::isNull)) {
            throw new IllegalStateException("The centralized adapter must return " + roles + " role outputs (no "
                    + "nulls) from parseCompletion, got " + outputs + "; throw from parseCompletion for an "
                    + "unparsable completion instead");
        }
        return List.copyOf(outputs);
    }
}
