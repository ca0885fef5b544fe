package comlrl.cli;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.trainers.Algorithms;
import comlrl.utils.ConfigField;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class ConfigDocsTest {

    @Test
    void docsConfigMdIsCurrent() throws Exception {
        Path file = Path.of(ConfigDocs.FILE);
        String committed = Files.exists(file) ? Files.readString(file) : "(missing)";
        assertThat(committed)
                .withFailMessage(ConfigDocs.FILE + " is stale: the config declarations changed. Regenerate it with `"
                        + ConfigDocs.REGENERATE + "` (after mvn -q -B package -DskipTests) and commit it.")
                .isEqualTo(ConfigDocs.render());
    }

    @Test
    void everyKeyOfEveryAlgorithmIsListed() {
        String md = ConfigDocs.render();
        for (Algorithms.Algorithm algorithm : Algorithms.all()) {
            assertThat(md).contains("| `" + algorithm.configName() + "` |");
            for (ConfigField<?> field : algorithm.fields()) {
                assertThat(md).contains("| `" + field.key + "` |");
            }
        }
        for (String key : RunConfig.TOP_LEVEL.keySet()) {
            assertThat(md).contains("| `" + key + "` |");
        }
    }

    @Test
    void rowsCarryTypeDefaultsAllowedValuesAndAlgorithms() {
        String md = ConfigDocs.render();
        // num_train_epochs: 20 in the MAGRPO family, MADPO and MARLHF, 40 in IAC/MAAC, per iteration 1 (MADPOIter)
        // and 2 (MARLHFIter); every algorithm has it
        assertThat(md).contains("| `num_train_epochs` | Passes over the training task items. | int | 20 (magrpo, mareinforce, maremax, marloo, "
                + "centralized_magrpo, madpo, marlhf); 40 (iac, maac); 1 (madpo_iter); 2 (marlhf_iter) | >= 1 | all |");
        // advantage_mode: the variants' defaults, and MARLHF's own field (null follows rl_algorithm) in a row of its own
        assertThat(md).contains("| `advantage_mode` | The group baseline subtracted from rewards: mean, raw (none), max or rloo "
                + "(leave-one-out mean). | string | \"mean\" (magrpo, centralized_magrpo, madpo, madpo_iter); "
                + "\"raw\" (mareinforce); \"max\" (maremax); \"rloo\" (marloo) | \"mean\", \"raw\", \"max\", \"rloo\" | ");
        // collaboration_mode: only the centralized MAGRPO among the MA-REINFORCE family
        assertThat(md).containsPattern("\\| `collaboration_mode` \\| [^|]+ \\| string \\| \"centralized\" \\(centralized_magrpo\\); "
                + "\"decentralized\" \\(madpo, [a-z_, ]+\\) \\|");
        // a field with a fallback says whose value it takes
        assertThat(md).containsPattern("\\| `train_batch_size` \\| [^|]+ \\| int or null \\| null \\(= rollout_buffer_size\\) \\|");
        // MAGRPO's num_generations (>= 2) and the actor-critic one (>= 1) are different rules: two rows
        assertThat(md).contains("| `num_generations` | Completions each agent samples per rollout node (G, the group of the "
                + "baseline). | int | 4 | >= 2: the group baseline requires multiple samples per "
                + "agent | magrpo, mareinforce, maremax, marloo, centralized_magrpo |");
        // a fractional default as a user writes it in YAML, not in Java's exponent form
        assertThat(md).contains("| `reward_learning_rate` | AdamW learning rate of the reward model. | float | 0.00001 |")
                .doesNotContain("E-");
    }

    @Test
    void everyFieldOfEveryAlgorithmSaysWhatItDoes() {
        for (Algorithms.Algorithm algorithm : Algorithms.all()) {
            for (ConfigField<?> field : algorithm.fields()) {
                assertThat(field.meaning).as("%s of %s", field.key, algorithm.configName()).isNotBlank();
            }
        }
    }

    @Test
    void configKeysAndTrainHelpListTheKeysWithMeaningTypeAndDefault() {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        java.io.PrintStream before = System.out;
        System.setOut(new java.io.PrintStream(out, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            assertThat(Main.run("config-keys", "iac")).isZero();
            assertThat(Main.run("train", "--help")).isZero();
        } finally {
            System.setOut(before);
        }
        String text = out.toString(java.nio.charset.StandardCharsets.UTF_8);
        String iac = text.substring(0, text.indexOf("Usage: comlrl train"));
        assertThat(iac).contains("args: keys of iac (IACConfig):")
                .contains("  discount\n    Discount gamma of the TD targets across turns.\n    (float, default 0.9; in [0, 1]")
                .contains("  critic_type\n").doesNotContain("  dpo_beta\n");
        String help = text.substring(text.indexOf("Usage: comlrl train"));
        assertThat(help).contains("Run config, top-level keys:").contains("  environment\n")
                .contains("  dpo_beta\n    Beta of the DPO loss").contains("madpo, madpo_iter, marlhf, marlhf_iter)");
    }
}
