package comlrl.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bytedeco.javacpp.Loader;
import org.junit.jupiter.api.Test;

/**
 * The natives Maven resolved (pom.xml's OS profiles set {@code native.platform}) are those of the machine
 * the tests run on: each JavaCPP artifact's platform jar holds a directory named after its platform, and
 * JavaCPP loads from the one named {@link Loader#getPlatform()} ({@code -gpu} for the CUDA build).
 */
class NativePlatformTest {

    @Test
    void nativesOnTheClassPathAreThoseOfThisMachine() {
        String platform = Loader.getPlatform();
        ClassLoader loader = NativePlatformTest.class.getClassLoader();
        for (String library : List.of("javacpp", "openblas", "pytorch")) {
            String dir = "org/bytedeco/" + library + "/" + platform;
            boolean present = loader.getResource(dir + "/") != null || loader.getResource(dir + "-gpu/") != null;
            assertThat(present).as("natives of %s for %s (the OS profile of pom.xml)", library, platform).isTrue();
        }
        List<String> foreign = new ArrayList<>();
        for (String other : List.of("linux-x86_64", "macosx-arm64", "macosx-x86_64", "windows-x86_64")) {
            if (!other.equals(platform) && loader.getResource("org/bytedeco/pytorch/" + other + "/") != null) {
                foreign.add(other);
            }
        }
        assertThat(foreign).as("libtorch natives of another OS on the class path").isEmpty();
    }

    @Test
    void threadsComeFromComlrlThreadsThenTheOlderNameThenOpenMp() {
        assertThat(Engine.threadSetting(Map.of("COMLRL_THREADS", "3", "COMLRL_NUM_THREADS", "5",
                "OMP_NUM_THREADS", "7")::get)).isEqualTo("3");
        assertThat(Engine.threadSetting(Map.of("COMLRL_NUM_THREADS", "5", "OMP_NUM_THREADS", "7")::get)).isEqualTo("5");
        assertThat(Engine.threadSetting(Map.of("COMLRL_THREADS", " ", "OMP_NUM_THREADS", "7")::get)).isEqualTo("7");
        assertThat(Engine.threadSetting(Map.<String, String>of()::get)).isNull();
    }

    @Test
    void blasThreadsComeFromOpenBlasThenOpenMp() {
        assertThat(Engine.blasThreads(Map.of("OPENBLAS_NUM_THREADS", "3", "OMP_NUM_THREADS", "7")::get)).isEqualTo(3);
        assertThat(Engine.blasThreads(Map.of("OMP_NUM_THREADS", "7")::get)).isEqualTo(7);
        assertThat(Engine.blasThreads(Map.of("OPENBLAS_NUM_THREADS", "x")::get)).isEqualTo(1);
        assertThat(Engine.blasThreads(Map.<String, String>of()::get))
                .isEqualTo(Runtime.getRuntime().availableProcessors());
    }

    /**
     * Single-thread OpenBLAS sections nest (and agents on threads of their own may overlap them).
     * OpenBLAS stays on one thread after the last one closes (switching back and forth cost a bf16
     * decoding step more than it saved) until a BLAS section opens with none open; one opened while
     * another thread's single-thread section is open leaves OpenBLAS on one thread.
     */
    @Test
    void singleThreadBlasSectionsLeaveOneThreadUntilABlasSection() {
        try {
            Engine.setOpenBlasThreads(2);
            Engine.BlasSection outer = Engine.singleThreadBlas(2);
            assertThat(Engine.openBlasThreads()).isEqualTo(1);
            Engine.BlasSection inner = Engine.singleThreadBlas(2);
            inner.close();
            assertThat(Engine.openBlasThreads()).as("after the inner section closed").isEqualTo(1);
            try (Engine.BlasSection blas = Engine.blasSection(2)) {
                assertThat(Engine.openBlasThreads()).as("a BLAS section inside an open single-thread one").isEqualTo(1);
            }
            outer.close();
            assertThat(Engine.openBlasThreads()).as("after the last section closed").isEqualTo(1);
            try (Engine.BlasSection blas = Engine.blasSection(2)) {
                assertThat(Engine.openBlasThreads()).as("in a BLAS section").isEqualTo(2);
            }
            assertThat(Engine.openBlasThreads()).as("after the BLAS section").isEqualTo(2);
            try (Engine.BlasSection none = Engine.singleThreadBlas(1)) {
                assertThat(Engine.openBlasThreads()).as("one configured thread: nothing to switch").isEqualTo(2);
            }
            try (Engine.BlasSection blas = Engine.blasSection(1)) {
                assertThat(Engine.openBlasThreads()).as("one configured thread").isEqualTo(2);
            }
        } finally {
            Engine.setOpenBlasThreads(1); // the tests' OPENBLAS_NUM_THREADS
        }
    }
}
