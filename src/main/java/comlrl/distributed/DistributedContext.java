package comlrl.distributed;

import comlrl.tensor.CommunicationException;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Engine;
import comlrl.tensor.GradMode;
import comlrl.tensor.ProcessGroup;
import comlrl.tensor.Scope;
import comlrl.tensor.TcpStore;
import comlrl.tensor.Tensor;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * This process's place in a multi-process run and the collective operations between the
 * processes (the reference's {@code DistributedContext}): {@code enabled} when there are several
 * processes, {@link #rank()}, {@link #worldSize()}, {@link #localRank()}, {@link #isMain()}.
 *
 * <p>Every process of the run makes one ({@link #fromEnvironment()} under {@code bin/comlrl launch},
 * torchrun or {@code srun}; {@link #connect} with explicit values), then calls the same collectives
 * in the same order, from one thread. Rank 0 serves the rendezvous store (libtorch's TCPStore) on
 * {@code MASTER_PORT}; the processes then form a c10d process group: Gloo on CPU, NCCL on CUDA.
 *
 * <p>Failures: every operation gives up after {@link #timeout()} (default 10 minutes; connecting
 * has a timeout of its own) and throws a
 * {@link DistributedException} saying which operation failed, after how long, and which rank is to
 * blame where it can tell (each rank publishes a heartbeat and the collective it is in). A rank
 * that exits or is killed makes the others fail at once (their connections close); one that hangs
 * or is stopped, after the timeout (every request to the store is bounded too). After a failure
 * the context only closes. Each collective first exchanges a small header, so ranks that call
 * different collectives or pass tensors of different shapes fail alike naming the difference
 * (and the context stays usable), and {@link #requireSame} checks that the ranks hold the same values.
 *
 * <p>A single-process context ({@link #local()}) does no communication: sums and broadcasts leave
 * tensors as they are and {@link #allGatherBytes} returns this process's bytes alone.
 */
public final class DistributedContext implements AutoCloseable {
    /** How long an operation (or the rendezvous) may wait for the other processes by default. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(10);

    /**
     * The most bytes {@link #allReduceSum} copies into one flat buffer: tensors of one dtype are
     * reduced together in buckets of at most this size (a larger tensor is a bucket of its own).
     */
    public static final long MAX_BUCKET_BYTES = 256L << 20;

    /**
     * How to connect.
     *
     * @param backend {@link Backend#AUTO} (default): NCCL when {@code device} is CUDA, else Gloo
     * @param timeout how long each operation may wait for the other ranks (default {@link #DEFAULT_TIMEOUT})
     * @param rendezvousTimeout how long connecting may wait for every rank to start and join (default
     *     {@link #DEFAULT_TIMEOUT})
     * @param device the device this process computes on, or null (default) for {@code cuda:LOCAL_RANK}
     *     when CUDA is available and the backend is not {@link Backend#GLOO} (cpu otherwise); with
     *     Gloo, tensors on a CUDA device pass through host memory
     * @param zeroStage 0 (default): with the data split every process keeps the whole AdamW state of
     *     every model; 1 (ZeRO stage 1): each process keeps and updates the state of its share of the
     *     parameters and sends the updated parameters to the others
     */
    public record Options(Backend backend, Duration timeout, Duration rendezvousTimeout, Device device, int zeroStage) {
        public Options {
            Objects.requireNonNull(backend, "backend");
            checkPositive(timeout, "timeout");
            checkPositive(rendezvousTimeout, "rendezvousTimeout");
            if (zeroStage != 0 && zeroStage != 1) {
                throw new IllegalArgumentException("zero_stage must be 0 (every process keeps the whole optimizer "
                        + "state) or 1 (each keeps its share), got " + zeroStage);
            }
        }

        private static void checkPositive(Duration d, String name) {
            Objects.requireNonNull(d, name);
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(name + " must be positive, got " + d);
            }
        }

        public static Options defaults() {
            return new Options(Backend.AUTO, DEFAULT_TIMEOUT, DEFAULT_TIMEOUT, null, 0);
        }

        public Options withBackend(Backend b) {
            return new Options(b, timeout, rendezvousTimeout, device, zeroStage);
        }

        public Options withTimeout(Duration t) {
            return new Options(backend, t, rendezvousTimeout, device, zeroStage);
        }

        public Options withRendezvousTimeout(Duration t) {
            return new Options(backend, timeout, t, device, zeroStage);
        }

        public Options withDevice(Device d) {
            return new Options(backend, timeout, rendezvousTimeout, d, zeroStage);
        }

        public Options withZeroStage(int stage) {
            return new Options(backend, timeout, rendezvousTimeout, device, stage);
        }
    }

    private static final String CLOSED_PREFIX = "comlrl/closed/";

    private final RankInfo info; // null when single-process
    private final Backend backend;
    private final Device device;
    private final Duration timeout;
    private final int zeroStage;
    private final TcpStore store;
    private final Heartbeats heartbeats;
    private final ProcessGroup group;
    private long sequence;
    private long collectiveNanos;
    private boolean failed;
    private boolean closed;

    private DistributedContext(RankInfo info, Backend backend, Device device, Duration timeout, TcpStore store,
            Heartbeats heartbeats, ProcessGroup group, int zeroStage) {
        this.zeroStage = zeroStage;
        this.info = info;
        this.backend = backend;
        this.device = device;
        this.timeout = timeout;
        this.store = store;
        this.heartbeats = heartbeats;
        this.group = group;
    }

    /** The ZeRO stage the processes share their optimizer state by ({@link Options#zeroStage()}; 0 in one process). */
    public int zeroStage() {
        return zeroStage;
    }

    /** A single process: rank 0 of 1 on the cpu, no communication. */
    public static DistributedContext local() {
        return local(Device.CPU);
    }

    /** A single process computing on {@code device}: rank 0 of 1, no communication. */
    public static DistributedContext local(Device device) {
        return new DistributedContext(null, Backend.AUTO, device, DEFAULT_TIMEOUT, null, null, null, 0);
    }

    /** {@link #fromEnvironment(Map, Options)} with this process's environment and default options. */
    public static DistributedContext fromEnvironment() {
        return fromEnvironment(System.getenv(), Options.defaults());
    }

    /**
     * Connects as the environment's variables say ({@link RankInfo#fromEnvironment}), or returns a
     * {@link #local} context when they describe a single process. Reads {@code GLOO_SOCKET_IFNAME}
     * (the network interface Gloo binds to) as torchrun does.
     */
    public static DistributedContext fromEnvironment(Map<String, String> env, Options options) {
        RankInfo info = RankInfo.fromEnvironment(env).orElse(null);
        if (info == null) {
            return local(options.device() != null ? options.device() : Device.CPU);
        }
        return connect(info, options, env.get("GLOO_SOCKET_IFNAME"));
    }

    /**
     * Joins the run {@code info} describes: every rank must call this within {@code options.rendezvousTimeout}.
     * A world of one process gives a {@link #local} context.
     */
    public static DistributedContext connect(RankInfo info, Options options) {
        return connect(info, options, System.getenv("GLOO_SOCKET_IFNAME"));
    }

    private static DistributedContext connect(RankInfo info, Options options, String glooInterface) {
        Device device = resolveDevice(options, info.localRank());
        Backend backend = options.backend() != Backend.AUTO ? options.backend()
                : device.isCuda() ? Backend.NCCL : Backend.GLOO;
        if (backend == Backend.NCCL && !device.isCuda()) {
            throw new IllegalArgumentException("Distributed backend nccl runs on CUDA devices, but this process's device "
                    + "is " + device + (Engine.cudaAvailable() ? "" : " (no CUDA GPU or CUDA natives here)")
                    + ": use backend gloo (or auto) on CPU");
        }
        Engine.checkDevice(device);
        if (info.worldSize() == 1) {
            return local(device);
        }
        Duration timeout = options.timeout();
        Duration joinTimeout = options.rendezvousTimeout();
        TcpStore store = connectStore(info, joinTimeout);
        Heartbeats heartbeats = null;
        try {
            heartbeats = new Heartbeats(store, info.rank(), heartbeatInterval(timeout));
            ProcessGroup group = backend == Backend.GLOO
                    ? ProcessGroup.gloo(store, info.rank(), info.worldSize(), joinTimeout, blankToNull(glooInterface),
                            isLoopback(info.masterAddr()) ? "127.0.0.1" : null)
                    : ProcessGroup.nccl(store, info.rank(), info.worldSize(), timeout);
            store.setTimeout(timeout); // joined: from now on a request to the store waits as long as a collective
            return new DistributedContext(info, backend, device, timeout, store, heartbeats, group, options.zeroStage());
        } catch (RuntimeException e) {
            List<Integer> absent = e instanceof CommunicationException ? absentRanks(store, info.worldSize(), timeout) : List.of();
            if (heartbeats != null) {
                heartbeats.finish("failed");
            }
            store.close();
            if (!(e instanceof CommunicationException)) {
                throw e;
            }
            throw new DistributedException("rank " + info.rank() + ": the " + backend.configName()
                    + " process group of " + info.worldSize() + " ranks could not form within " + seconds(joinTimeout) + ": "
                    + e.getMessage() + (absent.isEmpty() ? "" : "; " + ranksText(absent) + " did not join"), absent, e);
        }
    }

    private static TcpStore connectStore(RankInfo info, Duration timeout) {
        String address = info.masterAddr() + ":" + info.masterPort();
        try {
            return TcpStore.connect(info.masterAddr(), info.masterPort(), info.isMain(), timeout);
        } catch (CommunicationException e) {
            throw new DistributedException(info.isMain()
                    ? "rank 0 could not start the rendezvous store on port " + info.masterPort() + ": " + e.getMessage()
                            + " (another run may be using the port: choose another --master-port / MASTER_PORT)"
                    : "rank " + info.rank() + " could not reach the rendezvous store at " + address + " within "
                            + seconds(timeout) + ": " + e.getMessage() + " (is rank 0 running, and is MASTER_ADDR its address?)",
                    info.isMain() ? List.of() : List.of(0), e);
        }
    }

    /** The ranks whose first heartbeat is not in the store (they never joined); empty when it cannot tell. */
    private static List<Integer> absentRanks(TcpStore store, int worldSize, Duration timeout) {
        try {
            store.setTimeout(probeTimeout(timeout));
            List<Integer> absent = new ArrayList<>();
            for (int r = 0; r < worldSize; r++) {
                if (!store.contains(List.of(Heartbeats.key(r)))) {
                    absent.add(r);
                }
            }
            return absent;
        } catch (CommunicationException e) {
            return List.of();
        }
    }

    private static Device resolveDevice(Options options, int localRank) {
        if (options.device() != null) {
            return options.device();
        }
        int gpus = Engine.cudaDeviceCount();
        if (gpus > 0 && options.backend() != Backend.GLOO) {
            return new Device("cuda", localRank % gpus);
        }
        return Device.CPU;
    }

    private static Duration heartbeatInterval(Duration timeout) {
        long ms = Math.max(100, Math.min(1000, timeout.toMillis() / 10));
        return Duration.ofMillis(ms);
    }

    /**
     * How long a rank whose collective failed waits for each answer of the store while it reads its
     * peers' heartbeats: a running store answers in milliseconds, so two heartbeat intervals (at
     * least 1 s) tell a stopped or frozen rank 0 from a slow one without adding a second timeout.
     */
    static Duration probeTimeout(Duration timeout) {
        Duration twoBeats = heartbeatInterval(timeout).multipliedBy(2);
        return twoBeats.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : twoBeats;
    }

    private static boolean isLoopback(String host) {
        try {
            return InetAddress.getByName(host).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s.trim();
    }

    // ---------------------------------------------------------------- where this process is

    /** Whether there are several processes (and collectives communicate). */
    public boolean enabled() {
        return info != null;
    }

    public int rank() {
        return info == null ? 0 : info.rank();
    }

    public int worldSize() {
        return info == null ? 1 : info.worldSize();
    }

    public int localRank() {
        return info == null ? 0 : info.localRank();
    }

    /** Rank 0: the process that logs, saves and serves the store. */
    public boolean isMain() {
        return rank() == 0;
    }

    /** The device this process computes on. */
    public Device device() {
        return device;
    }

    /** The backend in use ({@link Backend#GLOO} or {@link Backend#NCCL}); {@link Backend#AUTO} when single-process. */
    public Backend backend() {
        return backend;
    }

    public Duration timeout() {
        return timeout;
    }

    // ---------------------------------------------------------------- collectives

    /**
     * The collective operations. Each begins with a header that every rank sends and every rank
     * reads (one small all-gather of {@code [sequence, operation, signature, detail]}), so that ranks
     * that call different collectives, or pass tensors of different shapes or dtypes, fail with a
     * message naming the difference instead of exchanging mismatched buffers (which libtorch answers
     * with an abort of the process, or garbage).
     */
    private enum Op {
        ALL_REDUCE_SUM("allReduceSum"), BROADCAST("broadcast"), ALL_GATHER_BYTES("allGatherBytes"), BARRIER("barrier");

        final String label;

        Op(String label) {
            this.label = label;
        }
    }

    /** The header's length in longs: sequence, operation, signature, detail (broadcast root, gathered length). */
    private static final int HEADER = 4;

    /**
     * {@code t ← Σ over ranks of t} for every tensor, in place (gradients: divide by
     * {@link #worldSize()} for their mean). Tensors of one dtype travel as one flat buffer (up to
     * {@link #MAX_BUCKET_BYTES}); every rank must pass tensors of the same shapes and dtypes in the
     * same order: when they do not, every rank fails naming the first tensor that differs.
     */
    public void allReduceSum(List<Tensor> tensors) {
        checkOpen();
        if (!enabled()) {
            return;
        }
        collective(Op.ALL_REDUCE_SUM, seq -> {
            agree(Op.ALL_REDUCE_SUM, seq, tensors, 0);
            for (List<Tensor> bucket : buckets(tensors, MAX_BUCKET_BYTES)) {
                reduce(bucket);
            }
            return null;
        });
    }

    /** Groups tensors by dtype (in order of first appearance) into runs of at most {@code maxBytes}; drops empty ones. */
    static List<List<Tensor>> buckets(List<Tensor> tensors, long maxBytes) {
        Map<DType, List<List<Tensor>>> byType = new LinkedHashMap<>();
        Map<DType, Long> openBytes = new LinkedHashMap<>();
        for (Tensor t : tensors) {
            long bytes = t.numel() * t.dtype().byteSize();
            if (bytes == 0) {
                continue;
            }
            List<List<Tensor>> runs = byType.computeIfAbsent(t.dtype(), d -> new ArrayList<>());
            long open = openBytes.getOrDefault(t.dtype(), 0L);
            if (runs.isEmpty() || open + bytes > maxBytes) {
                runs.add(new ArrayList<>());
                open = 0;
            }
            runs.get(runs.size() - 1).add(t);
            openBytes.put(t.dtype(), open + bytes);
        }
        List<List<Tensor>> all = new ArrayList<>();
        byType.values().forEach(all::addAll);
        return all;
    }

    private void reduce(List<Tensor> bucket) {
        Device wire = wireDevice();
        Tensor only = bucket.get(0);
        if (bucket.size() == 1 && only.isContiguous() && only.device().equals(wire)) {
            group.allReduceSum(only, timeout);
            return;
        }
        try (Scope scope = Scope.open(); GradMode g = GradMode.noGrad()) {
            List<Tensor> flat = new ArrayList<>(bucket.size());
            for (Tensor t : bucket) {
                flat.add(t.reshape(-1).to(wire));
            }
            Tensor buffer = Tensor.cat(flat, 0); // [Σ numel]
            group.allReduceSum(buffer, timeout);
            long offset = 0;
            for (Tensor t : bucket) {
                t.copy_(buffer.narrow(0, offset, t.numel()).view(t.shape()));
                offset += t.numel();
            }
        }
    }

    /**
     * {@code tensor ← tensor of rank root}, in place on the other ranks (same shape and dtype
     * everywhere, and the same root: when they differ, every rank fails saying how).
     */
    public void broadcast(Tensor tensor, int root) {
        checkOpen();
        if (root < 0 || root >= worldSize()) {
            throw new IllegalArgumentException("broadcast root must be in [0, " + worldSize() + "), got " + root);
        }
        if (!enabled()) {
            return;
        }
        collective(Op.BROADCAST, seq -> {
            agree(Op.BROADCAST, seq, List.of(tensor), root);
            Device wire = wireDevice();
            if (tensor.isContiguous() && tensor.device().equals(wire)) {
                group.broadcast(tensor, root, timeout);
            } else {
                try (Scope scope = Scope.open(); GradMode g = GradMode.noGrad()) {
                    Tensor staged = tensor.contiguous().to(wire); // a copy: not contiguous or not on the wire device
                    group.broadcast(staged, root, timeout);
                    tensor.copy_(staged);
                }
            }
            return null;
        });
    }

    /**
     * Every rank's {@code bytes}, indexed by rank (this rank's included): for exchanging serialised
     * values (completions, rewards as JSON). The lengths may differ between ranks.
     */
    public List<byte[]> allGatherBytes(byte[] bytes) {
        checkOpen();
        if (!enabled()) {
            return List.of(bytes.clone());
        }
        return collective(Op.ALL_GATHER_BYTES, seq -> {
            long[][] headers = exchangeHeaders(Op.ALL_GATHER_BYTES, seq, 0, bytes.length); // the lengths travel in it
            requireSameCall(Op.ALL_GATHER_BYTES, seq, headers);
            long[] sizes = new long[headers.length];
            for (int r = 0; r < sizes.length; r++) {
                sizes[r] = headers[r][3];
            }
            return gatherPayloads(bytes, sizes);
        });
    }

    /** Each rank's bytes, whose lengths ({@code sizes}, by rank) every rank already knows. */
    private List<byte[]> gatherPayloads(byte[] bytes, long[] sizes) {
        int world = worldSize();
        long longest = Arrays.stream(sizes).max().orElse(0);
        if (longest * world > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException("allGatherBytes: " + world + " x " + longest
                    + " bytes do not fit in one array; exchange smaller pieces");
        }
        List<byte[]> out = new ArrayList<>(world);
        if (longest == 0) {
            for (int r = 0; r < world; r++) {
                out.add(new byte[0]);
            }
            return out;
        }
        Device wire = wireDevice();
        try (Scope scope = Scope.open()) {
            byte[] padded = Arrays.copyOf(bytes, (int) longest);
            Tensor mine = Tensor.fromBytes(ByteBuffer.wrap(padded), DType.U8, longest).to(wire); // [longest]
            Tensor all = Tensor.zerosOf(DType.U8, wire, world * longest);                       // [world · longest]
            group.allGather(mine, all, timeout);
            byte[] flat = all.toBytes();
            for (int r = 0; r < world; r++) {
                out.add(Arrays.copyOfRange(flat, (int) (r * longest), (int) (r * longest + sizes[r])));
            }
            return out;
        }
    }

    /**
     * Fails unless every rank holds the same {@code values} (key → value as text), naming every
     * difference: {@code "<what> differs between ranks: args.seed is 7 on rank 0 and 8 on rank 1"}.
     * One {@link #allGatherBytes}; every rank throws the same {@link IllegalArgumentException}. For
     * checking, right after joining, that the processes were started alike (the run's resolved
     * config), before any of them loads a model. A key one rank lacks is {@code absent} there.
     */
    public void requireSame(String what, Map<String, String> values) {
        checkOpen();
        if (!enabled()) {
            return;
        }
        List<Map<String, String>> byRank = new ArrayList<>();
        for (byte[] b : allGatherBytes(encodePairs(values))) {
            byRank.add(decodePairs(b));
        }
        String differences = differences(byRank);
        if (!differences.isEmpty()) {
            throw new IllegalArgumentException(what + " differs between ranks: " + differences
                    + " (every process of a run must be started with the same config and options)");
        }
    }

    /** The most differences {@link #requireSame} names; it counts the rest. */
    static final int MAX_DIFFERENCES = 10;

    /** Longer values are cut to this many characters in messages. */
    private static final int MAX_VALUE_CHARS = 120;

    /** "k is a on rank 0 and b on rank 1; ...": each key whose value differs between the ranks, in key order. */
    static String differences(List<Map<String, String>> byRank) {
        java.util.SortedSet<String> keys = new java.util.TreeSet<>();
        byRank.forEach(m -> keys.addAll(m.keySet()));
        List<String> found = new ArrayList<>();
        int count = 0;
        for (String key : keys) {
            Map<String, List<Integer>> values = new LinkedHashMap<>();
            for (int r = 0; r < byRank.size(); r++) {
                String v = byRank.get(r).get(key);
                values.computeIfAbsent(v == null ? "absent" : cut(v), k -> new ArrayList<>()).add(r);
            }
            if (values.size() > 1 && count++ < MAX_DIFFERENCES) {
                found.add(key + " is " + grouped(values, " on ", " and "));
            }
        }
        String text = String.join("; ", found);
        return count > MAX_DIFFERENCES ? text + "; and " + (count - MAX_DIFFERENCES) + " more" : text;
    }

    private static String cut(String value) {
        return value.length() <= MAX_VALUE_CHARS ? value : value.substring(0, MAX_VALUE_CHARS) + "...";
    }

    private static final com.fasterxml.jackson.databind.ObjectMapper JSON = new com.fasterxml.jackson.databind.ObjectMapper();

    private static byte[] encodePairs(Map<String, String> values) {
        try {
            return JSON.writeValueAsBytes(values);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static Map<String, String> decodePairs(byte[] b) {
        try {
            return JSON.readValue(b, new com.fasterxml.jackson.core.type.TypeReference<LinkedHashMap<String, String>>() { });
        } catch (java.io.IOException e) {
            throw new IllegalStateException("A rank's values could not be read (" + b.length + " bytes): " + e.getMessage(), e);
        }
    }

    /** Returns once every rank has called it. */
    public void barrier() {
        checkOpen();
        if (!enabled()) {
            return;
        }
        collective(Op.BARRIER, seq -> {
            requireSameCall(Op.BARRIER, seq, exchangeHeaders(Op.BARRIER, seq, 0, 0)); // every rank's header: all are here
            return null;
        });
    }

    /**
     * Every rank's header {@code [seq, op, signature, detail]}, by rank: one all-gather of the same
     * size and kind whatever the collective, so it pairs up even between ranks in different ones.
     */
    private long[][] exchangeHeaders(Op op, long seq, long signature, long detail) {
        int world = worldSize();
        Device wire = wireDevice();
        try (Scope scope = Scope.open()) {
            Tensor mine = Tensor.ofLongs(new long[] {seq, op.ordinal(), signature, detail}, wire); // [4]
            Tensor all = Tensor.zerosOf(DType.I64, wire, world * HEADER);                       // [world · 4]
            group.allGather(mine, all, timeout);
            long[] flat = all.toLongArray();
            long[][] headers = new long[world][];
            for (int r = 0; r < world; r++) {
                headers[r] = Arrays.copyOfRange(flat, r * HEADER, (r + 1) * HEADER);
            }
            return headers;
        }
    }

    /** Fails (on every rank alike) unless every rank is in collective {@code seq}, {@code op}. */
    private void requireSameCall(Op op, long seq, long[][] headers) {
        Map<String, List<Integer>> calls = new LinkedHashMap<>();
        for (int r = 0; r < headers.length; r++) {
            long otherOp = headers[r][1];
            String call = (otherOp >= 0 && otherOp < Op.values().length ? Op.values()[(int) otherOp].label : "operation " + otherOp)
                    + " #" + headers[r][0];
            calls.computeIfAbsent(call, c -> new ArrayList<>()).add(r);
        }
        if (calls.size() > 1) {
            List<String> where = new ArrayList<>();
            calls.forEach((call, ranks) -> where.add(ranksText(ranks) + (ranks.size() == 1 ? " is in " : " are in ") + call));
            throw mismatch(op, seq, "the ranks call collectives in different orders: " + String.join("; ", where)
                    + " (every rank must make the same collective calls in the same order: do the processes run the same "
                    + "code and config?)", headers, h -> h[0] + " " + h[1]);
        }
    }

    /**
     * Fails (on every rank alike) unless every rank is in this collective with tensors of the same
     * dtypes and shapes (and, for a broadcast, the same root), naming the first tensor that differs.
     */
    private void agree(Op op, long seq, List<Tensor> tensors, int root) {
        List<String> described = new ArrayList<>(tensors.size());
        for (Tensor t : tensors) {
            described.add(t.dtype() + " " + Arrays.toString(t.shape()));
        }
        long signature = signature(described);
        long[][] headers = exchangeHeaders(op, seq, signature, root);
        requireSameCall(op, seq, headers);
        Map<String, List<Integer>> roots = new LinkedHashMap<>();
        for (int r = 0; r < headers.length; r++) {
            roots.computeIfAbsent("root " + headers[r][3], k -> new ArrayList<>()).add(r);
        }
        if (roots.size() > 1) {
            throw mismatch(op, seq, "the ranks name different roots: " + grouped(roots, " on ", ", "), headers, h -> "" + h[3]);
        }
        boolean same = true;
        for (long[] h : headers) {
            same &= h[2] == signature;
        }
        if (same) {
            return;
        }
        // every rank saw the difference: all exchange their descriptions to name it
        byte[] mine = String.join("\n", described).getBytes(StandardCharsets.UTF_8);
        long[] sizes = new long[headers.length];
        long[][] lengths = exchangeHeaders(op, seq, signature, mine.length);
        for (int r = 0; r < sizes.length; r++) {
            sizes[r] = lengths[r][3];
        }
        List<List<String>> all = new ArrayList<>();
        for (byte[] b : gatherPayloads(mine, sizes)) {
            String text = new String(b, StandardCharsets.UTF_8);
            all.add(text.isEmpty() ? List.of() : List.of(text.split("\n", -1)));
        }
        throw mismatch(op, seq, firstDifference(all), headers, h -> "" + h[2]);
    }

    /** A 64-bit hash of the tensors' descriptions (FNV-1a over their text). */
    private static long signature(List<String> described) {
        long h = 0xcbf29ce484222325L;
        for (byte b : String.join("\n", described).concat("\n" + described.size()).getBytes(StandardCharsets.UTF_8)) {
            h = (h ^ (b & 0xff)) * 0x100000001b3L;
        }
        return h;
    }

    /** "tensor 3 of 10 is F32 [2, 3] on rank 0 and F32 [2, 4] on rank 1": the first index whose description differs. */
    static String firstDifference(List<List<String>> byRank) {
        int longest = byRank.stream().mapToInt(List::size).max().orElse(0);
        for (int i = 0; i < longest; i++) {
            Map<String, List<Integer>> values = new LinkedHashMap<>();
            for (int r = 0; r < byRank.size(); r++) {
                List<String> d = byRank.get(r);
                values.computeIfAbsent(i < d.size() ? d.get(i) : "absent", k -> new ArrayList<>()).add(r);
            }
            if (values.size() > 1) {
                Map<Integer, List<Integer>> counts = new LinkedHashMap<>();
                for (int r = 0; r < byRank.size(); r++) {
                    counts.computeIfAbsent(byRank.get(r).size(), k -> new ArrayList<>()).add(r);
                }
                List<String> passes = new ArrayList<>();
                counts.forEach((n, ranks) -> passes.add(ranksText(ranks) + (ranks.size() == 1 ? " passes " : " pass ") + n
                        + (n == 1 ? " tensor" : " tensors")));
                return "the tensors differ between ranks: tensor " + i + " is " + grouped(values, " on ", " and ")
                        + (counts.size() > 1 ? " (" + String.join(", ", passes) + ")" : "")
                        + " (every rank must pass tensors of the same shapes and dtypes in the same order: do the processes "
                        + "load the same models?)";
            }
        }
        return "the tensors differ between ranks (their descriptions agree, their signatures do not)";
    }

    /** "a on ranks 0, 2 and b on rank 1": each value with the ranks that hold it, in order of first appearance. */
    private static String grouped(Map<String, List<Integer>> ranksByValue, String between, String separator) {
        List<String> parts = new ArrayList<>();
        ranksByValue.forEach((value, ranks) -> parts.add(value + between + ranksText(ranks)));
        return String.join(separator, parts);
    }

    /**
     * The error every rank throws when the headers disagree (suspects: the ranks whose {@code part}
     * differs from this rank's). Nothing was exchanged beyond the headers, so the context stays usable.
     */
    private DistributedException mismatch(Op op, long seq, String what, long[][] headers,
            java.util.function.Function<long[], String> part) {
        List<Integer> others = new ArrayList<>();
        String mine = part.apply(headers[rank()]);
        for (int r = 0; r < headers.length; r++) {
            if (!part.apply(headers[r]).equals(mine)) {
                others.add(r);
            }
        }
        return new DistributedException("rank " + rank() + " of " + worldSize() + ": " + op.label + " (collective #" + seq
                + "): " + what, others, null);
    }

    /** Where tensors must be for the backend: the CUDA device for NCCL, host memory for Gloo. */
    private Device wireDevice() {
        return backend == Backend.NCCL ? device : Device.CPU;
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("This DistributedContext is closed");
        }
        if (failed) {
            throw new IllegalStateException("An earlier collective of this DistributedContext failed; the run cannot "
                    + "go on (close it)");
        }
    }

    /** A collective's body, given its sequence number. */
    private interface Body<T> {
        T run(long seq);
    }

    /**
     * Runs collective {@code op}: publishes it in this rank's heartbeat, and turns each way it can
     * fail into a {@link DistributedException} that says what, where and why: a failed exchange
     * (with what the peers were doing), ranks that disagree about the call, or an error of this
     * rank's own (out of memory, a native error) — which leaves the others waiting, so the context
     * is failed after it.
     */
    private <T> T collective(Op op, Body<T> body) {
        long seq = ++sequence;
        heartbeats.enter(seq, op.label);
        long start = System.nanoTime();
        try {
            T result = body.run(seq);
            heartbeats.leave(seq, op.label);
            return result;
        } catch (CommunicationException e) {
            failed = true;
            Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
            DistributedException error = failure(op.label, seq, elapsed, e);
            heartbeats.finish("failed");
            throw error;
        } catch (DistributedException e) {
            heartbeats.leave(seq, op.label); // ranks that disagree: every rank saw the same headers and fails alike
            throw e;
        } catch (IllegalArgumentException e) {
            heartbeats.leave(seq, op.label); // a local error (bad arguments): the peers saw the same and failed alike
            throw e;
        } catch (RuntimeException | Error e) {
            failed = true;
            heartbeats.finish("failed");
            throw new DistributedException("rank " + rank() + " of " + worldSize() + ": " + op.label + " (collective #" + seq
                    + ") failed on this rank after " + seconds(Duration.ofNanos(System.nanoTime() - start)) + ": "
                    + DistributedException.describe(e) + " (the other ranks wait for it until their timeout, " + seconds(timeout) + ")",
                    List.of(), e);
        } finally {
            collectiveNanos += System.nanoTime() - start;
        }
    }


    /**
     * Nanoseconds this process has spent inside collectives so far: moving the data, and waiting for
     * the slowest rank to arrive (so on balanced work, mostly communication).
     */
    public long collectiveNanos() {
        return collectiveNanos;
    }

    /** The message of a failed collective: what, where, after how long, and what the peers were doing. */
    private DistributedException failure(String op, long seq, Duration elapsed, CommunicationException cause) {
        StringBuilder m = new StringBuilder();
        m.append("rank ").append(rank()).append(" of ").append(worldSize()).append(": ").append(op)
                .append(" (collective #").append(seq).append(") ")
                .append(cause.timedOut() ? "timed out" : "failed").append(" after ").append(seconds(elapsed))
                .append(" (timeout ").append(seconds(timeout)).append("): ").append(cause.getMessage())
                .append(cause.getMessage().matches(".*[.!?]$") ? " Peers: " : ". Peers: ");
        List<Integer> suspects = new ArrayList<>();
        try {
            store.setTimeout(probeTimeout(timeout)); // the run is over: wait for the store no longer than it takes to answer
            List<String> notes = new ArrayList<>();
            for (Heartbeats.Peer p : Heartbeats.observe(store, worldSize(), rank(), heartbeats.interval())) {
                String note = describe(p, op, seq);
                if (note != null) {
                    notes.add(note);
                    suspects.add(p.rank());
                }
            }
            m.append(notes.isEmpty() ? "every other rank is alive and in the same collective." : String.join("; ", notes) + ".");
        } catch (CommunicationException e) {
            m.append("the rendezvous store (served by rank 0 at ").append(info.masterAddr()).append(':')
                    .append(info.masterPort()).append(") does not answer: rank 0 has exited, is stopped or frozen, or is unreachable.");
            suspects.add(0);
        }
        return new DistributedException(m.toString(), suspects, cause);
    }

    /** Why peer {@code p} is to blame for collective {@code seq} ({@code op}), or null when it is there too. */
    private static String describe(Heartbeats.Peer p, String op, long seq) {
        String rank = "rank " + p.rank();
        if (!p.joined()) {
            return rank + " never joined";
        }
        String at = p.seq() == 0 ? "before any collective" : p.op() + " #" + p.seq();
        return switch (p.phase()) {
            case "closed" -> rank + " had already closed its distributed context (" + (p.seq() == 0 ? at : "after " + at) + ")";
            case "failed" -> rank + " failed " + (p.seq() == 0 ? at : "in " + at);
            default -> {
                String position = p.seq() == 0 ? at : (p.phase().equals("in") ? "in " : "past ") + at;
                if (!p.responding()) {
                    yield rank + " is not responding (its heartbeat stopped: it exited, was killed or is frozen; last seen "
                            + position + ")";
                }
                if (p.seq() == seq && p.phase().equals("in")) {
                    yield p.op().equals(op) ? null
                            : rank + " is in " + at + " instead: the ranks call collectives in different orders";
                }
                yield p.seq() < seq ? rank + " is alive but has not reached " + op + " #" + seq + " (it is " + position + ")"
                        : rank + " is ahead, " + position;
            }
        };
    }

    private static String ranksText(List<Integer> ranks) {
        StringBuilder s = new StringBuilder(ranks.size() == 1 ? "rank " : "ranks ");
        for (int i = 0; i < ranks.size(); i++) {
            s.append(i == 0 ? "" : ", ").append(ranks.get(i));
        }
        return s.toString();
    }

    private static String seconds(Duration d) {
        return String.format(Locale.ROOT, "%.1f s", d.toMillis() / 1000.0);
    }

    /**
     * Leaves the run. After successful collectives, rank 0 waits (up to the timeout) until every rank
     * has closed before it stops the store they share. After a failure the native process group is
     * left to the process's exit (a peer's pending operation may still hold it).
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (!enabled()) {
            return;
        }
        if (failed) {
            store.close();
            return;
        }
        heartbeats.finish("closed");
        try {
            store.set(CLOSED_PREFIX + rank(), "1");
            if (isMain()) {
                List<String> keys = new ArrayList<>();
                for (int r = 1; r < worldSize(); r++) {
                    keys.add(CLOSED_PREFIX + r);
                }
                store.await(keys, timeout);
            }
        } catch (CommunicationException e) {
            // a peer is gone or the store is: nothing left to wait for
        }
        group.close();
        store.close();
    }

    @Override
    public String toString() {
        return enabled() ? "DistributedContext[rank " + rank() + " of " + worldSize() + ", local rank " + localRank()
                + ", " + backend.configName() + ", " + device + "]" : "DistributedContext[single process, " + device + "]";
    }
}
