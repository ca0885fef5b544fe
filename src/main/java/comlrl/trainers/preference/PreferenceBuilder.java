package comlrl.trainers.preference;

import comlrl.tokenizer.Tokenizer;
import comlrl.trainers.actorcritic.ActorCriticTrainerBase;
import comlrl.trainers.common.TrainerBuilder;
import comlrl.trainers.common.TrainerSettings;
import comlrl.trainers.reinforce.CentralizedAdapter;
import comlrl.trainers.reinforce.Centralization;
import comlrl.utils.CollaborationMode;
import java.util.List;
import java.util.Objects;
import java.util.function.BiFunction;
import java.util.function.Supplier;

/**
 * What the preference trainers' builders take beyond {@link TrainerBuilder}: the centralized adapter,
 * and ({@link Rlhf}) the critics of IAC/MAAC backends; names follow the reference's constructor keywords.
 */
public abstract class PreferenceBuilder<C extends PreferenceConfig, B extends PreferenceBuilder<C, B>>
        extends TrainerBuilder<C, B> {
    PreferenceBuilder() {
    }

    /**
     * {@code centralized_comparator_adapter}: how a centralized prompt is built from the roles'
     * prompts and a completion split into their answers (default
     * {@link comlrl.trainers.reinforce.TaggedCentralizedAdapter}).
     */
    public B centralizedAdapter(CentralizedAdapter adapter) {
        return set(Centralization.ADAPTER, Objects.requireNonNull(adapter, "centralized adapter"));
    }

    /** The trainer's {@code args}; fails naming {@code configName} when none was given. */
    C requireArgs(String configName) {
        if (args() == null) {
            throw new IllegalArgumentException("args (a " + configName + ") must be provided");
        }
        return args();
    }

    /**
     * The logger of a trainer that loads its agents through another (MARLHF, MADPOIter): its tracked
     * config names the agents as given; {@code main} false on the other processes of a ddp run.
     */
    comlrl.logging.MetricsLogger stageLogger(String algorithm, boolean main) {
        List<?> agents = get(TrainerSettings.AGENTS);
        List<?> described = agents != null ? agents : java.util.Collections.nCopies(args().numAgents(),
                String.valueOf(get(TrainerSettings.AGENT_MODEL)));
        return settings().metricsLogger(args().loggingSteps(), algorithm, trackedConfig(args().toMap(), described), main);
    }

    /** {@code agent_model} when it is a model id or directory, else null. */
    String agentSource() {
        return get(TrainerSettings.AGENT_MODEL) instanceof String source ? source : null;
    }

    /**
     * {@code construct}s the trainer; with {@code collaboration_mode: centralized} it sees, during the
     * call, the one actor's settings ({@link Centralization#actorSettings}, then {@code more}) (§7.5).
     */
    <T> T build(BiFunction<Centralization, TrainerSettings, TrainerSettings> more,
            Supplier<T> construct) {
        if (args() == null || args().collaborationMode() != CollaborationMode.CENTRALIZED) {
            return construct.get();
        }
        TrainerSettings given = settings();
        Centralization centralization = Centralization.of(given, args().numAgents());
        settings(more.apply(centralization, centralization.actorSettings(given)));
        try {
            return construct.get();
        } finally {
            settings(given);
        }
    }

    /** The RLHF builders: plus the critics, tokenizers and metrics callback of IAC/MAAC backends. */
    public abstract static class Rlhf<C extends PreferenceConfig, B extends Rlhf<C, B>> extends PreferenceBuilder<C, B> {

        Rlhf() {
        }

        /** IAC/MAAC backends: the model of every critic (default {@code critic_model_name}, else the first actor's). */
        public B criticModel(Object criticModel) {
            return set(TrainerSettings.CRITIC_MODEL, criticModel);
        }

        /** IAC/MAAC backends: one critic model per critic. */
        public B critics(List<?> critics) {
            return set(TrainerSettings.CRITICS, critics);
        }

        /** IAC/MAAC backends with an {@code agents} list: the tokenizer of every actor. */
        public B tokenizer(Tokenizer tokenizer) {
            return set(TrainerSettings.TOKENIZERS, tokenizer == null ? null : List.of(tokenizer));
        }

        public B tokenizers(List<Tokenizer> tokenizers) {
            return set(TrainerSettings.TOKENIZERS, tokenizers);
        }

        /** IAC/MAAC backends: {@code metrics_callback(rollouts)}. */
        public B metricsCallback(ActorCriticTrainerBase.MetricsCallback metricsCallback) {
            return set(ActorCriticTrainerBase.Builder.METRICS_CALLBACK, metricsCallback);
        }
    }
}
