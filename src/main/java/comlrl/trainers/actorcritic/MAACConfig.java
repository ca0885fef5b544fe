package comlrl.trainers.actorcritic;

import static comlrl.trainers.actorcritic.ActorCriticFields.CRITIC_LEARNING_RATE;

import java.util.List;
import java.util.Map;

/**
 * Training configuration of Multi-Agent Actor-Critic with one shared critic (reference §5.2): every
 * field of the Python {@code MAACConfig} with the same defaults (notably {@code discount} 1.0 and a
 * required {@code critic_learning_rate}), plus {@code critic_value_head_hidden_dim} and the fields our
 * MAGRPOConfig adds ({@code seed}, {@code gradient_checkpointing}, {@code generation_kwargs},
 * {@code skip_nonfinite_samples}, {@code save_total_limit}). Immutable and validated when built.
 *
 * <p>MAAC has no {@code use_separate_critic}, {@code value_clip_range} or {@code value_head_hidden_dim}
 * (its actors carry no value heads and its critic is never clipped). The shared critic's head width,
 * which the reference reads from {@code model_config["critic_value_head_hidden_dim"]}, is also a
 * config field here, so that it is type-checked and recorded in the run's {@code config.json}.
 *
 * <p>Where we differ from the reference: as for {@link IACConfig}.
 */
public final class MAACConfig extends ActorCriticConfig {

    private MAACConfig(Builder b) {
        super(b);
    }

    /** A builder with the reference's MAAC defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** A MAAC config from snake_case keys (unknown keys, IAC-only ones included, fail with a hint). */
    public static MAACConfig fromMap(Map<String, ?> values) {
        return builder().apply(values).build();
    }

    /** The snake_case keys of a MAAC config, in field order. */
    public static List<String> keys() {
        return keysOf(ActorCriticFields.MAAC);
    }

    /** A builder holding this config's values (an unset train_batch_size stays unset). */
    public Builder toBuilder() {
        Builder b = builder();
        copyInto(b);
        return b;
    }

    @Override
    String missingCriticDevices() {
        return "parallel_training=\"mp\" requires explicit critic_devices (the shared critic's device, e.g. "
                + "\"cuda:2\"); set critic_devices, or use parallel_training=\"none\"";
    }

    /** Builds a {@link MAACConfig}; see {@link ActorCriticConfig.Builder} for the shared setters. */
    public static final class Builder extends ActorCriticConfig.Builder<MAACConfig, Builder> {
        private Builder() {
            super("MAACConfig", "MAAC", ActorCriticFields.MAAC, ActorCriticFields.MAAC_HINTS);
        }

        @Override
        protected Builder self() {
            return this;
        }

        public Builder criticLearningRate(double criticLearningRate) {
            return put(CRITIC_LEARNING_RATE, criticLearningRate);
        }

        @Override
        public MAACConfig build() {
            return new MAACConfig(this);
        }
    }
}
