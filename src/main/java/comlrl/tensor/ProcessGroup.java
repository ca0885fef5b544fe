package comlrl.tensor;

import java.time.Duration;
import org.bytedeco.javacpp.Loader;
import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.javacpp.chrono.Milliseconds;
import org.bytedeco.pytorch.AllgatherOptions;
import org.bytedeco.pytorch.AllreduceOptions;
import org.bytedeco.pytorch.Backend;
import org.bytedeco.pytorch.BroadcastOptions;
import org.bytedeco.pytorch.GlooDeviceVector;
import org.bytedeco.pytorch.ProcessGroupGloo;
import org.bytedeco.pytorch.TensorVector;
import org.bytedeco.pytorch.Work;

/**
 * A libtorch c10d process group: the same collective operations run by every process of a group
 * of {@code size}, in the same order. Gloo ({@code ProcessGroupGloo}) works on CPU tensors over
 * TCP; NCCL ({@code ProcessGroupNCCL}) on CUDA tensors and needs the CUDA build of libtorch.
 *
 * <p>Every operation blocks until it has completed on this process, and fails with a
 * {@link CommunicationException} when a peer closes its connection or when {@code timeout} passes.
 * After a failure the group is unusable. Call from one thread.
 */
public final class ProcessGroup implements AutoCloseable {
    private final Backend backend;
    private final int rank;
    private final int size;
    private boolean closed;

    private ProcessGroup(Backend backend, int rank, int size) {
        this.backend = backend;
        this.rank = rank;
        this.size = size;
    }

    /**
     * Loads (and on first use extracts into JavaCPP's cache) the natives this class needs: libtorch
     * and its Gloo binding. Processes started together should find them already extracted.
     */
    public static void loadNatives() {
        Engine.init();
        Loader.load(org.bytedeco.pytorch.global.torch.class);
        Loader.load(org.bytedeco.pytorch.global.torch_gloo.class);
    }

    /**
     * Joins a Gloo group through {@code store} (every member must call this within
     * {@code timeout}, which is also the limit of operations given none). The TCP transport binds to the network interface named
     * {@code interfaceName} if given, else to the address {@code hostname} resolves to if given,
     * else to the address of this machine's host name (loopback when that has none).
     */
    public static ProcessGroup gloo(TcpStore store, int rank, int size, Duration timeout, String interfaceName,
            String hostname) {
        checkMember(rank, size);
        Engine.init();
        // on the store's thread, so that a member that stops answering fails the others at the timeout
        return store.bounded("forming the Gloo group of " + size, timeout.plus(TcpStore.WAIT_MARGIN), () -> {
            try (PointerScope scope = new PointerScope()) {
                org.bytedeco.pytorch.gloo.Device device = interfaceName != null
                        ? ProcessGroupGloo.createDeviceForInterface(interfaceName)
                        : hostname != null ? ProcessGroupGloo.createDeviceForHostname(hostname)
                        : ProcessGroupGloo.createDefaultDevice();
                ProcessGroupGloo.Options options = ProcessGroupGloo.Options.create(millis(timeout));
                options.devices(new GlooDeviceVector(device));
                ProcessGroupGloo group = new ProcessGroupGloo(store.handle(), rank, size, options);
                group.retainReference(); // outlives the scope; released by close()
                return new ProcessGroup(group, rank, size);
            }
        });
    }

    /**
     * Joins an NCCL group through {@code store} (CUDA tensors only). Fails with an
     * {@link IllegalStateException} when these natives have no NCCL (the CPU build).
     */
    public static ProcessGroup nccl(TcpStore store, int rank, int size, Duration timeout) {
        checkMember(rank, size);
        Engine.init();
        try (PointerScope scope = new PointerScope()) {
            org.bytedeco.pytorch.nccl.ProcessGroupNCCL.Options options =
                    org.bytedeco.pytorch.nccl.ProcessGroupNCCL.Options.create();
            options.timeout(millis(timeout));
            org.bytedeco.pytorch.nccl.ProcessGroupNCCL group =
                    new org.bytedeco.pytorch.nccl.ProcessGroupNCCL(store.handle(), rank, size, options);
            group.retainReference();
            return new ProcessGroup(group, rank, size);
        } catch (LinkageError e) {
            throw new IllegalStateException("These libtorch natives have no NCCL (" + e.getMessage()
                    + "): backend nccl needs the CUDA build (mvn -Pcuda package) on a machine with NVIDIA "
                    + "GPUs; use backend gloo otherwise", e);
        } catch (RuntimeException e) {
            throw CommunicationException.of(e);
        }
    }

    private static void checkMember(int rank, int size) {
        if (size < 1 || rank < 0 || rank >= size) {
            throw new IllegalArgumentException("Rank must be in [0, " + size + "), got " + rank);
        }
    }

    public int rank() {
        return rank;
    }

    public int size() {
        return size;
    }

    /** {@code tensor ← Σ over ranks of tensor}, in place (a contiguous tensor on the group's device type). */
    public void allReduceSum(Tensor tensor, Duration timeout) {
        try (PointerScope scope = new PointerScope()) {
            AllreduceOptions options = new AllreduceOptions(); // reduceOp defaults to SUM
            options.timeout(millis(timeout));
            await(backend.allreduce(new TensorVector(tensor.handle), options), "allreduce", timeout);
        } catch (RuntimeException e) {
            throw wrap(e);
        }
    }

    /** {@code tensor ← tensor of rank root}, in place on every other rank. */
    public void broadcast(Tensor tensor, int root, Duration timeout) {
        checkMember(root, size);
        try (PointerScope scope = new PointerScope()) {
            BroadcastOptions options = new BroadcastOptions();
            options.rootRank(root);
            options.rootTensor(0);
            options.timeout(millis(timeout));
            await(backend.broadcast(new TensorVector(tensor.handle), options), "broadcast", timeout);
        } catch (RuntimeException e) {
            throw wrap(e);
        }
    }

    /**
     * {@code output[r·n : (r+1)·n] ← input of rank r} for every rank, where {@code n} is
     * {@code input}'s element count: {@code output} is a contiguous tensor of {@code size · n}
     * elements of {@code input}'s type and device.
     */
    public void allGather(Tensor input, Tensor output, Duration timeout) {
        if (output.numel() != input.numel() * size) {
            throw new IllegalArgumentException("allGather output needs " + input.numel() * size
                    + " elements (" + size + " ranks x " + input.numel() + "), got " + output.numel());
        }
        try (PointerScope scope = new PointerScope()) {
            AllgatherOptions options = new AllgatherOptions();
            options.timeout(millis(timeout));
            await(backend._allgather_base(output.handle, input.handle, options), "allgather", timeout);
        } catch (RuntimeException e) {
            throw wrap(e);
        }
    }

    private static void await(Work work, String what, Duration timeout) {
        if (!work._wait(millis(timeout))) {
            throw CommunicationException.timeout(what + " did not complete within " + timeout.toMillis() + " ms");
        }
    }

    private static RuntimeException wrap(RuntimeException e) {
        return e instanceof CommunicationException || e instanceof IllegalArgumentException ? e : CommunicationException.of(e);
    }

    private static Milliseconds millis(Duration d) {
        return new Milliseconds(Math.max(1, d.toMillis()));
    }

    /**
     * Shuts the group down. Only after operations that completed: after a failure a peer's
     * operation may still hold the native group, so leave it to the process's exit instead.
     */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            backend.releaseReference();
        }
    }
}
