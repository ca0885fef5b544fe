package comlrl.trainers.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.distributed.RankWork;
import comlrl.logging.MetricsLogger;
import comlrl.tensor.Device;
import comlrl.trainers.TinyAgents;
import comlrl.trainers.reinforce.MAGRPOConfig;
import comlrl.utils.ParallelTraining;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The assembly every trainer shares: what it loads, and that it frees it once, newest first. */
class TrainerPartsTest {
    @TempDir
    Path dir;

    private TrainerParts load(TrainerSettings settings, boolean references) {
        List<Object> sources = List.of(TinyAgents.create(dir.resolve("a"), 1).toString(),
                TinyAgents.create(dir.resolve("b"), 2).toString());
        List<Device> devices = List.of(Device.CPU, Device.CPU);
        MAGRPOConfig args = MAGRPOConfig.builder().numGenerations(3).maxNewTokens(5).build();
        return new TrainerParts(settings, RankWork.single(2), new TrainerParts.Load(sources, devices,
                references ? devices : null, 7, ParallelTraining.NONE, args, 3), UnaryOperator.identity());
    }

    @Test
    void loadsEachAgentWithItsGenerateSettingsAndReferencesOnlyWhenAsked() {
        try (TrainerParts parts = load(TrainerSettings.defaults(), true)) {
            assertThat(parts.agents.size()).isEqualTo(2);
            assertThat(parts.generation.get(1).sampling().numReturnSequences()).isEqualTo(3);
            assertThat(parts.generation.get(0).sampling().maxNewTokens()).isEqualTo(5);
            assertThat(parts.references).isNotNull();
        }
        try (TrainerParts parts = load(TrainerSettings.defaults(), false)) {
            assertThat(parts.references).isNull();
        }
    }

    @Test
    void freesWhatTheTrainerOwnedNewestFirstAndOnlyOnce() {
        List<String> freed = new ArrayList<>();
        TrainerParts parts = load(TrainerSettings.defaults(), false);
        parts.own("optimizers", freed::add);
        parts.own("critic", freed::add);
        RuntimeException failure = new RuntimeException("a later step failed");
        parts.closeAfter(failure);
        assertThat(freed).containsExactly("critic", "optimizers");
        parts.close(); // the trainer's close after a failed one frees nothing twice
        assertThat(freed).containsExactly("critic", "optimizers");
        assertThat(failure.getSuppressed()).isEmpty();
    }

    @Test
    void aStageReleasesItsParentsLoggerOnceHoweverOftenItIsClosed() {
        List<String> sinkClosed = new ArrayList<>();
        comlrl.logging.MetricSink sink = new comlrl.logging.MetricSink() {
            @Override
            public void log(long envStep, java.util.Map<String, Double> metrics) {
            }

            @Override
            public void close() {
                sinkClosed.add("closed");
            }
        };
        MetricsLogger parent = new MetricsLogger(null, List.of(sink), 1, 10);
        TrainerParts parts = load(TrainerSettings.defaults(), false);
        parts.openLogger(parent.retain()); // as a stage takes its parent's (TrainerSettings.SHARED_LOGGER)
        parts.closeAfter(new RuntimeException("a later step failed"));
        parts.close();
        assertThat(sinkClosed).isEmpty(); // the parent still holds it
        parent.close();
        assertThat(sinkClosed).containsExactly("closed");
    }

    @Test
    void whatFreeingThrowsAfterAFailureIsKeptWithTheFailure() {
        TrainerParts parts = load(TrainerSettings.defaults(), false);
        parts.own("optimizers", o -> {
            throw new IllegalStateException("could not free " + o);
        });
        RuntimeException failure = new RuntimeException("a later step failed");
        parts.closeAfter(failure);
        assertThat(failure.getSuppressed()).singleElement().extracting(Throwable::getMessage)
                .isEqualTo("could not free optimizers");
    }

    @Test
    void freesEveryResourceInOrderThoughOneThrowsThenThrowsTheFirstFailure() {
        List<String> freed = new ArrayList<>();
        AutoCloseable b = () -> {
            freed.add("b");
            throw new IllegalStateException("could not free b");
        };
        AutoCloseable c = () -> {
            freed.add("c");
            throw new IllegalStateException("could not free c");
        };
        assertThatThrownBy(() -> TrainerParts.free(null, () -> freed.add("a"), b, null, c, () -> freed.add("d")))
                .hasMessage("could not free b")
                .satisfies(e -> assertThat(e.getSuppressed()).extracting(Throwable::getMessage)
                        .containsExactly("could not free c"));
        assertThat(freed).containsExactly("a", "b", "c", "d");
        RuntimeException failure = new RuntimeException("a later step failed");
        TrainerParts.free(failure, b); // after a failure: kept with it, not thrown
        assertThat(failure.getSuppressed()).extracting(Throwable::getMessage).containsExactly("could not free b");
    }

    @Test
    void refusesAnOutputDirectoryInsideALoadedAgent() {
        TrainerSettings settings = TrainerSettings.defaults().with(TrainerSettings.OUTPUT_DIR, dir.resolve("a/run"));
        assertThatThrownBy(() -> load(settings, true)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("output_dir");
    }
}
