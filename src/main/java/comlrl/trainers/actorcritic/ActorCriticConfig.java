package comlrl.trainers.actorcritic;

import static comlrl.trainers.actorcritic.ActorCriticFields.CRITIC_LEARNING_RATE;
import static comlrl.trainers.actorcritic.ActorCriticFields.CRITIC_TYPE;
import static comlrl.trainers.actorcritic.ActorCriticFields.DISCOUNT;
import static comlrl.trainers.actorcritic.ActorCriticFields.NUM_GENERATIONS;
import static comlrl.utils.TrainerFields.CRITIC_DEVICES;
import static comlrl.utils.TrainerFields.CRITIC_VALUE_HEAD_HIDDEN_DIM;
import static comlrl.utils.TrainerFields.VALUE_LOSS_COEF;

import comlrl.utils.ConfigField;
import comlrl.utils.FieldTableConfig;
import comlrl.utils.ParallelTraining;
import java.util.List;
import java.util.Map;

/**
 * What {@link IACConfig} and {@link MAACConfig} share: typed getters and the cross-field validation.
 * Fields are declared and documented once ({@code ActorCriticFields}, {@link comlrl.utils.TrainerFields});
 * the table and builder machinery are {@link FieldTableConfig}'s. Here: {@code num_turns > 1} requires
 * {@code num_generations == 1} and an external transition, and an episode stops after a turn whose
 * mean reward exceeds {@code early_termination_threshold}; {@code advantage_normalization}
 * z-normalises the advantages of each update group (one agent, one turn) that has more than one
 * sample; with {@code parallel_training: "none"} every model sits on the first of
 * {@code agent_devices}, else of {@code critic_devices}; with {@code ddp_split: agents} agent i's
 * actor (IAC: with its critic or value head) lives on process {@code i mod W} only, MAAC's shared
 * critic on every process. Defaults: {@code docs/CONFIG.md}.
 */
public abstract sealed class ActorCriticConfig extends FieldTableConfig permits IACConfig, MAACConfig {

    ActorCriticConfig(Builder<?, ?> b) {
        super(b);
        check(numTurns() > 1 && numGenerations() != 1 ? "Multi-turn " + algorithmName() + " currently supports "
                + "num_generations == 1, got num_generations=" + numGenerations() + " with num_turns=" + numTurns()
                + "; set num_generations to 1, or num_turns to 1 for several samples per prompt" : null);
        checkAgentPlacement(true);
        check(parallelTraining() == ParallelTraining.MP && criticDevices() == null ? missingCriticDevices() : null);
        checkReferenceDevices(referenceKlEnabled(), numAgents(), "agent");
    }

    /** The message when {@code parallel_training="mp"} lacks {@code critic_devices} this config needs, else null. */
    abstract String missingCriticDevices();

    /** {@code critic_learning_rate}; IAC's null resolves to {@code agent_learning_rate}. */
    public double criticLearningRate() {
        return get(CRITIC_LEARNING_RATE);
    }

    public double valueLossCoef() {
        return get(VALUE_LOSS_COEF);
    }

    public CriticType criticType() {
        return get(CRITIC_TYPE);
    }

    public Integer criticValueHeadHiddenDim() {
        return get(CRITIC_VALUE_HEAD_HIDDEN_DIM);
    }

    /** {@code critic_devices}; unset, each critic sits with its actor (IAC) or with agent 0 (MAAC). */
    public List<String> criticDevices() {
        return get(CRITIC_DEVICES);
    }

    public double discount() {
        return get(DISCOUNT);
    }

    public int numGenerations() {
        return get(NUM_GENERATIONS);
    }

    /** Builds a config {@code C}: setters take Java values, {@code apply}/{@code set} config keys; build validates. */
    public abstract static sealed class Builder<C extends ActorCriticConfig, B extends Builder<C, B>>
            extends FieldTableConfig.Builder<C, B> permits IACConfig.Builder, MAACConfig.Builder {
        Builder(String configTypeName, String algorithmName, List<ConfigField<?>> fields, Map<String, String> hints) {
            super(configTypeName, algorithmName, fields, hints);
        }

        public B valueLossCoef(double valueLossCoef) {
            return put(VALUE_LOSS_COEF, valueLossCoef);
        }

        /** Null = V. */
        public B criticType(CriticType criticType) {
            return put(CRITIC_TYPE, criticType == null ? CriticType.V : criticType);
        }

        /** "v" or "q" (any case); null = "v". */
        public B criticType(String criticType) {
            return put(CRITIC_TYPE, CriticType.parse(criticType));
        }

        public B criticValueHeadHiddenDim(Integer hiddenDim) {
            return put(CRITIC_VALUE_HEAD_HIDDEN_DIM, hiddenDim);
        }

        /** One device per critic (IAC) or the shared critic's device (MAAC); null = with the actors. */
        public B criticDevices(List<String> criticDevices) {
            return put(CRITIC_DEVICES, copy(criticDevices));
        }

        /** The same device for every critic. */
        public B criticDevices(String device) {
            return put(CRITIC_DEVICES, device == null ? null : List.of(device));
        }

        public B discount(double discount) {
            return put(DISCOUNT, discount);
        }

        public B numGenerations(int numGenerations) {
            return put(NUM_GENERATIONS, numGenerations);
        }
    }
}
