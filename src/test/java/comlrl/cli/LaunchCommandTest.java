package comlrl.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** {@code bin/comlrl launch}: the command's own options reach every rank; a failing rank fails the launch. */
class LaunchCommandTest {
    @Test
    void optionsAfterTheCommandNameAreTheCommandsOwn() {
        CliTest.Result r = CliTest.run("launch", "--nproc-per-node", "2", "report", "--help");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("[rank 0] Usage: comlrl report").contains("[rank 1] Usage: comlrl report");
    }

    @Test
    void aRankThatFailsFailsTheLaunchNamingIt() {
        CliTest.Result r = CliTest.run("launch", "--nproc-per-node", "2", "train", "/nonexistent/config.yaml");
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.err()).containsPattern("\\[rank [01]\\] error: ").containsPattern("launch: rank [01] exited with code 1");
    }

    @Test
    void launchDoesNotLaunchItself() {
        CliTest.Result r = CliTest.run("launch", "--nproc-per-node", "2", "launch", "--nproc-per-node", "2", "train", "x");
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.err()).contains("launch cannot run launch");
    }
}
