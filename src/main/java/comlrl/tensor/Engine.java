package comlrl.tensor;

import java.util.concurrent.ConcurrentHashMap;
import java.util.Map;
import org.bytedeco.openblas.presets.openblas;
import org.bytedeco.pytorch.global.torch;

/**
 * Process-wide libtorch settings: intra-op threads, CUDA availability, native devices. Library users
 * need no setup beyond what is read here; the README's "Using the library" section lists it.
 *
 * <p>Threads: {@link #init()} sets libtorch's intra-op thread count from {@code COMLRL_THREADS} (the
 * variable {@code bin/comlrl} reads), else {@code OMP_NUM_THREADS}; the older name
 * {@code COMLRL_NUM_THREADS} is still read after {@code COMLRL_THREADS}. BLAS/OpenMP pools read
 * {@code OMP_NUM_THREADS}/{@code OPENBLAS_NUM_THREADS} once, when the natives load: set them before the
 * JVM starts ({@code bin/comlrl} and the test configuration do) or they default to every core.
 *
 * <p>Native memory: tensors are freed by scopes, not by the garbage collector, so JavaCPP's
 * pointer-GC thread only adds overhead (about half the cost of a small operation).
 * {@link #init()} sets {@code org.bytedeco.javacpp.nopointergc=true} when the property is unset; that
 * takes effect when it runs before any native object exists (every tensor path of this library
 * calls it first). {@code -Dorg.bytedeco.javacpp.nopointergc=false} keeps the collector.
 */
public final class Engine {
    private static volatile boolean initialised;
    private static final Map<Device, org.bytedeco.pytorch.Device> DEVICES = new ConcurrentHashMap<>();

    private Engine() {
    }

    /** Loads the natives and applies the thread settings; idempotent. */
    public static synchronized void init() {
        if (initialised) {
            return;
        }
        if (System.getProperty(NO_POINTER_GC) == null) {
            System.setProperty(NO_POINTER_GC, "true");
        }
        String threads = threadSetting(System::getenv);
        if (threads != null && !threads.isBlank()) {
            try {
                int n = Integer.parseInt(threads.trim());
                if (n > 0) {
                    torch.set_num_threads(n);
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("COMLRL_THREADS/OMP_NUM_THREADS must be a "
                        + "positive integer, got '" + threads + "'", e);
            }
        }
        initialised = true;
    }

    /** The system property that turns JavaCPP's pointer-GC thread off. */
    static final String NO_POINTER_GC = "org.bytedeco.javacpp.nopointergc";

    /**
     * The intra-op thread setting from the environment: {@code COMLRL_THREADS}, else
     * {@code COMLRL_NUM_THREADS} (older name), else {@code OMP_NUM_THREADS}; null when none is set.
     */
    static String threadSetting(java.util.function.UnaryOperator<String> env) {
        for (String name : new String[] {"COMLRL_THREADS", "COMLRL_NUM_THREADS", "OMP_NUM_THREADS"}) {
            String value = env.apply(name);
            if (value != null && !value.isBlank()) {
                return value;
            }
        }
        return null;
    }

    /** Sets libtorch's intra-op thread count. */
    public static void setNumThreads(int n) {
        init();
        torch.set_num_threads(n);
    }

    /**
     * A section dominated by BLAS matrix products (OpenBLAS runs them on its own threads): libtorch's
     * other operations run on the calling thread only until it closes. With both pools awake on the
     * same cores, OpenMP workers that spin between operations slow OpenBLAS down (a 0.5B scoring
     * step 1.4x slower); with one OpenMP thread nothing competes. OpenBLAS gets its configured
     * threads back here if a {@link #singleThreadBlas()} section left it on one and none is open.
     * Nests; restores libtorch's count on close.
     * <pre>{@code try (Engine.BlasSection b = Engine.blasSection()) { ... } }</pre>
     */
    public static BlasSection blasSection() {
        return blasSection(CONFIGURED_BLAS_THREADS);
    }

    /** {@link #blasSection()} for OpenBLAS configured with {@code configuredBlas} threads. */
    static BlasSection blasSection(int configuredBlas) {
        init();
        synchronized (Engine.class) {
            if (singleThreadBlasOpen == 0 && configuredBlas > 1 && openblas.blas_get_num_threads() != configuredBlas) {
                openblas.blas_set_num_threads(configuredBlas);
            }
        }
        int before = torch.get_num_threads();
        if (before > 1) {
            torch.set_num_threads(1);
        }
        return new BlasSection(before);
    }

    /**
     * The other way round: a section whose products run in oneDNN on libtorch's threads (16-bit
     * weights) while OpenBLAS does only float32 work (attention's blocks inside libtorch's parallel
     * loops, LoRA's small products). On OpenBLAS's own threads that competes with libtorch's workers,
     * which spin between operations on the same cores; here OpenBLAS runs on the calling thread. It
     * stays there after the section closes, until a {@link #blasSection()} opens with no such section
     * open (sections nest, and agents training on threads of their own may hold one each: OpenBLAS's
     * count is the process's): each switch back to its configured count ({@code OPENBLAS_NUM_THREADS},
     * else {@code OMP_NUM_THREADS}) costs ~0.4 ms and wakes threads that then spin beside libtorch's,
     * and a bf16 agent decoding 32 rows, a section per step, made 3.5% fewer tokens per second so.
     */
    public static BlasSection singleThreadBlas() {
        return singleThreadBlas(CONFIGURED_BLAS_THREADS);
    }

    /** OpenBLAS reads its count once, when it loads; so does this. */
    private static final int CONFIGURED_BLAS_THREADS = blasThreads(System::getenv);

    /** {@link #singleThreadBlas()} for OpenBLAS configured with {@code configured} threads. */
    static BlasSection singleThreadBlas(int configured) {
        init();
        if (configured > 1) {
            synchronized (Engine.class) {
                singleThreadBlasOpen++;
                if (openblas.blas_get_num_threads() != 1) {
                    openblas.blas_set_num_threads(1);
                }
            }
        }
        return new BlasSection(-configured);
    }

    /** Open {@link #singleThreadBlas()} sections. */
    private static int singleThreadBlasOpen;

    /** OpenBLAS's thread count as last set through it (tests). */
    static int openBlasThreads() {
        return openblas.blas_get_num_threads();
    }

    /** Sets OpenBLAS's thread count (tests). */
    static void setOpenBlasThreads(int n) {
        openblas.blas_set_num_threads(n);
    }

    /** OpenBLAS's configured thread count: {@code OPENBLAS_NUM_THREADS}, else {@code OMP_NUM_THREADS}, else the cores. */
    static int blasThreads(java.util.function.UnaryOperator<String> env) {
        for (String name : new String[] {"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"}) {
            String value = env.apply(name);
            if (value != null && !value.isBlank()) {
                try {
                    return Integer.parseInt(value.trim());
                } catch (NumberFormatException e) {
                    return 1; // OpenBLAS itself reads a malformed value as unset; stay on one thread
                }
            }
        }
        return Runtime.getRuntime().availableProcessors();
    }

    /** See {@link #blasSection()} and {@link #singleThreadBlas()}. */
    public static final class BlasSection implements AutoCloseable {
        /**
         * libtorch's thread count to restore when positive; for a single-thread OpenBLAS section minus
         * OpenBLAS's configured count (below −1: the section counts among the open ones until it closes).
         */
        private final int restore;

        private BlasSection(int restore) {
            this.restore = restore;
        }

        /** Whether this is a {@link Engine#singleThreadBlas()} section. */
        public boolean oneBlasThread() {
            return restore < 0;
        }

        /** Whether this is a {@link Engine#blasSection()} (libtorch's operations on the calling thread). */
        public boolean oneTorchThread() {
            return restore > 0;
        }

        @Override
        public void close() {
            if (restore > 1) {
                torch.set_num_threads(restore);
            } else if (restore < -1) {
                synchronized (Engine.class) {
                    singleThreadBlasOpen--; // OpenBLAS stays on one thread until a BLAS section
                }
            }
        }
    }

    public static int numThreads() {
        init();
        return torch.get_num_threads();
    }

    /** Returns the native heap's free memory to the operating system ({@code malloc_trim}). */
    public static void releaseFreeMemory() {
        org.bytedeco.javacpp.Pointer.trimMemory();
    }

    /** The libtorch version the natives were built from (TORCH_VERSION in libtorch's build settings). */
    public static String libtorchVersion() {
        init();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("TORCH_VERSION=([^,\\s]+)")
                .matcher(torch.show_config().getString());
        return m.find() ? m.group(1) : "unknown";
    }

    private static volatile Boolean oneDnnLinear;

    /**
     * Whether few-row products without autograd run on oneDNN ({@link Tensor#linear}): when the
     * natives have it, unless {@code -Dcomlrl.onednn=false} or {@link #setOneDnnLinear(boolean)} says no.
     */
    public static boolean oneDnnLinear() {
        Boolean on = oneDnnLinear;
        if (on == null) {
            init();
            on = torch.hasMKLDNN() && !"false".equals(System.getProperty("comlrl.onednn"));
            oneDnnLinear = on;
        }
        return on;
    }

    /** Switches {@link #oneDnnLinear()} (e.g. to compare both kernels); on only if the natives have oneDNN. */
    public static void setOneDnnLinear(boolean on) {
        init();
        oneDnnLinear = on && torch.hasMKLDNN();
    }

    /** True when the CUDA natives are loaded and a GPU is visible. */
    public static boolean cudaAvailable() {
        init();
        try {
            return torch.hasCUDA() && torch.cuda_device_count() > 0;
        } catch (Throwable t) {
            return false;
        }
    }

    /** Number of visible CUDA devices (0 without the CUDA natives). */
    public static int cudaDeviceCount() {
        return cudaAvailable() ? (int) torch.cuda_device_count() : 0;
    }

    /** Seeds libtorch's global generators (used by no sampling path of ours; for completeness). */
    public static void manualSeed(long seed) {
        init();
        torch.manual_seed(seed);
    }

    /** Fails with a clear message if {@code device} cannot be used in this process. */
    public static void checkDevice(Device device) {
        init();
        if (device.isCuda()) {
            int n = cudaDeviceCount();
            if (n == 0) {
                throw new IllegalArgumentException("Device " + device + " requested but CUDA is not "
                        + "available: build with the 'cuda' Maven profile (mvn -Pcuda package) on a "
                        + "machine with CUDA 13 and cuDNN 9, or use device cpu");
            }
            if (device.index() >= n) {
                throw new IllegalArgumentException("Device " + device + " requested but only " + n
                        + " CUDA device(s) are visible");
            }
        }
    }

    static org.bytedeco.pytorch.Device nativeDevice(Device device) {
        return DEVICES.computeIfAbsent(device, d -> {
            org.bytedeco.pytorch.Device nd = new org.bytedeco.pytorch.Device(d.toString());
            nd.retainReference();
            return nd;
        });
    }
}
