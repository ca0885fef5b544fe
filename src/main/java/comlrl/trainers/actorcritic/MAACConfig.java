package comlrl.trainers.actorcritic;

import static comlrl.trainers.actorcritic.ActorCriticFields.CRITIC_LEARNING_RATE;

import java.util.List;
import java.util.Map;

/**
 * Training configuration of Multi-Agent Actor-Critic with one shared critic (reference §5.2), as
 * {@link IACConfig} is IAC's (the same additions and differences), with MAAC's defaults
 * ({@code discount} 1.0, a required {@code critic_learning_rate}) and without
 * {@code use_separate_critic}, {@code value_clip_range} and {@code value_head_hidden_dim} (its actors
 * carry no value heads; its critic is never clipped). {@code critic_value_head_hidden_dim} (the
 * reference's {@code model_config} key) is a config field here, type-checked and recorded in
 * {@code config.json}.
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

    /** A builder holding this config's values (unset fields stay unset). */
    public Builder toBuilder() {
        return copyInto(builder());
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

        public Builder criticLearningRate(double criticLearningRate) {
            return put(CRITIC_LEARNING_RATE, criticLearningRate);
        }

        @Override
        public MAACConfig build() {
            return new MAACConfig(this);
        }
    }
}
