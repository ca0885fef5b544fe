package comlrl.examples;

import comlrl.data.Dataset;
import comlrl.data.TaskItem;
import comlrl.reward.RewardFunction;
import comlrl.trainers.reinforce.MAGRPOConfig;
import comlrl.trainers.reinforce.MAGRPOTrainer;
import comlrl.utils.Formatter;
import comlrl.utils.RewardProcessors;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The seed documents' length-ratio example, line by line in Java.
 *
 * <pre>
 * java ... comlrl.examples.LengthRatioExample [MODEL] [OUTPUT_DIR]
 * </pre>
 * MODEL defaults to the built-in tiny model; pass {@code Qwen/Qwen2.5-0.5B} to train the real one.
 */
public final class LengthRatioExample {
    private LengthRatioExample() {
    }

    public static void main(String[] args) {
        String model = args.length > 0 ? args[0] : "builtin:tiny";
        Path out = Path.of(args.length > 1 ? args[1] : "saved-models/run-1");
        run(model, out, 1, 4, 128);
    }

    /** Trains and returns the evaluation metrics after training. */
    public static Map<String, Double> run(String model, Path out, int epochs, int generations, int maxNewTokens) {
        // Task sets
        Map<String, List<?>> columns = new LinkedHashMap<>();
        columns.put("prompt", List.of(
                "Describe a city in the clouds.",
                "Invent a new holiday.",
                "Write a bedtime story for a dragon.",
                "Explain how teleportation might work.",
                "Tell a story about dinosaurs.",
                "Describe a world without electricity.",
                "Create a superhero with a unique power.",
                "Write a scene where the moon talks.",
                "Invent a new type of fruit.",
                "Design a playground on Mars."));
        columns.put("target_min", Collections.nCopies(10, 2.0));
        columns.put("target_max", Collections.nCopies(10, 3.0));
        Dataset tasks = Dataset.fromColumns(columns);
        Dataset.Split split = tasks.trainTestSplit(0.2, 42);
        Dataset trainDataset = split.train();
        Dataset evalDataset = split.test();

        // Prompts from tasks
        Formatter briefFormatter = item -> "Write a short response to this task:\n" + item.getString("prompt");
        Formatter detailedFormatter = item -> "Write a detailed response to this task:\n" + item.getString("prompt");
        List<Formatter> formatters = List.of(briefFormatter, detailedFormatter);

        // Rule-based reward: one shared reward per aligned pair of responses
        RewardFunction rewardFunc = RewardFunction.ofTwoAgents((briefCompletions, detailedCompletions, batchItems) -> {
            TaskItem item = batchItems.get(0);
            List<Double> rewards = new ArrayList<>();
            for (int k = 0; k < briefCompletions.size(); k++) {
                String brief = briefCompletions.get(k);
                String detailed = detailedCompletions.get(k);
                if (brief.isEmpty()) {
                    rewards.add(0.0);
                    continue;
                }
                double ratio = (double) detailed.codePointCount(0, detailed.length())
                        / brief.codePointCount(0, brief.length());
                double distance = Math.max(Math.max(item.getDouble("target_min") - ratio,
                        ratio - item.getDouble("target_max")), 0.0);
                rewards.add(Math.exp(-distance));
            }
            return rewards;
        });

        // Training and evaluation
        MAGRPOConfig config = MAGRPOConfig.builder()
                .numAgents(2)
                .numTurns(1)
                .numTrainEpochs(epochs)
                .numGenerations(generations)
                .maxNewTokens(maxNewTokens)
                .evalInterval(4)
                .evalNumSamples(evalDataset.size())
                .evalBatchSize(1)
                .loggingSteps(4)
                .build();

        try (MAGRPOTrainer trainer = MAGRPOTrainer.builder()
                .agentModel(model)
                .numAgents(2)
                .formatters(formatters)
                .rewardFunc(rewardFunc)
                .rewardProcessor(RewardProcessors.scale(1.0))
                .trainDataset(trainDataset)
                .evalDataset(evalDataset)
                .args(config)
                .build()) {
            trainer.train();
            Map<String, Double> metrics = trainer.evaluate(evalDataset.size());
            System.out.println(metrics);
            trainer.saveModel(out);
            return metrics;
        }
    }
}
