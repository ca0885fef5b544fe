package comlrl.trainers;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.data.Dataset;
import comlrl.data.TaskItem;
import comlrl.reward.RewardFunction;
import comlrl.trainers.actorcritic.IACConfig;
import comlrl.trainers.actorcritic.IACTrainer;
import comlrl.trainers.actorcritic.MAACConfig;
import comlrl.trainers.actorcritic.MAACTrainer;
import comlrl.trainers.common.Trainer;
import comlrl.trainers.common.TrainerBuilder;
import comlrl.trainers.preference.MADPOConfig;
import comlrl.trainers.preference.MADPOTrainer;
import comlrl.trainers.reinforce.MAGRPOConfig;
import comlrl.trainers.reinforce.MAGRPOTrainer;
import comlrl.trainers.reinforce.MAREINFORCEConfig;
import comlrl.trainers.reinforce.MAREINFORCETrainer;
import comlrl.utils.Formatters;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code eval_batch_size} reaches the evaluation of every trainer family that takes it: the evaluation
 * items are sampled {@code eval_batch_size} at a time, in order, each its own episode, and the metrics
 * stay finite. Seen through the order of the formatter's and the reward's calls (every item of a batch
 * is formatted before the batch is sampled, then each item is scored), and, where the family takes an
 * {@code eval_logger} (IAC and MAAC do not), through its one {@link EvalLogger#logSamples} call per batch.
 * In a batch each item's episode ends on its own rewards ({@code early_termination_threshold}).
 */
class EvalBatchSizeTest {
    private static final int ITEMS = 5;

    @TempDir
    static Path models;
    /** Two agents ({@link TinyAgents#pair}); the critics are copies of one of them. */
    static List<Path> agents;

    @BeforeAll
    static void writeAgents() {
        agents = TinyAgents.pair(models, 11);
    }

    static Dataset tasks(int n) {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            rows.add(Map.of("prompt", prompt(i)));
        }
        return Dataset.fromRows(rows);
    }

    static String prompt(int item) {
        return "Task " + item + ": say something.";
    }

    /** The index of {@code item} (at a later turn its original prompt, {@link Formatters#ORIGINAL_PROMPT_FIELD}). */
    static int itemOf(TaskItem item) {
        String prompt = item.getString(Formatters.ORIGINAL_PROMPT_FIELD, item.getString("prompt", ""));
        return Integer.parseInt(prompt.replaceAll("^Task (\\d+):.*", "$1"));
    }

    /** A trainer of one family, its evaluation set {@link #ITEMS} items, formatter and reward recording into {@code seen}. */
    enum Family {
        MAGRPO(true), MAREINFORCE(true), IAC(false), MAAC(false), MADPO(true);

        /** Whether the family takes {@code eval_logger} and {@code eval_aggregator}. */
        final boolean takesEvalLogger;

        Family(boolean takesEvalLogger) {
            this.takesEvalLogger = takesEvalLogger;
        }

        Trainer build(int evalBatchSize, Seen seen, Path out) {
            return switch (this) {
                case MAGRPO -> seen.apply(MAGRPOTrainer.builder().agents(team()), out)
                        .args(reinforce(MAGRPOConfig.builder(), evalBatchSize).build()).build();
                case MAREINFORCE -> seen.apply(MAREINFORCETrainer.builder().agents(team()), out)
                        .args(reinforce(MAREINFORCEConfig.builder(), evalBatchSize).build()).build();
                case IAC -> seen.apply(IACTrainer.builder().agents(team()).criticModel(agents.get(0).toString()), out)
                        .args(IACConfig.builder().numAgents(2).numTurns(1).numGenerations(2).maxNewTokens(6)
                                .temperature(1.0).topP(1.0).topK(0).evalInterval(0).evalNumSamples(ITEMS)
                                .evalBatchSize(evalBatchSize).seed(7).build()).build();
                case MAAC -> seen.apply(MAACTrainer.builder().agents(team()).criticModel(agents.get(1).toString()), out)
                        .args(MAACConfig.builder().numAgents(2).numTurns(1).numGenerations(2).maxNewTokens(6)
                                .temperature(1.0).topP(1.0).topK(0).evalInterval(0).evalNumSamples(ITEMS)
                                .evalBatchSize(evalBatchSize).seed(7).build()).build();
                case MADPO -> seen.apply(MADPOTrainer.builder().agents(team()), out)
                        .args(MADPOConfig.builder().numAgents(2).preferenceNumCandidates(4).maxNewTokens(6)
                                .temperature(1.0).topP(1.0).topK(0).evalInterval(0).evalNumSamples(ITEMS)
                                .evalBatchSize(evalBatchSize).seed(9).build()).build();
            };
        }

        private static List<String> team() {
            return agents.stream().map(Path::toString).toList();
        }

        private static <C extends MAGRPOConfig> MAGRPOConfig.Builder<C> reinforce(MAGRPOConfig.Builder<C> b,
                int evalBatchSize) {
            return b.numTurns(1).numGenerations(2).maxNewTokens(6).temperature(1.0).topP(1.0).topK(0).evalInterval(0)
                    .evalNumSamples(ITEMS).evalBatchSize(evalBatchSize).seed(7);
        }
    }

    /**
     * What one evaluation did, in order: each item formatted ({@code F<item>}) and scored ({@code R<item>}),
     * each scored item's first joint response, and per {@link EvalLogger#logSamples} call its items.
     */
    private static final class Seen implements EvalLogger {
        final boolean logger;
        final List<String> events = new ArrayList<>();
        final Map<Integer, List<String>> scored = new java.util.TreeMap<>();
        final List<List<Integer>> logged = new ArrayList<>();
        final RewardFunction reward;

        Seen(Family family) {
            this(family, TestRewards.lengthDifference());
        }

        Seen(Family family, RewardFunction reward) {
            this.logger = family.takesEvalLogger;
            this.reward = reward;
        }

        <B extends TrainerBuilder<?, B>> B apply(B b, Path out) {
            b.formatters(item -> {
                events.add("F" + itemOf(item));
                return item.getString("prompt", "");
            }).rewardFunc((completions, items) -> {
                int item = itemOf(items.get(0));
                events.add("R" + item);
                scored.putIfAbsent(item, List.of(completions.get(0).get(0), completions.get(1).get(0)));
                return reward.score(completions, items);
            }).trainDataset(tasks(1)).evalDataset(tasks(ITEMS)).outputDir(out).verbose(false);
            return logger ? b.evalLogger(this).evalAggregator(EvalAggregator.mean()) : b;
        }

        /** One call per batch (the evaluator's {@link EvalLogger#logSamples} of one sample each). */
        @Override
        public List<Map<String, Double>> log(List<List<List<String>>> completions, List<TaskItem> batch,
                List<String> prompts) {
            assertThat(batch.stream().map(i -> i.getString("prompt", "")).toList()).isEqualTo(prompts);
            for (int j = 0; j < batch.size(); j++) { // the completions the reward scored, item by item
                assertThat(List.of(completions.get(0).get(j).get(0), completions.get(1).get(j).get(0)))
                        .isEqualTo(scored.get(itemOf(batch.get(j))));
            }
            logged.add(batch.stream().map(EvalBatchSizeTest::itemOf).toList());
            return batch.stream().map(i -> Map.of("items_in_batch", (double) batch.size())).toList();
        }

        /** The items formatted together before each sampling, batch by batch (an item's agents count once). */
        List<List<Integer>> formattedTogether() {
            List<List<Integer>> batches = new ArrayList<>();
            List<Integer> current = new ArrayList<>();
            for (String e : events) {
                int item = Integer.parseInt(e.substring(1));
                if (e.startsWith("F") && !current.contains(item)) {
                    current.add(item);
                } else if (e.startsWith("R") && !current.isEmpty()) {
                    batches.add(current);
                    current = new ArrayList<>();
                }
            }
            return batches;
        }

        List<Integer> scoredInOrder() {
            return events.stream().filter(e -> e.startsWith("R")).map(e -> Integer.parseInt(e.substring(1))).toList();
        }
    }

    @ParameterizedTest
    @EnumSource(Family.class)
    void evaluationSamplesEvalBatchSizeItemsTogetherInOrder(Family family, @TempDir Path out) throws Exception {
        Seen one = new Seen(family);
        try (Trainer t = family.build(1, one, out.resolve("one"))) {
            t.evaluate();
        }
        assertThat(one.formattedTogether()).containsExactly(List.of(0), List.of(1), List.of(2), List.of(3), List.of(4));
        if (family.takesEvalLogger) {
            assertThat(one.logged).containsExactly(List.of(0), List.of(1), List.of(2), List.of(3), List.of(4));
        }

        Seen two = new Seen(family);
        Map<String, Double> metrics;
        try (Trainer t = family.build(2, two, out.resolve("two"))) {
            metrics = t.evaluate();
        }
        assertThat(two.formattedTogether()).as("eval_batch_size items sampled together")
                .containsExactly(List.of(0, 1), List.of(2, 3), List.of(4));
        assertThat(two.scoredInOrder()).containsExactly(0, 1, 2, 3, 4);
        if (family.takesEvalLogger) {
            assertThat(two.logged).as("one logger call per batch").containsExactly(List.of(0, 1), List.of(2, 3), List.of(4));
            assertThat(metrics).containsEntry("eval/items_in_batch", 9.0 / 5);
        }
        assertThat(metrics).containsKey("eval/turn_1/reward_mean").allSatisfy((k, v) -> assertThat(v).as(k).isFinite());

        // eval_samples.jsonl holds the first items in order, each with the completions the reward scored for it
        List<String> lines = Files.readAllLines(out.resolve("two/eval_samples.jsonl"));
        JsonNode samples = new ObjectMapper().readTree(lines.get(lines.size() - 1)).get("samples");
        assertThat(samples).hasSize(4);
        for (int j = 0; j < samples.size(); j++) {
            assertThat(samples.get(j).get("item").asInt()).isEqualTo(j);
            assertThat(samples.get(j).get("prompts").get(0).get(0).asText()).isEqualTo(prompt(j));
            for (int a = 0; a < 2; a++) {
                assertThat(samples.get(j).get("completions").get(a).get(0).asText()).isEqualTo(two.scored.get(j).get(a));
            }
        }
    }

    /** IAC or MAAC over two turns, an episode ending after a turn whose reward exceeds 0.5. */
    private static Trainer twoTurns(Family family, int evalBatchSize, Seen seen, Path out) {
        ExternalTransition goOn = ctx -> List.of("go on", "go on");
        return switch (family) {
            case IAC -> seen.apply(IACTrainer.builder().agents(Family.team()).criticModel(agents.get(0).toString()), out)
                    .externalTransition(goOn).args(IACConfig.builder().numAgents(2).numTurns(2).numGenerations(1)
                            .maxNewTokens(4).temperature(1.0).topP(1.0).topK(0).earlyTerminationThreshold(0.5)
                            .evalInterval(0).evalNumSamples(ITEMS).evalBatchSize(evalBatchSize).seed(3).build()).build();
            case MAAC -> seen.apply(MAACTrainer.builder().agents(Family.team()).criticModel(agents.get(1).toString()), out)
                    .externalTransition(goOn).args(MAACConfig.builder().numAgents(2).numTurns(2).numGenerations(1)
                            .maxNewTokens(4).temperature(1.0).topP(1.0).topK(0).earlyTerminationThreshold(0.5)
                            .evalInterval(0).evalNumSamples(ITEMS).evalBatchSize(evalBatchSize).seed(3).build()).build();
            default -> throw new IllegalArgumentException(family.name());
        };
    }

    @ParameterizedTest
    @EnumSource(value = Family.class, names = {"IAC", "MAAC"})
    void anItemOfABatchEndsItsEpisodeOnItsOwnRewards(Family family, @TempDir Path out) throws Exception {
        // even items score 1 (above the threshold: their episode ends after turn 1), odd items 0 (they go on)
        RewardFunction byItem = (c, items) -> List.of(itemOf(items.get(0)) % 2 == 0 ? 1.0 : 0.0);
        for (int batch : new int[] {1, 2}) {
            Seen seen = new Seen(family, byItem);
            Map<String, Double> metrics;
            try (Trainer t = twoTurns(family, batch, seen, out.resolve("b" + batch))) {
                metrics = t.evaluate();
            }
            assertThat(seen.scoredInOrder()).as("batch %d", batch).containsExactly(0, 1, 1, 2, 3, 3, 4);
            // each turn samples the batch's items still running together
            assertThat(seen.formattedTogether()).as("batch %d", batch).isEqualTo(batch == 1
                    ? List.of(List.of(0), List.of(1), List.of(1), List.of(2), List.of(3), List.of(3), List.of(4))
                    : List.of(List.of(0, 1), List.of(1), List.of(2, 3), List.of(3), List.of(4)));
            assertThat(metrics.get("eval/turn_1/reward_mean")).isEqualTo(0.6); // items 0, 2, 4 of five
            assertThat(metrics.get("eval/turn_2/reward_mean")).isEqualTo(0.0); // items 1 and 3 only
            List<String> lines = Files.readAllLines(out.resolve("b" + batch + "/eval_samples.jsonl"));
            JsonNode samples = new ObjectMapper().readTree(lines.get(lines.size() - 1)).get("samples");
            for (int j = 0; j < samples.size(); j++) {
                assertThat(samples.get(j).get("rewards")).as("item %d's turns", j).hasSize(j % 2 == 0 ? 1 : 2);
            }
        }
    }
}
