package comlrl.cli;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.model.LoraAdapter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code algorithm: centralized_magrpo} from the command line takes every setting MAGRPO takes: with
 * {@code lora:} the one actor trains (and saves) a PEFT adapter, with {@code tensorboard: true} the run
 * writes an event file, as {@code config.json} says.
 */
class CentralizedCliTest {

    @Test
    void centralizedMagrpoSavesAPeftAdapterAndWritesTensorBoardEvents(@TempDir Path tmp) throws Exception {
        Path cfg = tmp.resolve("centralized.yaml");
        Files.writeString(cfg, """
                algorithm: centralized_magrpo
                agent_model: builtin:tiny
                num_agents: 2
                lora:
                  r: 4
                  alpha: 8
                  target_modules: [q_proj, v_proj]
                tensorboard: true
                dataset:
                  train: builtin:length-ratio
                  test_size: 0.2
                  split_seed: 42
                formatters:
                  - "Write a short response to this task:\\n{prompt}"
                  - "Write a detailed response to this task:\\n{prompt}"
                reward:
                  type: length_ratio
                args:
                  num_train_epochs: 1
                  num_generations: 2
                  max_new_tokens: 6
                  rollout_buffer_size: 2
                  eval_interval: 0
                  eval_num_samples: 1
                  logging_steps: 1
                  seed: 7
                eval_repeats: 1
                output_dir: %s
                """.formatted(tmp.resolve("out")));
        CliTest.Result r = CliTest.run("train", cfg.toString());
        assertThat(r.code()).as(r.err()).isZero();
        Path out = tmp.resolve("out");
        Path actor = out.resolve("agent_0");
        // the one actor is a LoRA adapter over the frozen base, saved as PEFT saves it
        assertThat(actor.resolve(LoraAdapter.CONFIG_FILE)).isRegularFile();
        assertThat(actor.resolve("adapter_model.safetensors")).isRegularFile();
        assertThat(actor.resolve("model.safetensors")).doesNotExist();
        assertThat(out.resolve("agent_1")).doesNotExist();
        // tensorboard: true wrote an event file beside metrics.jsonl, holding the training events
        List<Path> events;
        try (Stream<Path> files = Files.list(out)) {
            events = files.filter(f -> f.getFileName().toString().startsWith("events.out.tfevents.")).toList();
        }
        assertThat(events).hasSize(1);
        assertThat(Files.size(events.get(0))).isGreaterThan(comlrl.logging.TestSinks.tensorBoardHeaderBytes());
    }
}
