package comlrl.trainers.common;

import comlrl.distributed.DistributedContext;
import comlrl.generation.Completion;
import comlrl.generation.FinishReason;
import comlrl.model.DecoderLm;
import comlrl.tensor.AdamW;
import comlrl.tensor.Device;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import comlrl.utils.DdpSplit;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * What this process does in a run of several processes ({@code parallel_training: ddp}), and the
 * exchanges that keep every process on the single-process computation. W processes (ranks) run the
 * same trainer code, draw the same seeds and make the same collective calls in the same order:
 * <ul>
 *   <li>{@link DdpSplit#DATA}: every rank holds every agent; of the rows (completions) of a group,
 *       rank r owns rows {@code k ≡ r (mod W)} ({@link #ownsRow}): it samples them (each row keeps the
 *       single-process row seed), scores them and backpropagates them; the rows are exchanged, and
 *       the gradient sums are added across ranks before each optimizer step ({@link #sumGradients}).</li>
 *   <li>{@link DdpSplit#AGENTS}: agent i lives on rank {@code i mod W} only ({@link #ownsAgent}); its
 *       completions are exchanged so that every rank sees the joint responses.</li>
 * </ul>
 * User callbacks (reward function and processor, external transition, evaluation logger) run on rank
 * 0 only, once per joint response ({@link #onMain}); only rank 0 writes metrics, reports and
 * checkpoint metadata. A single-process run is the case W = 1, where every method is the identity.
 */
public final class RankWork implements AutoCloseable {
    private final DistributedContext context; // null: one process
    private final DdpSplit split;
    private final int numAgents;
    private final Device device; // the device of a ddp process, or null
    private DistributedContext owned; // connected here from the environment: closed with this

    private RankWork(DistributedContext context, DdpSplit split, int numAgents, Device device) {
        this.context = context;
        this.split = split;
        this.numAgents = numAgents;
        this.device = device;
    }

    /** One process doing everything. */
    public static RankWork single(int numAgents) {
        return new RankWork(null, DdpSplit.DATA, numAgents, null);
    }

    /**
     * This process's work in a run whose config says {@code mode} and {@code split}: one process
     * unless {@code mode} is "ddp"; then {@code given}, or a context connected as the environment
     * says (torchrun's variables), which {@link #close()} closes.
     *
     * @throws IllegalArgumentException for "ddp" without torchrun's variables or a context, or a
     *     context of several processes given without "ddp"
     */
    public static RankWork forRun(comlrl.utils.ParallelTraining mode, DdpSplit split, int numAgents,
            DistributedContext given) {
        if (mode != comlrl.utils.ParallelTraining.DDP) {
            if (given != null && given.enabled()) {
                throw new IllegalArgumentException("the trainer was given a DistributedContext of " + given.worldSize()
                        + " processes, but parallel_training is \"" + mode + "\"; set parallel_training: ddp");
            }
            return single(numAgents);
        }
        DistributedContext context = given;
        if (context == null) {
            if (comlrl.distributed.RankInfo.fromEnvironment(System.getenv()).isEmpty()) {
                throw new IllegalArgumentException("parallel_training=\"ddp\" needs torchrun's variables (WORLD_SIZE, "
                        + "RANK, LOCAL_RANK, MASTER_ADDR, MASTER_PORT): start the run with bin/comlrl launch "
                        + "--nproc-per-node N train CONFIG.yaml, torchrun or srun, or give the trainer a DistributedContext");
            }
            context = DistributedContext.fromEnvironment();
        }
        try {
            RankWork w = of(context, split, numAgents);
            if (given == null) {
                w.owned = context;
            }
            return w;
        } catch (RuntimeException | Error e) {
            if (given == null) {
                context.close();
            }
            throw e;
        }
    }

    /**
     * This rank's share of a run of {@code numAgents} agents split as {@code split}.
     *
     * @throws IllegalArgumentException when {@code split} is "agents" and there are fewer agents than ranks
     */
    public static RankWork of(DistributedContext context, DdpSplit split, int numAgents) {
        if (context == null || !context.enabled()) {
            return new RankWork(null, DdpSplit.DATA, numAgents, context == null ? null : context.device());
        }
        if (split == DdpSplit.AGENTS && numAgents < context.worldSize()) {
            throw new IllegalArgumentException("ddp_split: agents puts each agent on one process, but " + numAgents
                    + " agents cannot keep " + context.worldSize() + " processes busy; start at most " + numAgents
                    + " processes (--nproc-per-node) or use ddp_split: data");
        }
        return new RankWork(context, split, numAgents, context.device());
    }

    /** The device of this process in a ddp run (its context's), or null for a plain one-process run. */
    public Device device() {
        return device;
    }

    /** Closes the context connected by {@link #forRun}, if any. */
    @Override
    public void close() {
        if (owned != null) {
            owned.close();
            owned = null;
        }
    }

    /** The context of the processes, or null for one process. */
    public DistributedContext context() {
        return context;
    }

    /** Whether there are several processes. */
    public boolean distributed() {
        return context != null;
    }

    public DdpSplit split() {
        return split;
    }

    public int rank() {
        return context == null ? 0 : context.rank();
    }

    public int worldSize() {
        return context == null ? 1 : context.worldSize();
    }

    /** Rank 0: the one that writes metrics, reports and checkpoints and calls the user's callbacks. */
    public boolean isMain() {
        return rank() == 0;
    }

    /** Whether the rows of a group are divided between the ranks (the data split of several processes). */
    public boolean splitsRows() {
        return context != null && split == DdpSplit.DATA;
    }

    /** Whether this rank holds agent {@code agent} (always, except in the agents split). */
    public boolean ownsAgent(int agent) {
        return ownerOf(agent) == rank() || context == null || split == DdpSplit.DATA;
    }

    /** The rank that holds agent {@code agent} in the agents split ({@code agent mod W}). */
    public int ownerOf(int agent) {
        return agent % worldSize();
    }

    /** The agents this rank holds, in order. */
    public List<Integer> ownedAgents() {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < numAgents; i++) {
            if (ownsAgent(i)) {
                out.add(i);
            }
        }
        return out;
    }

    /** Whether this rank samples and backpropagates row {@code row} of a group ({@code row mod W == rank} when splitting rows). */
    public boolean ownsRow(int row) {
        return !splitsRows() || row % worldSize() == rank();
    }

    /** The rows of {@code 0 .. rows-1} this rank owns, in order. */
    public int[] localRows(int rows) {
        int[] out = new int[rows];
        int n = 0;
        for (int k = 0; k < rows; k++) {
            if (ownsRow(k)) {
                out[n++] = k;
            }
        }
        return java.util.Arrays.copyOf(out, n);
    }

    // ---------------------------------------------------------------- exchanges

    /** How a value travels between ranks. */
    public interface Codec<T> {
        void write(DataOutputStream out, T value) throws IOException;

        T read(DataInputStream in) throws IOException;
    }

    /**
     * {@code compute} run on rank 0 only, its result given to every rank. When it fails on rank 0,
     * rank 0 rethrows its exception and the other ranks fail naming rank 0 and {@code what}.
     */
    public <T> T onMain(String what, Supplier<T> compute, Codec<T> codec) {
        if (context == null) {
            return compute.get();
        }
        T value = null;
        RuntimeException failure = null;
        byte[] payload = new byte[0];
        if (isMain()) {
            try {
                value = compute.get();
                T v = value;
                payload = encode(out -> {
                    out.writeBoolean(true);
                    codec.write(out, v);
                });
            } catch (RuntimeException e) {
                failure = e;
                String message = e.getMessage() == null || e.getMessage().isBlank()
                        ? comlrl.distributed.DistributedException.describe(e) : e.getMessage();
                payload = encode(out -> {
                    out.writeBoolean(false);
                    writeString(out, message);
                });
            } catch (Error e) {
                payload = encode(out -> {
                    out.writeBoolean(false);
                    writeString(out, e.toString());
                });
                context.allGatherBytes(payload);
                throw e;
            }
        }
        byte[] fromMain = context.allGatherBytes(payload).get(0);
        if (failure != null) {
            throw failure;
        }
        if (isMain()) {
            return value;
        }
        Outcome<T> outcome = decode(fromMain, "rank 0's result of " + what,
                in -> in.readBoolean() ? new Outcome<>(codec.read(in), null) : new Outcome<>(null, readString(in)));
        if (outcome.error() != null) {
            throw new IllegalStateException("rank 0 failed while " + what + ": " + outcome.error()
                    + " (rank 0's output has the details)");
        }
        return outcome.value();
    }

    /** What rank 0 sends from {@link #onMain}: its value, or the message of its failure. */
    private record Outcome<T>(T value, String error) {
    }

    /** Every rank's {@code mine}, by rank. */
    public <T> List<T> gather(T mine, Codec<T> codec) {
        if (context == null) {
            return List.of(mine);
        }
        List<T> out = new ArrayList<>();
        List<byte[]> all = context.allGatherBytes(encode(o -> codec.write(o, mine)));
        for (int r = 0; r < all.size(); r++) {
            out.add(decode(all.get(r), "the value rank " + r + " sent", codec::read));
        }
        return out;
    }

    /**
     * Per agent, its owner's value: {@code mine.get(i)} is this rank's value of agent i, null for the
     * agents other ranks hold (the agents split); every rank gets every agent's. In one process and
     * with the data split (every rank holds every agent) {@code mine} itself.
     */
    public <T> List<T> fromOwners(List<T> mine, Codec<T> element) {
        if (context == null || splitsRows()) {
            return mine;
        }
        List<List<T>> byRank = gather(mine, listOf(nullable(element)));
        List<T> out = new ArrayList<>();
        for (int i = 0; i < mine.size(); i++) {
            out.add(byRank.get(ownerOf(i)).get(i));
        }
        return out;
    }

    /**
     * {@code f} of each of {@code items}, every rank getting every item's value from its owner
     * ({@link #fromOwners}; in the agents split {@code items} holds nulls for the others' agents).
     */
    public <T> long[] longsFromOwners(List<T> items, java.util.function.ToLongFunction<T> f) {
        List<long[]> mine = new ArrayList<>();
        for (T item : items) {
            mine.add(item == null ? null : new long[] {f.applyAsLong(item)});
        }
        return fromOwners(mine, LONGS).stream().mapToLong(v -> v[0]).toArray();
    }

    /**
     * Element-wise sums over the ranks (exact where each element is non-zero on one rank only:
     * values filled in by their owner, zeros elsewhere).
     */
    public double[] sum(double[] values) {
        if (context == null || values.length == 0) {
            return values;
        }
        try (Scope s = Scope.open()) {
            Tensor t = Tensor.ofDoubles(values, Device.CPU, values.length);
            context.allReduceSum(List.of(t));
            return t.toDoubleArray();
        }
    }

    /**
     * Adds the gradients of {@code model}'s trainable parameters across ranks (in place), so that
     * every rank holds the gradient of the whole minibatch. A parameter without a gradient on this
     * rank takes zeros when another rank has one; one without a gradient anywhere stays without, as in
     * one process (its optimizer step skips it).
     */
    public void sumGradients(DecoderLm model) {
        sumGradients(model.parameters());
    }

    /** {@link #sumGradients(DecoderLm)} for an optimizer's parameters. */
    public void sumGradients(List<Tensor> parameters) {
        if (context == null) {
            return;
        }
        try (Scope s = Scope.open()) {
            List<Tensor> params = parameters.stream().filter(Tensor::requiresGrad).toList();
            double[] has = new double[params.size()];
            for (int i = 0; i < has.length; i++) {
                has[i] = params.get(i).grad() != null ? 1 : 0;
            }
            double[] any = sum(has);
            List<Tensor> grads = new ArrayList<>();
            for (int i = 0; i < params.size(); i++) {
                if (any[i] > 0) {
                    grads.add(params.get(i).gradOrZeros());
                }
            }
            context.allReduceSum(grads);
        }
    }

    /**
     * An AdamW over {@code parameters}: the whole optimizer, or with the data split and
     * {@code zero_stage: 1} this process's shard of it (ZeRO stage 1, {@link AdamW#shard}): each
     * parameter is held by one process, chosen so that every process holds about as many elements
     * (in order, each to the process holding the fewest so far), so each keeps about 1/W of the
     * moments and float32 masters. {@link #step} then updates the held parameters and sends them.
     */
    public AdamW adamW(List<Tensor> parameters, double lr, double weightDecay) {
        if (!splitsRows() || context.zeroStage() == 0) {
            return new AdamW(parameters, lr, weightDecay);
        }
        int[] holder = holders(parameters, worldSize());
        return AdamW.shard(parameters, lr, weightDecay, i -> holder[i] == rank());
    }

    /** Each parameter's process: in order, to the one holding the fewest elements so far (the lowest rank on a tie). */
    static int[] holders(List<Tensor> parameters, int worldSize) {
        long[] load = new long[worldSize];
        int[] holder = new int[parameters.size()];
        for (int i = 0; i < holder.length; i++) {
            int least = 0;
            for (int r = 1; r < worldSize; r++) {
                least = load[r] < load[least] ? r : least;
            }
            holder[i] = least;
            load[least] += parameters.get(i).numel();
        }
        return holder;
    }

    /**
     * One step of {@code opt} (after {@link #sumGradients}): every parameter's update is computed by
     * the process holding its state ({@link #adamW}) and sent to the others, so every process ends
     * with the same weights as the unsharded step gives.
     */
    public void step(AdamW opt) {
        opt.step();
        if (!opt.sharded()) {
            return;
        }
        int[] holder = holders(opt.parameters(), worldSize());
        try (Scope s = Scope.open(); comlrl.tensor.GradMode g = comlrl.tensor.GradMode.noGrad()) {
            for (int i = 0; i < holder.length; i++) {
                Tensor p = opt.parameters().get(i);
                if (p.grad() != null) { // the same on every process after the gradient sum
                    context.broadcast(p, holder[i]);
                }
            }
        }
    }

    /**
     * The whole state of the sharded {@code opt} (as {@link AdamW#state()} of the unsharded
     * optimizer), on rank 0, in host memory; null on the other ranks, which send their entries.
     * Every rank calls it. For an unsharded optimizer its own state.
     */
    public java.util.Map<String, Tensor> wholeState(AdamW opt) {
        if (!opt.sharded()) {
            return opt.state();
        }
        int[] holder = holders(opt.parameters(), worldSize());
        java.util.Map<String, Tensor> mine = opt.state();
        java.util.Map<String, Tensor> out = isMain() ? new java.util.LinkedHashMap<>() : null;
        for (int i = 0; i < holder.length; i++) {
            Tensor p = opt.parameters().get(i);
            for (String name : opt.stateKeys(i)) {
                try (Scope s = Scope.open()) {
                    Tensor t = holder[i] == rank() ? mine.get(name)
                            : Tensor.zerosOf(comlrl.tensor.DType.F32, p.device(), p.shape());
                    context.broadcast(t, holder[i]);
                    if (out != null) {
                        out.put(name, t.to(Device.CPU).cloneTensor().keep());
                    }
                }
            }
        }
        if (out != null) {
            out.put("step", mine.get("step"));
        }
        return out;
    }

    /** Waits for every rank. */
    public void barrier() {
        if (context != null) {
            context.barrier();
        }
    }

    // ---------------------------------------------------------------- codecs

    /** A double array. */
    public static final Codec<double[]> DOUBLES = new Codec<>() {
        @Override
        public void write(DataOutputStream out, double[] v) throws IOException {
            out.writeInt(v.length);
            for (double d : v) {
                out.writeDouble(d);
            }
        }

        @Override
        public double[] read(DataInputStream in) throws IOException {
            double[] v = new double[length(in, Double.BYTES)];
            for (int i = 0; i < v.length; i++) {
                v[i] = in.readDouble();
            }
            return v;
        }
    };

    /** A matrix of doubles (rows of any length). */
    public static final Codec<double[][]> DOUBLE_MATRIX = new Codec<>() {
        @Override
        public void write(DataOutputStream out, double[][] v) throws IOException {
            out.writeInt(v.length);
            for (double[] row : v) {
                DOUBLES.write(out, row);
            }
        }

        @Override
        public double[][] read(DataInputStream in) throws IOException {
            double[][] v = new double[length(in, Integer.BYTES)][];
            for (int i = 0; i < v.length; i++) {
                v[i] = DOUBLES.read(in);
            }
            return v;
        }
    };

    /** A string. */
    public static final Codec<String> STRING = new Codec<>() {
        @Override
        public void write(DataOutputStream out, String v) throws IOException {
            writeString(out, v);
        }

        @Override
        public String read(DataInputStream in) throws IOException {
            return readString(in);
        }
    };

    /** A JSON value (maps, lists, strings, numbers, booleans, null), through Jackson. */
    public static final Codec<Object> JSON = new Codec<>() {
        private final com.fasterxml.jackson.databind.ObjectMapper mapper = new com.fasterxml.jackson.databind.ObjectMapper();

        @Override
        public void write(DataOutputStream out, Object v) throws IOException {
            writeString(out, mapper.writeValueAsString(v));
        }

        @Override
        public Object read(DataInputStream in) throws IOException {
            return mapper.readValue(readString(in), Object.class);
        }
    };

    /** A list of strings. */
    public static final Codec<List<String>> STRINGS = new Codec<>() {
        @Override
        public void write(DataOutputStream out, List<String> v) throws IOException {
            out.writeInt(v.size());
            for (String s : v) {
                writeString(out, s);
            }
        }

        @Override
        public List<String> read(DataInputStream in) throws IOException {
            int n = length(in, Integer.BYTES);
            List<String> v = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                v.add(readString(in));
            }
            return v;
        }
    };

    /** A long array. */
    public static final Codec<long[]> LONGS = new Codec<>() {
        @Override
        public void write(DataOutputStream out, long[] v) throws IOException {
            writeLongs(out, v);
        }

        @Override
        public long[] read(DataInputStream in) throws IOException {
            return readLongs(in);
        }
    };

    /** {@code element}'s values or null. */
    public static <T> Codec<T> nullable(Codec<T> element) {
        return new Codec<>() {
            @Override
            public void write(DataOutputStream out, T v) throws IOException {
                out.writeBoolean(v != null);
                if (v != null) {
                    element.write(out, v);
                }
            }

            @Override
            public T read(DataInputStream in) throws IOException {
                return in.readBoolean() ? element.read(in) : null;
            }
        };
    }

    /** A list of values of {@code element}'s kind. */
    public static <T> Codec<List<T>> listOf(Codec<T> element) {
        return new Codec<>() {
            @Override
            public void write(DataOutputStream out, List<T> v) throws IOException {
                out.writeInt(v.size());
                for (T t : v) {
                    element.write(out, t);
                }
            }

            @Override
            public List<T> read(DataInputStream in) throws IOException {
                int n = length(in, 1);
                List<T> v = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    v.add(element.read(in));
                }
                return v;
            }
        };
    }

    /** A generated completion, every field. */
    public static final Codec<Completion> COMPLETION = new Codec<>() {
        @Override
        public void write(DataOutputStream out, Completion c) throws IOException {
            writeLongs(out, c.promptIds());
            writeLongs(out, c.tokenIds());
            writeString(out, c.text());
            DOUBLES.write(out, c.logprobs());
            out.writeInt(c.finishReason().ordinal());
        }

        @Override
        public Completion read(DataInputStream in) throws IOException {
            long[] prompt = readLongs(in);
            long[] tokens = readLongs(in);
            String text = readString(in);
            double[] logprobs = DOUBLES.read(in);
            return new Completion(prompt, tokens, text, logprobs, FinishReason.values()[in.readInt()]);
        }
    };

    static void writeLongs(DataOutputStream out, long[] v) throws IOException {
        out.writeInt(v.length);
        for (long x : v) {
            out.writeLong(x);
        }
    }

    static long[] readLongs(DataInputStream in) throws IOException {
        long[] v = new long[length(in, Long.BYTES)];
        for (int i = 0; i < v.length; i++) {
            v[i] = in.readLong();
        }
        return v;
    }

    /**
     * A length written before {@code n} items of at least {@code bytesEach} bytes each, checked against
     * the bytes left: values that another rank did not write as this one reads them (the ranks
     * exchanging different things) fail here instead of allocating an array of a garbage length.
     */
    static int length(DataInputStream in, int bytesEach) throws IOException {
        int n = in.readInt();
        int left = in.available(); // exact: the values are decoded from a byte array
        if (n < 0 || (long) n * bytesEach > left) {
            throw new IOException("a length of " + n + " where " + left + " bytes remain");
        }
        return n;
    }

    /** UTF-8 with an int length (strings longer than 64 KiB pass). */
    static void writeString(DataOutputStream out, String s) throws IOException {
        byte[] b = s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        out.writeInt(b.length);
        out.write(b);
    }

    static String readString(DataInputStream in) throws IOException {
        byte[] b = new byte[length(in, 1)];
        in.readFully(b);
        return new String(b, java.nio.charset.StandardCharsets.UTF_8);
    }

    interface Writer {
        void write(DataOutputStream out) throws IOException;
    }

    interface Reader<T> {
        T read(DataInputStream in) throws IOException;
    }

    static byte[] encode(Writer w) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            w.write(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /**
     * {@code b} read by {@code r}. Bytes that do not read as expected (the ranks exchanged different
     * things at the same point) fail naming {@code source} and what went wrong.
     */
    static <T> T decode(byte[] b, String source, Reader<T> r) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(b))) {
            return r.read(in);
        } catch (IOException | RuntimeException | OutOfMemoryError e) { // OutOfMemoryError: one array of a garbage length
            throw new IllegalStateException("could not read " + source + " (" + b.length + " bytes): "
                    + comlrl.distributed.DistributedException.describe(e) + "; the ranks exchanged different values at "
                    + "this point: do all processes run the same code and config?", e);
        }
    }

    @Override
    public String toString() {
        return context == null ? "one process" : "rank " + rank() + " of " + worldSize() + " (ddp_split " + split + ")";
    }
}
