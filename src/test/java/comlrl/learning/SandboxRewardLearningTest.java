package comlrl.learning;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.data.BuiltinTasks;
import comlrl.data.Dataset;
import comlrl.data.TaskItem;
import comlrl.reward.RewardFunction;
import comlrl.sandbox.ExecutionResult;
import comlrl.sandbox.Job;
import comlrl.sandbox.Sandbox;
import comlrl.sandbox.SandboxConfig;
import comlrl.sandbox.Status;
import comlrl.trainers.reinforce.MAGRPOConfig;
import comlrl.trainers.reinforce.MAGRPOTrainer;
import comlrl.utils.Formatter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Learning with the code sandbox in the loop: two agents on the built-in tiny model (the settings of
 * {@link LengthRatioLearningTest}) are rewarded by the fraction of assert tests that pass when a program
 * holding their joint response runs in the {@link Sandbox} (namespaces isolation, the worker pool).
 *
 * <p>A tiny random model never writes valid Python, so a reward on code it writes has no signal (the offline
 * code example's reward stays 0). Here our side writes the program: the completions enter it as data (base64
 * literals, so no completion can break out of its string), and each assert checks one property the model can
 * shift, the detailed answer's length against the brief one's and the item's targets (2 to 3 times):
 * <pre>
 *   assert len(brief) &gt; 0
 *   assert len(detailed) &gt; len(brief)
 *   assert len(detailed) &gt;= target_min * len(brief)
 *   assert len(detailed) &lt;= target_max * len(brief)
 * </pre>
 * The reward is {@code tests_passed / tests_total} from the sandbox's verdict: dense from the first step.
 * Every joint response of training and evaluation is executed (each program prints its own serial number,
 * which the verdict's stdout must carry; distinct numbers make every job distinct, so none is answered from
 * the cache), and the executions per second are printed. Tagged slow (about 2 minutes on 2 cores).
 *
 * <p>The margin: before training about 0.6 of the asserts pass (the first and the last nearly always, the
 * second about half the time, the third rarely); a policy that keeps the ratio within the targets passes all
 * four. The same asserts computed in Java (the same numbers: Python's {@code len} of the decoded text counts
 * code points) moved the evaluation mean, over 8 evaluations of 4 joint responses, from 0.609 to 0.906 in 12
 * epochs with seed 42 and from 0.578 to 0.953 with seed 1 (from 0.609 to 1.000 in 40 epochs); the test asks
 * for a rise of more than 0.15, half the smaller gain.
 */
@Tag("slow")
class SandboxRewardLearningTest {
    /** Training epochs: 12 x 8 items x 8 samples, 768 programs (the length-ratio tests train 40). */
    static final int EPOCHS = 12;

    /** The asserts, one test each; {@code %s} are the item's targets. */
    static final String TESTS = """
            assert len(brief) > 0
            assert len(detailed) > len(brief)
            assert len(detailed) >= %s * len(brief)
            assert len(detailed) <= %s * len(brief)
            """;

    /**
     * The reward: one sandboxed program per joint response, all of a call on the sandbox's pool; counts the
     * programs it submitted and the verdicts that prove their program ran (status ok, its serial on stdout).
     */
    static final class SandboxedLengthReward implements RewardFunction {
        final Sandbox sandbox;
        final AtomicLong submitted = new AtomicLong();
        final AtomicLong executed = new AtomicLong();
        final AtomicLong nanos = new AtomicLong();

        SandboxedLengthReward(Sandbox sandbox) {
            this.sandbox = sandbox;
        }

        static String literal(String text) {
            return "base64.b64decode(\"" + Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8))
                    + "\").decode(\"utf-8\")";
        }

        @Override
        public List<Double> score(List<List<String>> agentCompletions, List<TaskItem> batchItems) {
            int k = agentCompletions.get(0).size();
            List<Job> jobs = new ArrayList<>(k);
            List<String> serials = new ArrayList<>(k);
            for (int j = 0; j < k; j++) {
                TaskItem item = batchItems.get(batchItems.size() == 1 ? 0 : j); // one item per call, or per joint response
                String serial = "sample " + submitted.incrementAndGet();
                serials.add(serial);
                String code = "import base64\nbrief = " + literal(agentCompletions.get(0).get(j)) + "\ndetailed = "
                        + literal(agentCompletions.get(1).get(j)) + "\nprint(\"" + serial + "\")\n";
                jobs.add(new Job(code, TESTS.formatted(item.getDouble("target_min"), item.getDouble("target_max"))));
            }
            long start = System.nanoTime();
            List<ExecutionResult> verdicts = sandbox.runAll(jobs);
            nanos.addAndGet(System.nanoTime() - start);
            List<Double> rewards = new ArrayList<>(k);
            for (int j = 0; j < k; j++) {
                ExecutionResult v = verdicts.get(j);
                if (v.status() == Status.OK && v.testsTotal() == 4 && v.stdout().strip().equals(serials.get(j))) {
                    executed.incrementAndGet();
                }
                rewards.add(v.testsTotal() == 0 ? 0.0 : (double) v.testsPassed() / v.testsTotal());
            }
            return rewards;
        }

        @Override
        public double[] rewardRange() {
            return new double[] {0.0, 1.0};
        }
    }

    @Test
    void theTestsPassedFractionOfSandboxedProgramsRises() {
        Dataset.Split split = BuiltinTasks.load("builtin:length-ratio").trainTestSplit(0.2, 42);
        Formatter brief = item -> "Write a short response to this task:\n" + item.getString("prompt");
        Formatter detailed = item -> "Write a detailed response to this task:\n" + item.getString("prompt");
        MAGRPOConfig config = MAGRPOConfig.builder().numTurns(1).numTrainEpochs(EPOCHS).numGenerations(8)
                .maxNewTokens(24).temperature(1.0).topP(1.0).topK(null).agentLearningRate(3e-3)
                .rolloutBufferSize(2).evalInterval(0).evalNumSamples(2).loggingSteps(64).seed(42).build();
        // generous wall time: the machine may be busy; every program here ends in milliseconds
        try (Sandbox sandbox = Sandbox.create(SandboxConfig.builder().wallTime(Duration.ofSeconds(60)).build())) {
            SandboxedLengthReward reward = new SandboxedLengthReward(sandbox);
            try (MAGRPOTrainer trainer = MAGRPOTrainer.builder().agentModel("builtin:tiny").numAgents(2)
                    .formatters(List.of(brief, detailed)).rewardFunc(reward).trainDataset(split.train())
                    .evalDataset(split.test()).args(config).verbose(false).build()) {
                double before = EvalRewards.mean(trainer, 8);
                long evalRuns = reward.submitted.get();
                trainer.train();
                double after = EvalRewards.mean(trainer, 8);
                long total = reward.submitted.get();
                System.out.printf("sandboxed reward: %.3f -> %.3f; %d programs executed, %.1f executions/s%n", before,
                        after, reward.executed.get(), total / (reward.nanos.get() / 1e9));
                assertThat(evalRuns).as("the evaluation's joint responses").isPositive();
                assertThat(total - 2 * evalRuns).as("training's joint responses: epochs x items x generations")
                        .isEqualTo((long) EPOCHS * split.train().size() * 8);
                assertThat(reward.executed.get()).as("every joint response ran in the sandbox").isEqualTo(total);
                assertThat(after - before).as("tests passed fraction after training %.3f, before %.3f", after, before)
                        .isGreaterThan(0.15);
            }
        }
    }
}
