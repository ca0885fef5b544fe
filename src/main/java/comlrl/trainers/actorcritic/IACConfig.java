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
 * {@code save_total_limit}). Immutable and validated when built.
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

    /** An IAC config from snake_case keys (a YAML/JSON {@code args:} section; unknown keys fail with a hint). */
    public static IACConfig fromMap(Map<String, ?> values) {
        return builder().apply(values).build();
    }

    /** The snake_case keys of an IAC config, in field order. */
    public static List<String> keys() {
        return keysOf(ActorCriticFields.IAC);
    }

    /** A builder holding this config's values (unset fields stay unset). */
    public Builder toBuilder() {
        return copyInto(builder());
    }

    /** {@code use_separate_critic}: a critic model per agent, or a value head on each actor. */
    public boolean useSeparateCritic() {
        return get(USE_SEPARATE_CRITIC);
    }

    /** {@code value_clip_range} (value heads on the actors only; {@link ActorCriticLoss#valueErrors}). */
    public Double valueClipRange() {
        return get(VALUE_CLIP_RANGE);
    }

    /** {@code value_head_hidden_dim} of the value heads on the actors. */
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

        /** Null = the agent learning rate. */
        public Builder criticLearningRate(Double criticLearningRate) {
            return put(OPTIONAL_CRITIC_LEARNING_RATE, criticLearningRate);
        }

        public Builder useSeparateCritic(boolean useSeparateCritic) {
            return put(USE_SEPARATE_CRITIC, useSeparateCritic);
        }

        public Builder valueClipRange(Double valueClipRange) {
            return put(VALUE_CLIP_RANGE, valueClipRange);
        }

        public Builder valueHeadHiddenDim(Integer hiddenDim) {
            return put(VALUE_HEAD_HIDDEN_DIM, hiddenDim);
        }

        @Override
        public IACConfig build() {
            return new IACConfig(this);
        }
    }
}
