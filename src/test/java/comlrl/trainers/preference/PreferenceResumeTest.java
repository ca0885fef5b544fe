package comlrl.trainers.preference;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.trainers.ResumeCheck;
import comlrl.trainers.TestRewards;
import comlrl.trainers.TinyAgents;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Resuming every preference trainer from a checkpoint in the middle of its run reproduces the
 * uninterrupted run bit for bit ({@link ResumeCheck}): the final agents, optimizers, critics, value
 * heads and reward model, and the metrics logged after the checkpoint. The team is heterogeneous (a
 * Qwen2 and a Llama agent with vocabularies of different sizes), and evaluation runs during
 * training, so its seeds are part of what must line up.
 */
class PreferenceResumeTest {
    @TempDir
    static Path models;
    /** A Qwen2 agent and a Llama agent of another vocabulary size. */
    static List<String> team;

    @BeforeAll
    static void writeAgents() {
        team = TinyAgents.qwenAndLlama(models, 11).stream().map(Path::toString).toList();
    }

    /** {@code builder} on the team, the length-difference reward, 2 training and 2 evaluation items, writing into {@code out}. */
    private static <B extends PreferenceBuilder<?, B>> B onTheTeam(B builder, Path out) {
        return builder.agents(team).rewardFunc(TestRewards.lengthDifference()).trainDataset(MADPOTrainerTest.tasks(2))
                .evalDataset(MADPOTrainerTest.tasks(2)).outputDir(out).verbose(false);
    }

    @Test
    void madpoWithAQwenAndALlamaAgentOfAnotherVocabularyResumesFromCheckpoint5Of10(@TempDir Path dir) {
        MADPOConfig c = MADPOTrainerTest.config().numTrainEpochs(10).evalInterval(3).build();
        ResumeCheck.assertResumeReproduces(dir, out -> onTheTeam(MADPOTrainer.builder(), out).args(c).build(), 5);
    }

    /** Each backend, resumed half-way through its RL stage (and MAGRPO also right after the reward model). */
    @ParameterizedTest
    @CsvSource({"magrpo, 2", "magrpo, 0", "mareinforce, 2", "maremax, 2", "marloo, 2", "iac, 2", "maac, 2"})
    void marlhfResumesInTheMiddleOfItsRlStage(String rl, int checkpoint, @TempDir Path dir) {
        boolean actorCritic = rl.equals("iac") || rl.equals("maac");
        MARLHFConfig c = MARLHFTrainerTest.config().rlAlgorithm(rl).numTrainEpochs(4).numGenerations(actorCritic ? 1 : 2)
                .evalInterval(1).build();
        ResumeCheck.assertResumeReproduces(dir, out -> onTheTeam(MARLHFTrainer.builder(), out).args(c).build(), checkpoint);
    }

    /**
     * The history comparator of the iterations after the checkpoint is the policy of an iteration
     * before it: the resumed run, in a fresh output directory, must find the same one.
     */
    @ParameterizedTest
    @CsvSource({"1", "2"})
    void madpoIterWithTheHistoryComparatorResumesFromCheckpoint2Of4(int historyK, @TempDir Path dir) {
        MADPOIterConfig c = MADPOIterTrainerTest.config().numIterations(4).comparatorPolicy("history")
                .comparatorHistoryK(historyK).preferenceReplayMode("all_history").evalInterval(2).build();
        ResumeCheck.assertResumeReproduces(dir, out -> onTheTeam(MADPOIterTrainer.builder(), out).args(c).build(), 2);
        // checkpoint-2 carries the snapshots iterations 3 .. 2+k compare against: iteration 2−k+1 .. 2
        Path history = dir.resolve("straight-checkpoints/checkpoint-2").resolve(IterationComparators.HISTORY_DIR);
        List<String> expected = historyK == 1 ? List.of("iteration_0002") : List.of("iteration_0001", "iteration_0002");
        for (String snapshot : expected) {
            assertThat(history.resolve(snapshot + "/agent_1/model.safetensors")).isRegularFile();
        }
        assertThat(history.toFile().list()).containsExactlyInAnyOrderElementsOf(expected);
    }

    @ParameterizedTest
    @CsvSource({"magrpo, current", "iac, history"})
    void marlhfIterResumesFromCheckpoint2Of4(String rl, String comparator, @TempDir Path dir) {
        boolean actorCritic = rl.equals("iac");
        MARLHFIterConfig c = MARLHFIterTrainerTest.config().numIterations(4).rlAlgorithm(rl)
                .numGenerations(actorCritic ? 1 : 2).comparatorPolicy(comparator).preferenceReplayMode("all_history")
                .evalInterval(1).build();
        ResumeCheck.assertResumeReproduces(dir, out -> onTheTeam(MARLHFIterTrainer.builder(), out).args(c).build(), 2);
    }
}
