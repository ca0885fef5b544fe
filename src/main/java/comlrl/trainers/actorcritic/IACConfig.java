package comlrl.trainers.actorcritic;

import static comlrl.trainers.actorcritic.ActorCriticFields.OPTIONAL_CRITIC_LEARNING_RATE;
import static comlrl.utils.TrainerFields.USE_SEPARATE_CRITIC;
import static comlrl.utils.TrainerFields.VALUE_CLIP_RANGE;
import static comlrl.utils.TrainerFields.VALUE_HEAD_HIDDEN_DIM;

import java.util.List;
import java.util.Map;

/**
 * Training configuration of Independent Actor-Critic (reference §5.1): every field of the Python
 * {@code IACConfig} with the same defaults, plus the fields our MAGRPOConfig adds ({@code seed},
 * {@code gradient_checkpointing}, {@code generation_kwargs}, {@code skip_nonfinite_samples},
 * {@code save_total_limit}). Immutable and validated when built; each getter documents its field.
 *
 * <pre>{@code
 * IACConfig config = IACConfig.builder()
 *         .numAgents(2).numTurns(1).criticType(CriticType.Q).valueClipRange(null)
 *         .build();
 * IACConfig fromYaml = IACConfig.fromMap(Map.of("num_turns", 1, "use_separate_critic", false));
 * }</pre>
 *
 * <p>Where we differ from the reference: {@code eval_num_samples} must be ≥ 1 (§14 item 11);
 * {@code value_loss_coef} must be &gt; 0, {@code value_clip_range} &gt; 0 or null, {@code discount}
 * in [0, 1]; the learning rates, {@code temperature}, {@code top_p}, {@code top_k},
 * {@code max_new_tokens} and {@code num_train_epochs} are range-checked here rather than failing
 * later in training.
 */
public final class IACConfig extends ActorCriticConfig {

    private IACConfig(Builder b) {
        super(b);
    }

    /** A builder with the reference's IAC defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * An IAC config from snake_case keys (a YAML/JSON {@code args:} section); missing keys keep their
     * defaults. Values are type-checked (numbers may be numeric strings); an unknown key fails naming
     * it, with a hint for keys of older versions or the closest valid key.
     */
    public static IACConfig fromMap(Map<String, ?> values) {
        return builder().apply(values).build();
    }

    /** The snake_case keys of an IAC config, in field order. */
    public static List<String> keys() {
        return keysOf(ActorCriticFields.IAC);
    }

    /** A builder holding this config's values (unset train_batch_size and critic_learning_rate stay unset). */
    public Builder toBuilder() {
        Builder b = builder();
        copyInto(b);
        return b;
    }

    /**
     * {@code use_separate_critic} (default true): one critic model per agent (from
     * {@code critic_model} / {@code critics}, each with its own value head and optimizer) instead of a
     * value head on each actor, trained with the actor's loss.
     */
    public boolean useSeparateCritic() {
        return get(USE_SEPARATE_CRITIC);
    }

    /**
     * {@code value_clip_range} (default 0.2, finite, &gt; 0, or null = no clipping): PPO-style value
     * clipping, {@code max((y − V)², (y − V_clip)²)} with {@code V_clip = V_old + clamp(V − V_old, −ε, ε)}.
     * Only shared value heads ({@code use_separate_critic=false}) are clipped; separate critics ignore it.
     */
    public Double valueClipRange() {
        return get(VALUE_CLIP_RANGE);
    }

    /**
     * {@code value_head_hidden_dim} (default null, ≥ 0): hidden width of the value heads on the actors
     * ({@code use_separate_critic=false}), {@code Linear(E, d) → Tanh → Linear(d, 1)}; null or 0 =
     * one {@code Linear(E, 1)}.
     */
    public Integer valueHeadHiddenDim() {
        return get(VALUE_HEAD_HIDDEN_DIM);
    }

    @Override
    String missingCriticDevices() {
        return useSeparateCritic() ? "parallel_training=\"mp\" requires explicit critic_devices when "
                + "use_separate_critic=True (one device per critic, or one for all); set critic_devices, or use "
                + "parallel_training=\"none\"" : null;
    }

    /** Builds an {@link IACConfig}; see {@link ActorCriticConfig.Builder} for the shared setters. */
    public static final class Builder extends ActorCriticConfig.Builder<IACConfig, Builder> {
        private Builder() {
            super("IACConfig", "IAC", ActorCriticFields.IAC, ActorCriticFields.IAC_HINTS);
        }

        @Override
        protected Builder self() {
            return this;
        }

        /** Null = the agent learning rate. See {@link IACConfig#criticLearningRate()}. */
        public Builder criticLearningRate(Double criticLearningRate) {
            return put(OPTIONAL_CRITIC_LEARNING_RATE, criticLearningRate);
        }

        /** See {@link IACConfig#useSeparateCritic()}. */
        public Builder useSeparateCritic(boolean useSeparateCritic) {
            return put(USE_SEPARATE_CRITIC, useSeparateCritic);
        }

        /** Null disables value clipping. See {@link IACConfig#valueClipRange()}. */
        public Builder valueClipRange(Double valueClipRange) {
            return put(VALUE_CLIP_RANGE, valueClipRange);
        }

        /** Null or 0 = one linear layer. See {@link IACConfig#valueHeadHiddenDim()}. */
        public Builder valueHeadHiddenDim(Integer hiddenDim) {
            return put(VALUE_HEAD_HIDDEN_DIM, hiddenDim);
        }

        @Override
        public IACConfig build() {
            return new IACConfig(this);
        }
    }
}
