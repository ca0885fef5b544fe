package comlrl.trainers;

import comlrl.trainers.actorcritic.ActorCriticTrainerBase;
import comlrl.trainers.actorcritic.IACConfig;
import comlrl.trainers.actorcritic.IACTrainer;
import comlrl.trainers.actorcritic.MAACConfig;
import comlrl.trainers.actorcritic.MAACTrainer;
import comlrl.trainers.common.Trainer;
import comlrl.trainers.common.TrainerBuilder;
import comlrl.trainers.preference.MADPOConfig;
import comlrl.trainers.preference.MADPOIterConfig;
import comlrl.trainers.preference.MADPOIterTrainer;
import comlrl.trainers.preference.MADPOTrainer;
import comlrl.trainers.preference.MARLHFConfig;
import comlrl.trainers.preference.MARLHFIterConfig;
import comlrl.trainers.preference.MARLHFIterTrainer;
import comlrl.trainers.preference.MARLHFTrainer;
import comlrl.trainers.preference.PreferenceBuilder;
import comlrl.trainers.reinforce.MAGRPOConfig;
import comlrl.trainers.reinforce.MAGRPOTrainer;
import comlrl.trainers.reinforce.ReinforceBuilder;
import comlrl.trainers.reinforce.ReinforceAlgorithm;
import comlrl.utils.ConfigField;
import comlrl.utils.ConfigMaps;
import comlrl.utils.TrainerConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The algorithm registry: each {@code algorithm:} name of a run config with its config type (read
 * from an {@code args:} section by {@link Algorithm#fromMap}) and the factory of its trainer, so
 * that a caller holds one {@link TrainerConfig} and no branch per family. {@code docs/CONFIG.md} is
 * generated from these entries' field tables.
 */
public final class Algorithms {
    private Algorithms() {
    }

    /** What a family of algorithms asks of a run beyond its config. */
    public enum Family {
        /** MAGRPO and its variants: the trainer counts the agents; multi-turn with a transition. */
        REINFORCE(false, false),
        /** IAC, MAAC: {@code args.num_agents} is the agent count; critics from the run config. */
        ACTOR_CRITIC(true, false),
        /** MADPO, MARLHF, their iterative versions: as ACTOR_CRITIC; one turn; resumes into {@code resume-*}. */
        PREFERENCE(true, true);

        /** Whether the run's agent count goes into {@code args.num_agents} (and must agree with it). */
        public final boolean argsCountAgents;
        /** Whether training is single-turn and a resumed run writes its outputs into a subdirectory. */
        public final boolean preference;

        Family(boolean argsCountAgents, boolean preference) {
            this.argsCountAgents = argsCountAgents;
            this.preference = preference;
        }
    }

    /** What a run config gives a trainer beyond its config and the settings every trainer builder takes. */
    public record Parts(int numAgents, String agentModel, String criticModel, List<String> critics,
                        ExternalTransition transition) {
    }

    /** Builds an algorithm's trainer: {@code common} applies the settings every trainer builder takes. */
    @FunctionalInterface
    public interface TrainerFactory {
        Trainer build(TrainerConfig args, Parts parts, Consumer<TrainerBuilder<?, ?>> common);
    }

    /**
     * One algorithm: its config name ({@code algorithm: magrpo}), the reference's name ("MAGRPO"), its
     * family, how its config is read, whether it takes critic models (given its config), its trainer.
     */
    public record Algorithm(String configName, String displayName, Family family,
                            Function<Map<String, ?>, ? extends TrainerConfig> reader,
                            Predicate<TrainerConfig> takesCritics, TrainerFactory trainer) {

        /** The config from snake_case keys; missing keys keep this algorithm's defaults. */
        public TrainerConfig fromMap(Map<String, ?> values) {
            return reader.apply(values);
        }

        /** The config with every default. */
        public TrainerConfig defaults() {
            return fromMap(Map.of());
        }

        /** This algorithm's config fields, in order. */
        public List<ConfigField<?>> fields() {
            return defaults().fields();
        }
    }

    private static final List<Algorithm> ALL = register();

    /** Every algorithm, in the order the documentation lists them. */
    public static List<Algorithm> all() {
        return ALL;
    }

    /** The algorithm a run config names ("magrpo", any case); fails with the closest name and the valid ones. */
    public static Algorithm parse(String name) {
        String key = name == null ? "" : name.trim().toLowerCase(Locale.ROOT);
        List<String> names = ALL.stream().map(Algorithm::configName).toList();
        return ALL.stream().filter(a -> a.configName().equals(key)).findFirst().orElseThrow(() ->
                new IllegalArgumentException("Unknown algorithm " + (name == null ? "null" : "'" + name + "'")
                        + "; did you mean '" + ConfigMaps.closest(key, names) + "'? Valid: "
                        + String.join(", ", names)));
    }

    /** The algorithm whose reference name is {@code displayName} ("MAGRPO", "MADPOIter"), if any. */
    public static Optional<Algorithm> byDisplayName(String displayName) {
        return ALL.stream().filter(a -> a.displayName().equals(displayName)).findFirst();
    }

    /** Where {@code trainer} writes its outputs: its own directory ({@link Trainer#outputDir}), else {@code runDir}. */
    public static Path outputsOf(Trainer trainer, Path runDir) {
        return trainer.outputDir() != null ? trainer.outputDir() : runDir;
    }

    private static List<Algorithm> register() {
        List<Algorithm> all = new ArrayList<>();
        for (ReinforceAlgorithm algorithm : ReinforceAlgorithm.values()) {
            all.add(new Algorithm(algorithm.configName(), algorithm.displayName(), Family.REINFORCE, algorithm::fromMap,
                    args -> false, (args, parts, common) -> {
                        ReinforceBuilder<?> b = MAGRPOTrainer.builderFor(algorithm);
                        given(b, parts, common);
                        return b.numAgents(parts.numAgents()).args((MAGRPOConfig) args)
                                .externalTransition(parts.transition()).build();
                    }));
        }
        all.add(actorCritic("iac", "IAC", IACConfig::fromMap, IACTrainer::builder));
        all.add(actorCritic("maac", "MAAC", MAACConfig::fromMap, MAACTrainer::builder));
        all.add(new Algorithm("madpo", "MADPO", Family.PREFERENCE, MADPOConfig::fromMap, args -> false,
                (args, parts, common) -> preference(MADPOTrainer.builder(), parts, common).args((MADPOConfig) args)
                        .build()));
        all.add(new Algorithm("madpo_iter", "MADPOIter", Family.PREFERENCE, MADPOIterConfig::fromMap, args -> false,
                (args, parts, common) -> preference(MADPOIterTrainer.builder(), parts, common)
                        .args((MADPOIterConfig) args).build()));
        all.add(new Algorithm("marlhf", "MARLHF", Family.PREFERENCE, MARLHFConfig::fromMap,
                args -> ((MARLHFConfig) args).rlAlgorithm().isActorCritic(),
                (args, parts, common) -> rlhf(MARLHFTrainer.builder(), parts, common).args((MARLHFConfig) args)
                        .build()));
        all.add(new Algorithm("marlhf_iter", "MARLHFIter", Family.PREFERENCE, MARLHFIterConfig::fromMap,
                args -> ((MARLHFIterConfig) args).rlAlgorithm().isActorCritic(),
                (args, parts, common) -> rlhf(MARLHFIterTrainer.builder(), parts, common)
                        .args((MARLHFIterConfig) args).build()));
        return Collections.unmodifiableList(all);
    }

    private static Algorithm actorCritic(String name, String displayName,
            Function<Map<String, ?>, ? extends TrainerConfig> reader,
            java.util.function.Supplier<? extends ActorCriticTrainerBase.Builder<?>> builder) {
        return new Algorithm(name, displayName, Family.ACTOR_CRITIC, reader, args -> true, (args, parts, common) -> {
            ActorCriticTrainerBase.Builder<?> b = builder.get();
            given(b, parts, common);
            return b.args((comlrl.trainers.actorcritic.ActorCriticConfig) args).criticModel(parts.criticModel())
                    .critics(parts.critics()).externalTransition(parts.transition()).build();
        });
    }

    /** {@code builder} with the settings every trainer takes ({@code common}) and the run's agent model. */
    private static void given(TrainerBuilder<?, ?> builder, Parts parts, Consumer<TrainerBuilder<?, ?>> common) {
        common.accept(builder);
        if (parts.agentModel() != null) {
            builder.agentModel(parts.agentModel());
        }
    }

    /** The preference builders' agent count, agent model and common settings. */
    private static <B extends PreferenceBuilder<?, B>> B preference(B builder, Parts parts,
            Consumer<TrainerBuilder<?, ?>> common) {
        given(builder, parts, common);
        return builder.numAgents(parts.numAgents());
    }

    /** {@link #preference}, plus the critics of MARLHF's IAC/MAAC backends. */
    private static <B extends PreferenceBuilder.Rlhf<?, B>> B rlhf(B builder, Parts parts,
            Consumer<TrainerBuilder<?, ?>> common) {
        preference(builder, parts, common);
        if (parts.criticModel() != null) {
            builder.criticModel(parts.criticModel());
        }
        if (parts.critics() != null) {
            builder.critics(parts.critics());
        }
        return builder;
    }
}
