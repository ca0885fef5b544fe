package comlrl.distributed;

import comlrl.data.Dataset;
import comlrl.trainers.TestRewards;
import comlrl.trainers.actorcritic.ActorCriticConfig;
import comlrl.trainers.actorcritic.ActorCriticTrainerBase;
import comlrl.trainers.actorcritic.IACConfig;
import comlrl.trainers.actorcritic.IACTrainer;
import comlrl.trainers.actorcritic.MAACConfig;
import comlrl.trainers.actorcritic.MAACTrainer;
import comlrl.trainers.actorcritic.RolloutSample;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * An IAC or MAAC run through the library API (not the CLI) whose {@code metrics_callback} writes
 * every rollout sample it is given to {@code args[0] + ".rank" + RANK}: {@code args[1]} iac|maac,
 * {@code args[2]} the {@code parallel_training}, {@code args[3]} the {@code ddp_split}. Reference
 * KL is on and there is an evaluation set, so the samples carry reference KLs, old values and prompt
 * ids of every agent, in training and evaluation.
 */
public final class ActorCriticCallbackMain {
    private ActorCriticCallbackMain() {
    }

    public static void main(String[] args) {
        Path out = Path.of(args[0] + ".rank" + System.getenv().getOrDefault("RANK", "0"));
        boolean iac = args[1].equals("iac");
        ActorCriticConfig.Builder<?, ?> config = iac ? IACConfig.builder() : MAACConfig.builder();
        config.numAgents(2).numTurns(1).numTrainEpochs(1).numGenerations(2).maxNewTokens(6).temperature(1.0)
                .topP(1.0).topK(0).rolloutBufferSize(2).evalInterval(2).evalNumSamples(2).agentLearningRate(1e-3)
                .referenceKlEnabled(true).referenceKlCoef(0.1).seed(7).parallelTraining(args[2]);
        config.ddpSplit(args[3]);
        List<Map<String, Object>> rows = new ArrayList<>();
        for (String p : List.of("Write a story about a cat.", "Explain why the sky is blue.", "Say hello.", "Describe the sea.")) {
            rows.add(Map.of("prompt", p));
        }
        ActorCriticTrainerBase.MetricsCallback callback = rollouts -> {
            StringBuilder lines = new StringBuilder();
            for (RolloutSample s : rollouts) {
                lines.append(s.agentIdx()).append(' ').append(s.turnIdx()).append(' ').append(s.generationIdx())
                        .append(' ').append(Arrays.toString(s.fullInputIds())).append(' ').append(s.promptLen())
                        .append(' ').append(s.oldLogprob()).append(' ').append(s.oldValue()).append(' ').append(s.referenceKl()).append(' ')
                        .append(s.reward()).append(' ').append(s.returns()).append(' ')
                        .append(Arrays.toString(s.jointInputIds())).append(' ').append(s.completion()).append('\n');
            }
            try {
                Files.writeString(out, lines, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return Map.of("callback/samples", (double) rollouts.size());
        };
        if (iac) {
            try (IACTrainer t = IACTrainer.builder().agentModel("builtin:tiny").criticModel("builtin:tiny")
                    .rewardFunc(TestRewards.lengthDifference()).trainDataset(Dataset.fromRows(rows))
                    .evalDataset(Dataset.fromRows(rows.subList(0, 2))).metricsCallback(callback)
                    .args((IACConfig) config.build()).verbose(false).build()) {
                t.train();
            }
        } else {
            try (MAACTrainer t = MAACTrainer.builder().agentModel("builtin:tiny").criticModel("builtin:tiny")
                    .rewardFunc(TestRewards.lengthDifference()).trainDataset(Dataset.fromRows(rows))
                    .evalDataset(Dataset.fromRows(rows.subList(0, 2))).metricsCallback(callback)
                    .args((MAACConfig) config.build()).verbose(false).build()) {
                t.train();
            }
        }
        System.out.println("trained");
    }
}
