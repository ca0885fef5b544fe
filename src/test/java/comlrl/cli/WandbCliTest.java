package comlrl.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A {@code wandb:} section without the W&amp;B SDK stops the run before anything is loaded or written. */
class WandbCliTest {
    @Test
    void aWandbSectionWithoutTheSdkFailsBeforeAnyModelLoads(@TempDir Path tmp) throws Exception {
        String python = System.getenv("COMLRL_WANDB_PYTHON");
        python = python == null || python.isBlank() ? "python3" : python;
        Process p;
        try {
            p = new ProcessBuilder(python, "-c", "import wandb").redirectErrorStream(true).start();
        } catch (java.io.IOException e) {
            p = null; // no Python at all: the check must fail the same way
        }
        assumeTrue(p == null || p.waitFor() != 0, "this Python has the W&B SDK");
        CliTest.Result r = CliTest.run("train", "examples/length-ratio.yaml", "--output-dir=" + tmp.resolve("run"),
                "--set", "wandb={project: comlrl-tests}");
        assertThat(r.code()).isNotZero();
        assertThat(r.err()).contains("pip install wandb").contains("COMLRL_WANDB_PYTHON");
        assertThat(tmp.resolve("run")).doesNotExist(); // nothing written, no model loaded
    }

    @Test
    void aBadW_BTimeoutFailsBeforeAnyModelLoads(@TempDir Path tmp) {
        CliTest.Result r = CliTest.run("train", "examples/length-ratio.yaml", "--output-dir=" + tmp.resolve("run"),
                "--set", "wandb={project: comlrl-tests, stall_timeout_s: 0}");
        assertThat(r.code()).isNotZero();
        assertThat(r.err()).contains("wandb_config.stall_timeout_s must be a number of seconds > 0, got 0");
        assertThat(tmp.resolve("run")).doesNotExist();
    }
}
