package comlrl.tensor;


import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.DoublePointer;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.pytorch.BoolOptional;
import org.bytedeco.pytorch.DeviceOptional;
import org.bytedeco.pytorch.DoubleOptional;
import org.bytedeco.pytorch.LongArrayRef;
import org.bytedeco.pytorch.LongOptional;
import org.bytedeco.pytorch.MemoryFormatOptional;
import org.bytedeco.pytorch.Scalar;
import org.bytedeco.pytorch.ScalarTypeOptional;
import org.bytedeco.pytorch.T_TensorTensor_T;
import org.bytedeco.pytorch.TensorOptional;
import org.bytedeco.pytorch.TensorOptions;
import org.bytedeco.pytorch.TensorVector;
import org.bytedeco.pytorch.global.torch;

/**
 * A libtorch tensor. Every operation returns a new tensor (views share storage) except those whose
 * name ends in an underscore, which work in place.
 *
 * <p>Memory: a tensor made while a {@link Scope} is open is freed when that scope closes, unless
 * {@link #keep()} was called; kept tensors are freed by {@link #close()}. Tensors made outside any
 * scope are freed by {@link #close()} (or, late, by the garbage collector).
 */
public final class Tensor implements AutoCloseable {
    final org.bytedeco.pytorch.Tensor handle;

    Tensor(org.bytedeco.pytorch.Tensor handle) {
        this.handle = handle;
    }

    // ---------------------------------------------------------------- creation

    static TensorOptions options(DType dtype, Device device) {
        TensorOptions o = new TensorOptions().dtype(new ScalarTypeOptional(dtype.scalarType));
        if (device.isCuda()) {
            o = o.device(new DeviceOptional(Engine.nativeDevice(device)));
        }
        return o;
    }

    public static Tensor zerosOf(DType dtype, Device device, long... shape) {
        return new Tensor(torch.zeros(shape, options(dtype, device)));
    }

    public static Tensor emptyOf(DType dtype, Device device, long... shape) {
        return new Tensor(torch.empty(shape, options(dtype, device), new MemoryFormatOptional()));
    }

    public static Tensor fullOf(double value, DType dtype, Device device, long... shape) {
        return new Tensor(torch.full(shape, new Scalar(value), options(dtype, device)));
    }

    /** {@code [0, 1, ..., n-1]} as int64. */
    public static Tensor arangeOf(long n, Device device) {
        return new Tensor(torch.arange(new Scalar(n), options(DType.I64, device)));
    }

    /** An int64 tensor holding {@code values} (copied) with the given shape ([values.length] if none). */
    public static Tensor ofLongs(long[] values, Device device, long... shape) {
        return fromHost(new LongPointer(values), values.length, DType.I64, device, shape);
    }

    /** A float32 tensor holding {@code values} (copied). */
    public static Tensor ofFloats(float[] values, Device device, long... shape) {
        return fromHost(new FloatPointer(values), values.length, DType.F32, device, shape);
    }

    /** A float64 tensor holding {@code values} (copied). */
    public static Tensor ofDoubles(double[] values, Device device, long... shape) {
        return fromHost(new DoublePointer(values), values.length, DType.F64, device, shape);
    }

    /** Copies {@code count} host values of {@code dtype} at {@code data} into a new tensor; frees {@code data}. */
    private static Tensor fromHost(Pointer data, int count, DType dtype, Device device, long[] shape) {
        long[] s = shape.length == 0 ? new long[] {count} : shape;
        checkCount(count, s);
        Tensor cpu = new Tensor(torch.from_blob(data, s, options(dtype, Device.CPU)).clone());
        data.close();
        return device.isCuda() ? cpu.to(device) : cpu;
    }

    /**
     * A CPU tensor copied from raw little-endian bytes (a direct or mapped buffer; its position
     * and limit mark the bytes), e.g. a slice of a memory-mapped safetensors file.
     */
    public static Tensor fromBytes(ByteBuffer bytes, DType dtype, long... shape) {
        long count = 1;
        for (long d : shape) {
            count *= d;
        }
        long expected = count * dtype.byteSize();
        if (bytes.remaining() != expected) {
            throw new IllegalArgumentException("Expected " + expected + " bytes for " + dtype + " "
                    + Arrays.toString(shape) + ", got " + bytes.remaining());
        }
        if (count == 0) {
            return zerosOf(dtype, Device.CPU, shape);
        }
        ByteBuffer direct = bytes;
        if (!bytes.isDirect()) {
            direct = ByteBuffer.allocateDirect(bytes.remaining()).order(ByteOrder.LITTLE_ENDIAN);
            direct.put(bytes.duplicate());
            direct.flip();
        }
        BytePointer p = new BytePointer(direct.slice());
        org.bytedeco.pytorch.Tensor view = torch.from_blob(p, shape,
                options(dtype, Device.CPU));
        Tensor copy = new Tensor(view.clone());
        view.close();
        p.close();
        return copy;
    }

    /** Normal(0, std) values in {@code dtype}, drawn from {@code rng}. */
    public static Tensor randn(Rng rng, double std, DType dtype, Device device, long... shape) {
        Tensor t = emptyOf(DType.F32, Device.CPU, shape);
        t.handle.normal_(0.0, std, rng.optional());
        Tensor typed = t.to(dtype);
        return device.isCuda() ? typed.to(device) : typed;
    }

    private static void checkCount(long n, long[] shape) {
        long c = 1;
        for (long d : shape) {
            c *= d;
        }
        if (c != n) {
            throw new IllegalArgumentException(n + " values do not fill shape " + Arrays.toString(shape));
        }
    }

    // ---------------------------------------------------------------- metadata

    public long[] shape() {
        long[] s = new long[(int) handle.dim()];
        for (int i = 0; i < s.length; i++) {
            s[i] = handle.size(i);
        }
        return s;
    }

    public long size(int dim) {
        return handle.size(dim < 0 ? dim + handle.dim() : dim);
    }

    public int dim() {
        return (int) handle.dim();
    }

    public long numel() {
        return handle.numel();
    }

    public DType dtype() {
        return DType.of(handle.scalar_type());
    }

    public Device device() {
        org.bytedeco.pytorch.Device d = handle.device();
        return d.is_cuda() ? new Device("cuda", Math.max(0, d.index())) : Device.CPU;
    }

    public boolean requiresGrad() {
        return handle.requires_grad();
    }

    public boolean isDefined() {
        return handle.defined();
    }

    // ---------------------------------------------------------------- memory

    /** Keeps this tensor alive after the enclosing {@link Scope} closes; free it with {@link #close()}. */
    public Tensor keep() {
        handle.retainReference();
        kept = true;
        return this;
    }

    /** Whether {@link #keep()} was called: such tensors (parameters) cache their optional wrapper. */
    private volatile boolean kept;
    private volatile TensorOptional optional;

    /** {@code std::optional<Tensor>} of this tensor: cached for kept tensors, else one per call. */
    private TensorOptional asOptional() {
        if (!kept) {
            return new TensorOptional(handle);
        }
        TensorOptional o = optional;
        if (o == null) {
            synchronized (this) {
                if (optional == null) {
                    TensorOptional created = new TensorOptional(handle);
                    created.retainReference();
                    optional = created;
                }
                o = optional;
            }
        }
        return o;
    }

    private static final java.util.concurrent.ConcurrentHashMap<Double, DoubleOptional> DOUBLES =
            new java.util.concurrent.ConcurrentHashMap<>();

    /** A cached {@code std::optional<double>} for the few constants we pass (eps, scales); at most 256 kept. */
    private static DoubleOptional doubleOptional(double v) {
        DoubleOptional cached = DOUBLES.get(v);
        if (cached != null) {
            return cached;
        }
        if (DOUBLES.size() >= 256) {
            return new DoubleOptional(v);
        }
        return DOUBLES.computeIfAbsent(v, x -> {
            DoubleOptional d = new DoubleOptional(x);
            d.retainReference();
            return d;
        });
    }

    /** Frees the native handle now (the storage goes when no other tensor or graph uses it). */
    @Override
    public void close() {
        TensorOptional o = optional;
        if (o != null) {
            o.releaseReference();
            optional = null;
        }
        handle.releaseReference();
    }

    // ---------------------------------------------------------------- conversion

    public Tensor to(DType dtype) {
        if (dtype() == dtype) {
            return this;
        }
        return new Tensor(handle.to(dtype.scalarType));
    }

    public Tensor to(Device device) {
        if (device().equals(device)) {
            return this;
        }
        return new Tensor(handle.to(Engine.nativeDevice(device), handle.scalar_type()));
    }

    public Tensor toFloat() {
        return to(DType.F32);
    }

    /** The version counter of this tensor's data: it advances with every in-place change. */
    public long version() {
        return handle._version();
    }

    public boolean isContiguous() {
        return handle.is_contiguous();
    }

    public Tensor contiguous() {
        return new Tensor(handle.contiguous());
    }

    public Tensor cloneTensor() {
        return new Tensor(handle.clone());
    }

    public Tensor detach() {
        return new Tensor(handle.detach());
    }

    /** The values as int64 on the host (one transfer). */
    public long[] toLongArray() {
        Tensor c = new Tensor(handle.to(Engine.nativeDevice(Device.CPU), DType.I64.scalarType).contiguous());
        long[] out = new long[(int) c.numel()];
        new LongPointer(c.handle.data_ptr()).get(out);
        return out;
    }

    /** The values as float32 on the host (one transfer). */
    public float[] toFloatArray() {
        Tensor c = new Tensor(handle.to(Engine.nativeDevice(Device.CPU), DType.F32.scalarType).contiguous());
        float[] out = new float[(int) c.numel()];
        new FloatPointer(c.handle.data_ptr()).get(out);
        return out;
    }

    /** The values as float64 on the host (one transfer). */
    public double[] toDoubleArray() {
        Tensor c = new Tensor(handle.to(Engine.nativeDevice(Device.CPU), DType.F64.scalarType).contiguous());
        double[] out = new double[(int) c.numel()];
        new DoublePointer(c.handle.data_ptr()).get(out);
        return out;
    }

    /** The raw little-endian bytes of this tensor's values in its own dtype (one host copy). */
    public byte[] toBytes() {
        Tensor c = new Tensor(handle.to(Engine.nativeDevice(Device.CPU), handle.scalar_type()).contiguous());
        byte[] out = new byte[(int) c.handle.nbytes()];
        if (out.length > 0) { // an empty tensor has no data pointer
            new BytePointer(c.handle.data_ptr()).get(out);
        }
        return out;
    }

    /**
     * Copies this tensor's raw little-endian bytes into {@code dst} (a direct or mapped buffer with
     * exactly {@code numel * byteSize} bytes remaining), without a Java-heap copy.
     */
    public void copyTo(ByteBuffer dst) {
        org.bytedeco.pytorch.Tensor c = handle.to(Engine.nativeDevice(Device.CPU), handle.scalar_type()).contiguous();
        long n = c.nbytes();
        if (!dst.isDirect() || dst.remaining() != n) {
            throw new IllegalArgumentException("Destination must be a direct buffer with " + n
                    + " bytes remaining, got " + dst.remaining() + (dst.isDirect() ? "" : " (heap)"));
        }
        if (n > 0) {
            BytePointer target = new BytePointer(dst.slice());
            Pointer.memcpy(target, c.data_ptr(), n);
            target.close();
        }
        c.close();
    }

    // ---------------------------------------------------------------- raw bytes in chunks (file I/O)

    /**
     * Hands this tensor's raw little-endian bytes (of its CPU, contiguous form) to {@code sink} in
     * order, as direct buffers of at most {@code chunkBytes} bytes that view native memory (no
     * Java-heap copy). A buffer is valid only during its call; the sink must consume it (e.g.
     * {@code FileChannel.write}). Nothing is called for an empty tensor.
     */
    public void forEachByteChunk(int chunkBytes, java.util.function.Consumer<ByteBuffer> sink) {
        if (chunkBytes <= 0) {
            throw new IllegalArgumentException("chunkBytes must be positive, got " + chunkBytes);
        }
        org.bytedeco.pytorch.Tensor c = handle.to(Engine.nativeDevice(Device.CPU), handle.scalar_type()).contiguous();
        try {
            long n = c.nbytes();
            if (n == 0) {
                return;
            }
            BytePointer base = new BytePointer(c.data_ptr());
            try {
                for (long off = 0; off < n; off += chunkBytes) {
                    long len = Math.min(chunkBytes, n - off);
                    base.position(off).limit(off + len);
                    sink.accept(base.asByteBuffer().order(ByteOrder.LITTLE_ENDIAN));
                }
            } finally {
                base.close();
            }
        } finally {
            c.close();
        }
    }

    /**
     * A new CPU tensor of {@code dtype} and {@code shape} whose raw little-endian bytes
     * {@code fill} writes, in order, into direct buffers of at most {@code chunkBytes} bytes that
     * view the tensor's memory (e.g. with {@code FileChannel.read} until each is full). No
     * Java-heap copy; a buffer is valid only during its call. If {@code fill} throws, the tensor
     * is freed and the exception propagates.
     */
    public static Tensor fromByteChunks(DType dtype, int chunkBytes, java.util.function.Consumer<ByteBuffer> fill,
            long... shape) {
        if (chunkBytes <= 0) {
            throw new IllegalArgumentException("chunkBytes must be positive, got " + chunkBytes);
        }
        Tensor t = emptyOf(dtype, Device.CPU, shape);
        long n = t.handle.nbytes();
        if (n == 0) {
            return t;
        }
        BytePointer base = new BytePointer(t.handle.data_ptr());
        try {
            for (long off = 0; off < n; off += chunkBytes) {
                long len = Math.min(chunkBytes, n - off);
                base.position(off).limit(off + len);
                fill.accept(base.asByteBuffer().order(ByteOrder.LITTLE_ENDIAN));
            }
        } catch (RuntimeException | Error e) {
            t.close();
            throw e;
        } finally {
            base.close();
        }
        return t;
    }

    /**
     * Whether every value is finite (no NaN, no ±Inf). Fast path: a NaN or ±Inf makes
     * {@code Σx} NaN or ±Inf, so a finite sum proves every value finite (one reduction, about 40x
     * faster than {@code isfinite} on bf16); only a non-finite sum (a bad value, or an overflow of
     * huge values) takes the exact {@code torch.isfinite(t).all()}. Always true for integer and
     * boolean tensors.
     */
    public boolean allFinite() {
        if (!dtype().isFloatingPoint() || numel() == 0) {
            return true;
        }
        org.bytedeco.pytorch.Tensor sum = handle.sum();
        try {
            if (Double.isFinite(sum.item_double())) {
                return true;
            }
        } finally {
            sum.close();
        }
        org.bytedeco.pytorch.Tensor finite = torch.isfinite(handle);
        org.bytedeco.pytorch.Tensor all = finite.all();
        try {
            return all.item_bool();
        } finally {
            all.close();
            finite.close();
        }
    }

    public double item() {
        return handle.item_double();
    }

    public long itemLong() {
        return handle.item_long();
    }

    // ---------------------------------------------------------------- arithmetic

    public Tensor add(Tensor o) {
        return new Tensor(handle.add(o.handle));
    }

    /** {@code this + v}; an integer tensor plus a double becomes floating point, as in PyTorch. */
    public Tensor add(double v) {
        return new Tensor(handle.add(new Scalar(v)));
    }

    /** {@code this + v}, keeping an integer tensor's dtype. */
    public Tensor add(long v) {
        return new Tensor(handle.add(new Scalar(v)));
    }

    public Tensor sub(Tensor o) {
        return new Tensor(handle.sub(o.handle));
    }

    public Tensor sub(double v) {
        return new Tensor(handle.sub(new Scalar(v)));
    }

    public Tensor mul(Tensor o) {
        return new Tensor(handle.mul(o.handle));
    }

    public Tensor mul(double v) {
        return new Tensor(handle.mul(new Scalar(v)));
    }

    public Tensor div(Tensor o) {
        return new Tensor(handle.div(o.handle));
    }

    public Tensor div(double v) {
        return new Tensor(handle.div(new Scalar(v)));
    }

    public Tensor neg() {
        return new Tensor(handle.neg());
    }

    /** {@code torch.roll(x, shift, dim)}: element i of dimension {@code dim} moves to (i + shift) mod size. */
    public Tensor roll(long shift, long dim) {
        return new Tensor(handle.roll(new long[] {shift}, dim));
    }

    public Tensor exp() {
        return new Tensor(handle.exp());
    }

    public Tensor log() {
        return new Tensor(torch.log(handle));
    }

    /**
     * {@code log σ(x) = −softplus(−x) = min(x, 0) − log1p(e^{−|x|})} (libtorch's {@code log_sigmoid}),
     * elementwise: finite for every finite x in any float type, where {@code −log(1 + e^{−x})}
     * overflows to −inf once e^{−x} does (x &lt; −88 in float32). Its gradient {@code σ(−x)} is finite
     * too (the naive form's is inf/inf = NaN there).
     */
    public Tensor logSigmoid() {
        return new Tensor(torch.log_sigmoid(handle));
    }

    public Tensor cos() {
        return new Tensor(torch.cos(handle));
    }

    public Tensor sin() {
        return new Tensor(torch.sin(handle));
    }

    public Tensor tanh() {
        return new Tensor(torch.tanh(handle));
    }

    public Tensor silu() {
        return new Tensor(torch.silu(handle));
    }

    public Tensor matmul(Tensor o) {
        return new Tensor(torch.matmul(handle, o.handle));
    }

    /** {@code x @ weight^T (+ bias)}: PyTorch's {@code F.linear}. */
    /**
     * {@code x @ Wᵀ + b} ({@code F.linear}). Without autograd, on the CPU, for a few rows against a
     * large weight (token-by-token decoding), oneDNN's inner product runs it: it streams the weight
     * as stored at close to memory bandwidth, where the BLAS product repacks the whole weight for
     * every call (3x slower at 4 rows). Same values up to float rounding.
     */
    public Tensor linear(Tensor weight, Tensor bias) {
        if (useOneDnn(weight)) {
            long in = handle.size(-1);
            long rows = handle.numel() / Math.max(1, in);
            if (rows > 0 && rows <= ONEDNN_MAX_ROWS) {
                long[] shape = shape();
                Tensor flat = dim() == 2 ? this : view(rows, in);
                Tensor y = NativeOps.oneDnnLinear(flat, weight, bias);
                if (dim() == 2) {
                    return y;
                }
                shape[shape.length - 1] = weight.size(0);
                return y.view(shape);
            }
        }
        // a strided 16-bit input of 3+ dims (a narrowed sequence): rows made contiguous, as autograd's
        // fold does; without it, no-grad libtorch runs a batched product against the expanded weight
        // (bf16, the 0.5B head's [4, 32, 896] x [151936, 896]ᵀ: 12 s against 0.38 s on 1 thread)
        org.bytedeco.pytorch.Tensor x = dim() > 2 && !handle.is_cuda() && !handle.is_contiguous()
                && (dtype() == DType.BF16 || dtype() == DType.F16) ? handle.contiguous() : handle;
        return new Tensor(bias == null ? torch.linear(x, weight.handle)
                : torch.linear(x, weight.handle, bias.asOptional()));
    }

    /**
     * {@code this @ weightᵀ} for a 2-D {@code this} ({@code [rows, in]}), written into {@code into}
     * ({@code [rows, out]}, contiguous, this dtype) and returned; no autograd. The product that
     * {@link #linear} without a bias runs for 2-D inputs of more than {@link #ONEDNN_MAX_ROWS} rows
     * (libtorch's {@code mm} of the transposed weight), into memory the caller keeps across calls.
     */
    public Tensor linearInto(Tensor weight, Tensor into) {
        if (dim() != 2 || into.dim() != 2 || into.size(0) != size(0) || into.size(1) != weight.size(0)
                || into.dtype() != dtype() || !into.isContiguous()) {
            throw new IllegalArgumentException("linearInto: " + java.util.Arrays.toString(shape()) + " x "
                    + java.util.Arrays.toString(weight.shape()) + "ᵀ into " + java.util.Arrays.toString(into.shape())
                    + " " + into.dtype());
        }
        torch.mm_out(into.handle, handle, weight.transpose(0, 1).handle);
        return into;
    }

    /** Rows up to which {@link #linear} hands no-grad products to oneDNN. */
    static final long ONEDNN_MAX_ROWS = 8;
    /**
     * Weights from this many elements go to oneDNN ({@link #linear}); smaller ones only when they have
     * at least {@link #ONEDNN_WIDE_OUT} outputs. Measured at 4 rows, 1 thread: OpenBLAS repacks a
     * weight with many outputs on every call ([256 → 704]: 73 µs against oneDNN's 31 µs) but serves
     * narrow ones from its small-matrix kernels ([704 → 256]: 17 µs against 31 µs).
     */
    static final long ONEDNN_MIN_WEIGHT = 1L << 19;
    static final long ONEDNN_MIN_WIDE_WEIGHT = 1L << 17;
    static final long ONEDNN_WIDE_OUT = 512;

    /** Whether a {@code [out, in]} weight is large enough for oneDNN to beat BLAS on few rows. */
    static boolean oneDnnWorthIt(Tensor weight) {
        return oneDnnWorthIt(weight.handle.numel(), weight.handle.size(0));
    }

    /** {@link #oneDnnWorthIt(Tensor)} for a weight of {@code n} elements and {@code out} outputs. */
    static boolean oneDnnWorthIt(long n, long out) {
        return n >= ONEDNN_MIN_WEIGHT || (n >= ONEDNN_MIN_WIDE_WEIGHT && out >= ONEDNN_WIDE_OUT);
    }
    private boolean useOneDnn(Tensor weight) {
        return Engine.oneDnnLinear() && !org.bytedeco.pytorch.GradMode.is_enabled() && oneDnnWorthIt(weight)
                && weight.handle.dim() == 2 && !handle.is_cuda() && isOneDnnType(handle) && isOneDnnType(weight.handle)
                && handle.scalar_type().value == weight.handle.scalar_type().value && weight.handle.is_contiguous()
                && handle.is_contiguous();
    }

    static boolean isOneDnnType(Tensor t) {
        return isOneDnnType(t.handle);
    }

    private static boolean isOneDnnType(org.bytedeco.pytorch.Tensor t) {
        int type = t.scalar_type().value;
        return type == DType.F32.scalarType.value || type == DType.BF16.scalarType.value;
    }

    // ---------------------------------------------------------------- reductions

    public Tensor sum() {
        return new Tensor(handle.sum());
    }

    public Tensor sum(int dim, boolean keepDim) {
        return new Tensor(handle.sum(new long[] {dim}, keepDim, new ScalarTypeOptional()));
    }

    public Tensor mean() {
        return new Tensor(handle.mean());
    }

    public Tensor mean(int dim, boolean keepDim) {
        return new Tensor(handle.mean(new long[] {dim}, keepDim, new ScalarTypeOptional()));
    }

    /** {@code log Σ exp} over {@code dim}, dimension dropped. */
    public Tensor logsumexp(int dim) {
        return new Tensor(torch.logsumexp(handle, new long[] {dim}, false));
    }

    public Tensor clampMin(double min) {
        return new Tensor(torch.clamp_min(handle, new Scalar(min)));
    }

    public Tensor cumsum(int dim) {
        return new Tensor(handle.cumsum(dim));
    }

    public Tensor argmax(int dim) {
        return new Tensor(torch.argmax(handle, new LongOptional(dim), false));
    }

    /** Values and indices sorted along {@code dim}; stable: equal values keep their order. */
    public Tensor[] sort(int dim, boolean descending) {
        T_TensorTensor_T r = torch.sort(handle, new BoolOptional(true), dim, descending);
        return new Tensor[] {new Tensor(r.get0()), new Tensor(r.get1())};
    }

    /** The {@code k} largest values and their indices along the last dimension, in descending order. */
    public Tensor[] topk(long k) {
        T_TensorTensor_T r = torch.topk(handle, k, -1, true, true);
        return new Tensor[] {new Tensor(r.get0()), new Tensor(r.get1())};
    }

    /** {@code out = this.clone(); out[..., index[i]] = src[i]} along {@code dim}. */
    public Tensor scatter(int dim, Tensor index, Tensor src) {
        return new Tensor(handle.scatter(dim, index.handle, src.handle));
    }

    public Tensor max() {
        return new Tensor(handle.max());
    }

    public Tensor abs() {
        return new Tensor(handle.abs());
    }

    // ---------------------------------------------------------------- logits processing

    /** {@code out = this.clone(); out[..., index[i]] = value} along {@code dim}. */
    public Tensor scatter(int dim, Tensor index, double value) {
        return new Tensor(handle.scatter(dim, index.handle, new Scalar(value)));
    }

    /** Largest value along {@code dim}. */
    public Tensor amax(int dim, boolean keepDim) {
        return new Tensor(torch.amax(handle, new long[] {dim}, keepDim));
    }

    /** Whether every element along {@code dim} is true (nonzero). */
    public Tensor all(int dim) {
        return new Tensor(torch.all(handle, dim, false));
    }

    /** Sum along {@code dim} treating NaN as 0. */
    public Tensor nansum(int dim, boolean keepDim) {
        return new Tensor(torch.nansum(handle, new long[] {dim}, keepDim, new ScalarTypeOptional()));
    }

    /** {@code torch.nan_to_num}: NaN → {@code nan}, +inf → the dtype's largest, −inf → its lowest value. */
    public Tensor nanToNum(double nan) {
        return new Tensor(torch.nan_to_num(handle, new DoubleOptional(nan), new DoubleOptional(), new DoubleOptional()));
    }

    public Tensor clampMax(double max) {
        return new Tensor(handle.clamp_max(new Scalar(max)));
    }

    /** Clamp keeping an integer tensor integer. */
    public Tensor clampMax(long max) {
        return new Tensor(handle.clamp_max(new Scalar(max)));
    }

    /** Elementwise minimum. */
    public Tensor minimum(Tensor o) {
        return new Tensor(torch.minimum(handle, o.handle));
    }

    /** Elementwise maximum (broadcasting); the gradient goes to the larger side. */
    public Tensor maximum(Tensor o) {
        return new Tensor(torch.maximum(handle, o.handle));
    }

    public Tensor lt(double v) {
        return new Tensor(torch.lt(handle, new Scalar(v)));
    }

    public Tensor gt(Tensor o) {
        return new Tensor(torch.gt(handle, o.handle));
    }

    public Tensor ge(Tensor o) {
        return new Tensor(torch.ge(handle, o.handle));
    }

    // ---------------------------------------------------------------- shape

    public Tensor view(long... shape) {
        return new Tensor(handle.view(shape));
    }

    public Tensor reshape(long... shape) {
        return new Tensor(handle.reshape(shape));
    }

    public Tensor transpose(int a, int b) {
        return new Tensor(handle.transpose(a, b));
    }

    public Tensor unsqueeze(int dim) {
        return new Tensor(handle.unsqueeze(dim));
    }

    public Tensor squeeze(int dim) {
        return new Tensor(handle.squeeze(dim));
    }

    public Tensor narrow(int dim, long start, long length) {
        return new Tensor(handle.narrow(dim, start, length));
    }

    public Tensor select(int dim, long index) {
        return new Tensor(handle.select(dim, index));
    }

    public Tensor expand(long... shape) {
        return new Tensor(handle.expand(shape));
    }

    /** Rows picked by an int64 index tensor along {@code dim}. */
    public Tensor indexSelect(int dim, Tensor index) {
        return new Tensor(torch.index_select(handle, dim, index.handle));
    }

    /** {@code out = this.clone(); out[index[i]] = src[i]} along {@code dim}. */
    public Tensor indexCopy(int dim, Tensor index, Tensor src) {
        return new Tensor(torch.index_copy(handle, dim, index.handle, src.handle));
    }

    /** {@code repeat_interleave} of each slice along {@code dim}, {@code repeats} times. */
    public Tensor repeatInterleave(long repeats, int dim) {
        long n = size(dim);
        long[] idx = new long[(int) (n * repeats)];
        for (int i = 0; i < idx.length; i++) {
            idx[i] = i / repeats;
        }
        return indexSelect(dim, ofLongs(idx, device()));
    }

    public static Tensor cat(List<Tensor> parts, int dim) {
        TensorVector v = new TensorVector();
        for (Tensor t : parts) {
            v.push_back(t.handle);
        }
        return new Tensor(torch.cat(v, dim));
    }

    public static Tensor stack(List<Tensor> parts, int dim) {
        TensorVector v = new TensorVector();
        for (Tensor t : parts) {
            v.push_back(t.handle);
        }
        return new Tensor(torch.stack(v, dim));
    }

    // ---------------------------------------------------------------- neural network ops

    /** Rows of {@code weight} for each id: {@code F.embedding(ids, weight)}. */
    public static Tensor embedding(Tensor weight, Tensor ids) {
        return new Tensor(torch.embedding(weight.handle, ids.handle));
    }

    /** {@code torch.rms_norm(x, [last], weight, eps)} — computed in the input's dtype. */
    public Tensor rmsNorm(Tensor weight, double eps) {
        return new Tensor(torch.rms_norm(handle, new long[] {size(-1)},
                weight == null ? new TensorOptional() : weight.asOptional(), doubleOptional(eps)));
    }

    /** The mean of squares over the last dimension, kept: {@code x.pow(2).mean(-1, keepdim=True)}. */
    public Tensor meanSquare() {
        return new Tensor(handle.mul(handle).mean(new long[] {-1}, true, new ScalarTypeOptional()));
    }

    public Tensor rsqrt() {
        return new Tensor(handle.rsqrt());
    }

    /**
     * {@code F.scaled_dot_product_attention(q, k, v, attn_mask, is_causal, scale, enable_gqa)}.
     *
     * <p>16-bit inputs on the CPU are computed in float32 and the result rounded back to their dtype
     * ({@code sdpa(float(q), float(k), float(v)).to(dtype)}; gradients flow through the conversions):
     * libtorch's 16-bit CPU attention kernel measured 20x slower than its float32 one on scoring
     * shapes ([4, 14, 96, 64], 1 thread: 87 ms against 8.4 ms forward + backward) and slower on
     * decoding shapes too, and float32 scores and probabilities are no less accurate than the 16-bit
     * kernel's (which also accumulates in float32, but rounds the probabilities before {@code P·V}).
     *
     * @param mask boolean (true = attend) or additive float mask broadcastable to [B, H, Tq, Tk]; null for none
     */
    public static Tensor attention(Tensor q, Tensor k, Tensor v, Tensor mask, boolean causal,
            double scale, boolean gqa) {
        if (!q.handle.is_cuda() && (q.dtype() == DType.BF16 || q.dtype() == DType.F16)) {
            return attention(q.toFloat(), k.toFloat(), v.toFloat(), mask != null && mask.dtype() != DType.BOOL
                    ? mask.toFloat() : mask, causal, scale, gqa).to(q.dtype());
        }
        return new Tensor(torch.scaled_dot_product_attention(q.handle, k.handle, v.handle,
                mask == null ? new TensorOptional() : mask.asOptional(), 0.0, causal, doubleOptional(scale), gqa));
    }

    public Tensor logSoftmax(int dim) {
        return new Tensor(torch.log_softmax(handle, dim));
    }

    public Tensor softmax(int dim) {
        return new Tensor(torch.softmax(handle, dim));
    }

    public Tensor gather(int dim, Tensor index) {
        return new Tensor(torch.gather(handle, dim, index.handle));
    }

    /** {@code torch.multinomial(probs, n, replacement=false, generator)} over the last dimension. */
    public Tensor multinomial(int n, Rng rng) {
        return new Tensor(torch.multinomial(handle, n, false, rng.optional()));
    }

    // ---------------------------------------------------------------- comparison and masking

    public Tensor eq(double v) {
        return new Tensor(torch.eq(handle, new Scalar(v)));
    }

    public Tensor eq(Tensor o) {
        return new Tensor(torch.eq(handle, o.handle));
    }

    public Tensor ne(double v) {
        return new Tensor(torch.ne(handle, new Scalar(v)));
    }

    public Tensor lt(Tensor o) {
        return new Tensor(torch.lt(handle, o.handle));
    }

    public Tensor le(double v) {
        return new Tensor(torch.le(handle, new Scalar(v)));
    }

    public Tensor gt(double v) {
        return new Tensor(torch.gt(handle, new Scalar(v)));
    }

    public Tensor logicalAnd(Tensor o) {
        return new Tensor(torch.logical_and(handle, o.handle));
    }

    public Tensor logicalOr(Tensor o) {
        return new Tensor(torch.logical_or(handle, o.handle));
    }

    public Tensor logicalNot() {
        return new Tensor(torch.logical_not(handle));
    }

    public Tensor maskedFill(Tensor mask, double value) {
        return new Tensor(handle.masked_fill(mask.handle, new Scalar(value)));
    }

    /** {@code torch.where(cond, this, other)}. */
    public Tensor where(Tensor cond, Tensor other) {
        return new Tensor(torch.where(cond.handle, handle, other.handle));
    }

    public Tensor isFinite() {
        return new Tensor(torch.isfinite(handle));
    }

    public boolean allTrue() {
        return new Tensor(handle.all()).itemLong() != 0;
    }

    // ---------------------------------------------------------------- in place

    /** Copies {@code src} into this tensor (same shape; dtype and device converted). */
    public Tensor copy_(Tensor src) {
        handle.copy_(src.handle);
        return this;
    }

    public Tensor fill_(double v) {
        handle.fill_(new Scalar(v));
        return this;
    }

    public Tensor mul_(double v) {
        handle.mul_(new Scalar(v));
        return this;
    }

    public Tensor add_(Tensor o, double alpha) {
        handle.add_(o.handle, new Scalar(alpha));
        return this;
    }

    /**
     * {@code this ← β·this + α·(b1 @ b2)} in place, batch by batch ({@code torch.baddbmm_}):
     * {@code [N, n, m] ← [N, n, k] @ [N, k, m]}; {@code this} may be a strided view.
     */
    public Tensor baddbmm_(Tensor b1, Tensor b2, double beta, double alpha) {
        handle.baddbmm_(b1.handle, b2.handle, new Scalar(beta), new Scalar(alpha));
        return this;
    }

    /** The step between consecutive elements along {@code dim}, in elements. */
    public long stride(int dim) {
        return handle.stride(dim);
    }

    public Tensor exp_() {
        handle.exp_();
        return this;
    }

    public Tensor sub_(Tensor o) {
        handle.sub_(o.handle);
        return this;
    }

    public Tensor mul_(Tensor o) {
        handle.mul_(o.handle);
        return this;
    }

    /** {@code this[i][index[i][j]] += src[i][j]} along {@code dim} (here for dim 1), in place. */
    public Tensor scatterAdd_(int dim, Tensor index, Tensor src) {
        handle.scatter_add_(dim, index.handle, src.handle);
        return this;
    }

    /** {@code this += value · t1 · t2}, in place. */
    public Tensor addcmul_(Tensor t1, Tensor t2, double value) {
        torch.addcmul_out(handle, handle, t1.handle, t2.handle, new Scalar(value));
        return this;
    }

    /** {@code this += value · t1 / t2}, in place. */
    public Tensor addcdiv_(Tensor t1, Tensor t2, double value) {
        torch.addcdiv_out(handle, handle, t1.handle, t2.handle, new Scalar(value));
        return this;
    }

    public Tensor sqrt() {
        return new Tensor(handle.sqrt());
    }

    /** Fills with draws from U[0, 1) of {@code rng}. */
    public Tensor uniform_(Rng rng) {
        handle.uniform_(0.0, 1.0, rng.optional());
        return this;
    }

    /**
     * For each row, the first index whose value in {@code sorted} ({@code [R, V]}, ascending along
     * the last dimension) is greater than the row's {@code values} ({@code [R, 1]}): {@code [R, 1]}
     * int64 ({@code torch.searchsorted(..., right=True)}).
     */
    public static Tensor searchsortedRight(Tensor sorted, Tensor values) {
        return new Tensor(torch.searchsorted(sorted.handle, values.handle, false, true,
                new org.bytedeco.pytorch.StringViewOptional(), new TensorOptional()));
    }

    /** Fills with Exp(lambda) draws from {@code rng}. */
    public Tensor exponential_(double lambda, Rng rng) {
        handle.exponential_(lambda, rng.optional());
        return this;
    }

    public Tensor normal_(double mean, double std, Rng rng) {
        handle.normal_(mean, std, rng.optional());
        return this;
    }

    // ---------------------------------------------------------------- autograd

    public Tensor requiresGrad(boolean on) {
        handle.set_requires_grad(on);
        return this;
    }

    /** The accumulated gradient, or null when none. */
    /**
     * {@code grad[index[j]] += rows[j]} along dimension 0 of this tensor's gradient, creating a
     * zero gradient first when there is none (in place, no autograd).
     */
    public void addRowsToGrad(Tensor index, Tensor rows) {
        org.bytedeco.pytorch.Tensor g = gradOrZeros().handle;
        g.index_add_(0, index.handle, rows.handle.to(g.scalar_type()));
    }

    /**
     * Whether anything but this object holds this tensor or its memory: another reference to the
     * same tensor (a gradient slot that holds it), or another tensor on its storage (a view, a
     * {@code detach()}).
     */
    public boolean isShared() {
        if (handle.use_count() > 1) {
            return true;
        }
        if (!handle.has_storage()) {
            return false;
        }
        try (org.bytedeco.pytorch.Storage st = handle.storage()) {
            return st.use_count() > 1;
        }
    }

    /**
     * {@code grad += a @ b} in place (no autograd). Without a gradient, the tensor {@code buffer} gives
     * (this tensor's shape and dtype, its old contents ignored; asked for only then) receives
     * {@code a @ b} and becomes the gradient: a caller that keeps the buffer across steps reuses its
     * memory instead of a fresh allocation (whose first touch costs more than the product's writes on
     * some machines).
     */
    public void addProductToGrad(Tensor a, Tensor b, java.util.function.Supplier<Tensor> buffer) {
        org.bytedeco.pytorch.Tensor g = handle.grad();
        if (g.defined()) {
            g.addmm_(a.handle, b.handle);
        } else {
            Tensor into = buffer.get();
            torch.mm_out(into.handle, a.handle, b.handle);
            handle.mutable_grad().put(into.handle);
        }
    }

    /**
     * The gradient, or null before a backward reached this tensor. The result refers to the gradient
     * slot itself (no reference of its own, so it costs nothing to hold): read it before
     * {@link #zeroGrad}, and take a copy (or any tensor computed from it) to keep its values.
     */
    public Tensor grad() {
        org.bytedeco.pytorch.Tensor g = handle.grad();
        return g.defined() ? new Tensor(g) : null;
    }

    /** The accumulated gradient, a zero one created first when there is none (for summing gradients across processes). */
    public Tensor gradOrZeros() {
        org.bytedeco.pytorch.Tensor g = handle.grad();
        if (!g.defined()) {
            handle.mutable_grad().put(torch.zeros_like(handle));
            g = handle.grad();
        }
        return new Tensor(g);
    }

    /** Drops the accumulated gradient, as {@code zero_grad(set_to_none=True)}: {@link #grad()} is null after. */
    public void zeroGrad() {
        org.bytedeco.pytorch.Tensor g = handle.mutable_grad(); // a reference to the gradient slot
        g.reset();
        g.close();
    }

    public void backward() {
        handle.backward();
    }

    /** Backpropagates with {@code gradient} as ∂L/∂this (for a non-scalar tensor). */
    public void backward(Tensor gradient) {
        handle.backward(gradient.handle, new BoolOptional(), false, new org.bytedeco.pytorch.TensorArrayRefOptional());
    }

    /** True when both tensors have the same shape, dtype and identical bits. */
    public boolean bitEquals(Tensor o) {
        return Arrays.equals(shape(), o.shape()) && dtype() == o.dtype()
                && torch.equal(handle.cpu(), o.handle.cpu());
    }

    /** Largest absolute elementwise difference (as float64). */
    public double maxAbsDiff(Tensor o) {
        org.bytedeco.pytorch.Tensor a = handle.to(DType.F64.scalarType);
        org.bytedeco.pytorch.Tensor b = o.handle.to(Engine.nativeDevice(device()), DType.F64.scalarType);
        return a.sub(b).abs().max().item_double();
    }

    Pointer dataPointer() {
        return handle.data_ptr();
    }

    @Override
    public String toString() {
        return "Tensor" + Arrays.toString(shape()) + " " + dtype() + " " + device();
    }
}
