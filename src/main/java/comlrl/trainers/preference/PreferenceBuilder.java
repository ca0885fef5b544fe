package comlrl.trainers.preference;

import comlrl.tokenizer.Tokenizer;
import comlrl.trainers.EvalAggregator;
import comlrl.trainers.EvalLogger;
import comlrl.trainers.actorcritic.ActorCriticTrainerBase;
import comlrl.trainers.common.TrainerBuilder;
import comlrl.trainers.reinforce.CentralizedAdapter;
import java.util.List;
import java.util.Objects;

/**
 * What the preference trainers' builders take beyond {@link TrainerBuilder}: the homogeneous agent
 * shortcut, the agent count, MAGRPO-style evaluation metrics and the centralized adapter; the
 * RLHF builders ({@link Rlhf}) also take the critics of IAC/MAAC backends. Names follow the
 * reference's constructor keywords.
 */
public abstract class PreferenceBuilder<B extends PreferenceBuilder<B>> extends TrainerBuilder<B> {
    String agentModel;
    Integer numAgents;
    EvalLogger evalLogger;
    EvalAggregator evalAggregator;
    CentralizedAdapter centralizedAdapter;

    PreferenceBuilder() {
    }

    /** One model id or directory for every agent ({@code agent_model}). */
    public B agentModel(String agentModel) {
        this.agentModel = agentModel;
        return self();
    }

    public B numAgents(int numAgents) {
        this.numAgents = numAgents;
        return self();
    }

    /** Custom evaluation metrics (given with {@link #evalAggregator}). */
    public B evalLogger(EvalLogger evalLogger) {
        this.evalLogger = evalLogger;
        return self();
    }

    public B evalAggregator(EvalAggregator evalAggregator) {
        this.evalAggregator = evalAggregator;
        return self();
    }

    /**
     * {@code centralized_comparator_adapter}: how a centralized prompt is built from the roles'
     * prompts and a completion split into their answers (default
     * {@link comlrl.trainers.reinforce.TaggedCentralizedAdapter}).
     */
    public B centralizedAdapter(CentralizedAdapter adapter) {
        this.centralizedAdapter = Objects.requireNonNull(adapter, "centralized adapter");
        return self();
    }

    /** Sets this builder's values (these and {@link TrainerBuilder}'s) on {@code target}, a stage's builder. */
    <C extends PreferenceBuilder<C>> C copyPreferenceInto(C target) {
        copyInto(target);
        target.agentModel = agentModel;
        target.numAgents = numAgents;
        target.evalLogger = evalLogger;
        target.evalAggregator = evalAggregator;
        target.centralizedAdapter = centralizedAdapter;
        return target;
    }

    /** The RLHF builders: plus the critics, tokenizers and metrics callback of IAC/MAAC backends. */
    public abstract static class Rlhf<B extends Rlhf<B>> extends PreferenceBuilder<B> {
        Object criticModel;
        List<?> critics;
        Tokenizer tokenizer;
        List<Tokenizer> tokenizers;
        ActorCriticTrainerBase.MetricsCallback metricsCallback;

        Rlhf() {
        }

        /** IAC/MAAC backends: the model of every critic (default {@code critic_model_name}, else the first actor's). */
        public B criticModel(Object criticModel) {
            this.criticModel = criticModel;
            return self();
        }

        /** IAC/MAAC backends: one critic model per critic. */
        public B critics(List<?> critics) {
            this.critics = critics;
            return self();
        }

        /** IAC/MAAC backends with an {@code agents} list: the tokenizer of every actor. */
        public B tokenizer(Tokenizer tokenizer) {
            this.tokenizer = tokenizer;
            return self();
        }

        public B tokenizers(List<Tokenizer> tokenizers) {
            this.tokenizers = tokenizers;
            return self();
        }

        /** IAC/MAAC backends: {@code metrics_callback(rollouts)}. */
        public B metricsCallback(ActorCriticTrainerBase.MetricsCallback metricsCallback) {
            this.metricsCallback = metricsCallback;
            return self();
        }

        /** {@link #copyPreferenceInto}, with the critics' values. */
        <C extends Rlhf<C>> C copyRlhfInto(C target) {
            copyPreferenceInto(target);
            target.criticModel = criticModel;
            target.critics = critics;
            target.tokenizer = tokenizer;
            target.tokenizers = tokenizers;
            target.metricsCallback = metricsCallback;
            return target;
        }
    }
}
