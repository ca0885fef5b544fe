package comlrl.model.io;

import comlrl.tensor.DType;
import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code data.pkl} of a {@code torch.save} archive holding a state dict: a pickle of a dict from
 * names to tensors, each tensor a {@code torch._utils._rebuild_tensor_v2(storage, offset, size,
 * stride, requires_grad, hooks)} call whose storage is a persistent id
 * {@code ("storage", torch.<Type>Storage, key, location, numel)} naming the archive record
 * {@code data/<key>}.
 *
 * <p><b>Writing</b> uses pickle protocol 2 and only the opcodes that both Python's
 * {@code torch.load(weights_only=True)} and libtorch's {@code torch::pickle_load} understand; the
 * top level is a plain dict (libtorch's unpickler cannot build a {@code collections.OrderedDict}).
 *
 * <p><b>Reading</b> is a restricted unpickler in the spirit of {@code weights_only=True}: the same
 * opcodes, and of globals only the tensor and parameter rebuild functions, storage types,
 * {@code collections.OrderedDict} (a state dict's {@code _metadata}, set by BUILD, is dropped) and
 * the type tag libtorch's pickler wraps containers in. Nothing is ever executed.
 */
final class StateDictPickle {
    /** A storage: {@code numel} elements of {@code dtype} in record {@code data/<key>}. */
    record StorageRef(DType dtype, String key, String location, long numel) {
    }

    /** A tensor viewing {@code storage} from element {@code offset} with {@code size} and {@code stride}. */
    record TensorRef(StorageRef storage, long offset, long[] size, long[] stride) {
        long numel() {
            long n = 1;
            for (long d : size) {
                n *= d;
            }
            return n;
        }

        /** Whether the elements are the row-major run {@code [offset, offset + numel)} of the storage. */
        boolean isContiguous() {
            long expected = 1;
            for (int i = size.length - 1; i >= 0; i--) {
                if (size[i] != 1 && stride[i] != expected) {
                    return false;
                }
                expected *= size[i];
            }
            return true;
        }
    }

    private StateDictPickle() {
    }

    // ---------------------------------------------------------------- opcodes (pickle protocol 2)
    private static final int MARK = '(';
    private static final int STOP = '.';
    private static final int BININT = 'J';
    private static final int BININT1 = 'K';
    private static final int BININT2 = 'M';
    private static final int NONE = 'N';
    private static final int BINPERSID = 'Q';
    private static final int REDUCE = 'R';
    private static final int SHORT_BINSTRING = 'U';
    private static final int BINUNICODE = 'X';
    private static final int APPEND = 'a';
    private static final int BUILD = 'b';
    private static final int GLOBAL = 'c';
    private static final int APPENDS = 'e';
    private static final int BINGET = 'h';
    private static final int LONG_BINGET = 'j';
    private static final int BINPUT = 'q';
    private static final int LONG_BINPUT = 'r';
    private static final int SETITEM = 's';
    private static final int TUPLE = 't';
    private static final int SETITEMS = 'u';
    private static final int BINFLOAT = 'G';
    private static final int EMPTY_DICT = '}';
    private static final int EMPTY_LIST = ']';
    private static final int EMPTY_TUPLE = ')';
    private static final int PROTO = 0x80;
    private static final int NEWTRUE = 0x88;
    private static final int NEWFALSE = 0x89;
    private static final int LONG1 = 0x8a;
    private static final int TUPLE1 = 0x85;
    private static final int TUPLE2 = 0x86;
    private static final int TUPLE3 = 0x87;

    private static final String REBUILD_MODULE = "torch._utils";

    /** The storage class name of each dtype ({@code torch.FloatStorage}, ...). */
    static String storageName(DType dtype) {
        return switch (dtype) {
            case F32 -> "FloatStorage";
            case BF16 -> "BFloat16Storage";
            case F16 -> "HalfStorage";
            case F64 -> "DoubleStorage";
            case I64 -> "LongStorage";
            case I32 -> "IntStorage";
            case U8 -> "ByteStorage";
            case BOOL -> "BoolStorage";
        };
    }

    private static DType storageType(String name) {
        for (DType d : DType.values()) {
            if (storageName(d).equals(name)) {
                return d;
            }
        }
        return null;
    }

    // ---------------------------------------------------------------- writing

    /** The pickle of a dict from each name to its tensor, in map order. */
    static byte[] write(Map<String, TensorRef> tensors) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(PROTO);
        out.write(2);
        out.write(EMPTY_DICT);
        if (!tensors.isEmpty()) {
            out.write(MARK);
            for (Map.Entry<String, TensorRef> e : tensors.entrySet()) {
                writeString(out, e.getKey());
                writeTensor(out, e.getValue());
            }
            out.write(SETITEMS);
        }
        out.write(STOP);
        return out.toByteArray();
    }

    /** {@code _rebuild_tensor_v2(storage, offset, size, stride, False, OrderedDict())}. */
    private static void writeTensor(ByteArrayOutputStream out, TensorRef t) {
        writeGlobal(out, REBUILD_MODULE, "_rebuild_tensor_v2");
        out.write(MARK);
        out.write(MARK);                                   // persistent id of the storage
        writeString(out, "storage");
        writeGlobal(out, "torch", storageName(t.storage().dtype()));
        writeString(out, t.storage().key());
        writeString(out, t.storage().location());
        writeInt(out, t.storage().numel());
        out.write(TUPLE);
        out.write(BINPERSID);
        writeInt(out, t.offset());
        writeInts(out, t.size());
        writeInts(out, t.stride());
        out.write(NEWFALSE);                               // requires_grad
        writeGlobal(out, "collections", "OrderedDict");    // backward hooks: none
        out.write(EMPTY_TUPLE);
        out.write(REDUCE);
        out.write(TUPLE);
        out.write(REDUCE);
    }

    private static void writeGlobal(ByteArrayOutputStream out, String module, String name) {
        out.write(GLOBAL);
        out.writeBytes((module + "\n" + name + "\n").getBytes(StandardCharsets.US_ASCII));
    }

    private static void writeString(ByteArrayOutputStream out, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.write(BINUNICODE);
        out.writeBytes(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(b.length).array());
        out.writeBytes(b);
    }

    /** A tuple of ints ({@code ()} when empty). */
    private static void writeInts(ByteArrayOutputStream out, long[] values) {
        if (values.length == 0) {
            out.write(EMPTY_TUPLE);
            return;
        }
        out.write(MARK);
        for (long v : values) {
            writeInt(out, v);
        }
        out.write(TUPLE);
    }

    /** The shortest of BININT1, BININT2, BININT and LONG1, as Python's pickler chooses. */
    private static void writeInt(ByteArrayOutputStream out, long v) {
        if (v >= 0 && v <= 0xff) {
            out.write(BININT1);
            out.write((int) v);
        } else if (v >= 0 && v <= 0xffff) {
            out.write(BININT2);
            out.write((int) (v & 0xff));
            out.write((int) (v >>> 8));
        } else if (v >= Integer.MIN_VALUE && v <= Integer.MAX_VALUE) {
            out.write(BININT);
            out.writeBytes(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt((int) v).array());
        } else {
            byte[] big = BigInteger.valueOf(v).toByteArray(); // two's complement, big-endian, minimal
            out.write(LONG1);
            out.write(big.length);
            for (int i = big.length - 1; i >= 0; i--) {
                out.write(big[i]);
            }
        }
    }

    // ---------------------------------------------------------------- reading

    /** A global named by GLOBAL: a function or class reference, never resolved to code. */
    private record Global(String module, String name) {
        String qualified() {
            return module + "." + name;
        }
    }

    /** A Python dict or OrderedDict, in insertion order. */
    private static final class Dict extends LinkedHashMap<Object, Object> {
        private static final long serialVersionUID = 1L;
    }

    /** Python tuples (immutable) are kept apart from lists (appendable). */
    private record Tuple(List<Object> items) {
    }

    /**
     * The tensors of a state-dict pickle by name, in pickle order. Fails naming {@code source} and
     * the byte offset for anything a weights-only load would refuse or that is not a dict of tensors.
     */
    static Map<String, TensorRef> read(byte[] pickle, String source) {
        return new Reader(pickle, source).run();
    }

    private static final class Reader {
        private final ByteBuffer in;
        private final String source;
        private List<Object> stack = new ArrayList<>();
        private final List<List<Object>> marks = new ArrayList<>(); // stacks saved by MARK
        private final Map<Long, Object> memo = new HashMap<>();
        private final Map<String, StorageRef> storages = new HashMap<>();

        Reader(byte[] pickle, String source) {
            this.in = ByteBuffer.wrap(pickle).order(ByteOrder.LITTLE_ENDIAN);
            this.source = source;
        }

        private IllegalArgumentException fail(String what) {
            return new IllegalArgumentException(source + ": " + what + " (at byte " + Math.max(0, in.position() - 1)
                    + " of data.pkl); only state dicts of tensors, as torch.save(module.state_dict(), path) writes "
                    + "them, are read");
        }

        Map<String, TensorRef> run() {
            while (true) {
                if (!in.hasRemaining()) {
                    throw fail("the pickle ends without STOP");
                }
                int op = in.get() & 0xff;
                if (op == STOP) {
                    return result(pop());
                }
                step(op);
            }
        }

        private void step(int op) {
            switch (op) {
                case PROTO -> in.get();
                case MARK -> {
                    marks.add(stack);
                    stack = new ArrayList<>();
                }
                case EMPTY_DICT -> push(new Dict());
                case EMPTY_LIST -> push(new ArrayList<>());
                case EMPTY_TUPLE -> push(new Tuple(List.of()));
                case TUPLE -> push(new Tuple(popMark()));
                case TUPLE1 -> push(new Tuple(List.of(pop())));
                case TUPLE2 -> {
                    Object b = pop();
                    push(new Tuple(Arrays.asList(pop(), b)));
                }
                case TUPLE3 -> {
                    Object c = pop();
                    Object b = pop();
                    push(new Tuple(Arrays.asList(pop(), b, c)));
                }
                case NONE -> push(null);
                case NEWTRUE -> push(Boolean.TRUE);
                case NEWFALSE -> push(Boolean.FALSE);
                case BININT -> push((long) in.getInt());
                case BININT1 -> push((long) (in.get() & 0xff));
                case BININT2 -> push((long) (in.getShort() & 0xffff));
                case LONG1 -> push(readLong1());
                case BINFLOAT -> push(ByteBuffer.wrap(bytes(8)).order(ByteOrder.BIG_ENDIAN).getDouble());
                case BINUNICODE -> push(new String(bytes(length(in.getInt() & 0xffffffffL)), StandardCharsets.UTF_8));
                case SHORT_BINSTRING -> push(new String(bytes(in.get() & 0xff), StandardCharsets.US_ASCII));
                case GLOBAL -> push(global(line(), line()));
                case BINPUT -> memo.put((long) (in.get() & 0xff), top());
                case LONG_BINPUT -> memo.put(in.getInt() & 0xffffffffL, top());
                case BINGET -> push(memoized(in.get() & 0xff));
                case LONG_BINGET -> push(memoized(in.getInt() & 0xffffffffL));
                case BINPERSID -> push(storage(pop()));
                case REDUCE -> {
                    Object args = pop();
                    push(call(pop(), args));
                }
                case BUILD -> build(pop(), top());
                case APPEND -> {
                    Object item = pop();
                    list(top()).add(item);
                }
                case APPENDS -> {
                    List<Object> items = popMark();
                    list(top()).addAll(items);
                }
                case SETITEM -> {
                    Object value = pop();
                    Object key = pop();
                    dict(top()).put(key, value);
                }
                case SETITEMS -> {
                    List<Object> items = popMark();
                    Map<Object, Object> d = dict(top());
                    for (int i = 0; i + 1 < items.size(); i += 2) {
                        d.put(items.get(i), items.get(i + 1));
                    }
                }
                default -> throw fail(String.format("unsupported pickle opcode 0x%02x", op));
            }
        }

        private void push(Object o) {
            stack.add(o);
        }

        private Object pop() {
            if (stack.isEmpty()) {
                throw fail("the pickle's stack is empty");
            }
            return stack.remove(stack.size() - 1);
        }

        private Object top() {
            if (stack.isEmpty()) {
                throw fail("the pickle's stack is empty");
            }
            return stack.get(stack.size() - 1);
        }

        private List<Object> popMark() {
            if (marks.isEmpty()) {
                throw fail("a pickle opcode needs a MARK that is missing");
            }
            List<Object> items = stack;
            stack = marks.remove(marks.size() - 1);
            return items;
        }

        private Object memoized(long index) {
            if (!memo.containsKey(index)) {
                throw fail("memo entry " + index + " is read before it is written");
            }
            return memo.get(index);
        }

        private int length(long n) {
            if (n > in.remaining()) {
                throw fail("a string of " + n + " bytes runs past the end of the pickle");
            }
            return (int) n;
        }

        private byte[] bytes(int n) {
            if (n > in.remaining()) {
                throw fail("the pickle ends inside a value");
            }
            byte[] b = new byte[n];
            in.get(b);
            return b;
        }

        private long readLong1() {
            byte[] le = bytes(in.get() & 0xff);
            if (le.length == 0) {
                return 0L;
            }
            byte[] be = new byte[le.length];
            for (int i = 0; i < le.length; i++) {
                be[i] = le[le.length - 1 - i];
            }
            BigInteger v = new BigInteger(be);
            if (v.bitLength() > 63) {
                throw fail("an integer does not fit in 64 bits");
            }
            return v.longValue();
        }

        private String line() {
            StringBuilder s = new StringBuilder();
            while (true) {
                if (!in.hasRemaining()) {
                    throw fail("the pickle ends inside a GLOBAL");
                }
                int c = in.get() & 0xff;
                if (c == '\n') {
                    return s.toString();
                }
                s.append((char) c);
            }
        }

        /** The globals a weights-only load allows and a state dict uses; anything else is refused here. */
        private Object global(String module, String name) {
            Global g = new Global(module, name);
            boolean allowed = switch (g.qualified()) {
                case "collections.OrderedDict", "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_parameter",
                        "torch._utils._rebuild_parameter_with_state", "torch.jit._pickle.restore_type_tag" -> true;
                default -> module.equals("torch") && storageType(name) != null;
            };
            if (!allowed) {
                throw fail("unsupported global " + g.qualified());
            }
            return g;
        }

        /** {@code ("storage", torch.<Type>Storage, key, location, numel)}; one object per key. */
        private StorageRef storage(Object pid) {
            List<Object> t = tuple(pid, "a persistent id");
            if (t.size() != 5 || !"storage".equals(t.get(0)) || !(t.get(1) instanceof Global type)
                    || !(t.get(2) instanceof String key) || !(t.get(3) instanceof String location)
                    || !(t.get(4) instanceof Long numel)) {
                throw fail("a persistent id is not (\"storage\", type, key, location, numel)");
            }
            DType dtype = storageType(type.name());
            if (dtype == null) {
                throw fail("unsupported storage type " + type.qualified());
            }
            StorageRef s = new StorageRef(dtype, key, location, numel);
            StorageRef earlier = storages.putIfAbsent(key, s);
            if (earlier != null && !earlier.equals(s)) {
                throw fail("storage '" + key + "' is described twice, differently");
            }
            return earlier == null ? s : earlier;
        }

        private Object call(Object callable, Object argsObject) {
            if (!(callable instanceof Global g)) {
                throw fail("REDUCE on something that is not a global function");
            }
            List<Object> args = tuple(argsObject, "the arguments of " + g.qualified());
            switch (g.qualified()) {
                case "collections.OrderedDict" -> {
                    if (!args.isEmpty()) {
                        throw fail("collections.OrderedDict is called with arguments");
                    }
                    return new Dict();
                }
                case "torch._utils._rebuild_tensor_v2" -> {
                    if (args.size() < 5 || !(args.get(0) instanceof StorageRef storage)
                            || !(args.get(1) instanceof Long offset)) {
                        throw fail("_rebuild_tensor_v2 is called with unexpected arguments");
                    }
                    long[] size = longs(args.get(2), "a tensor size");
                    long[] stride = longs(args.get(3), "a tensor stride");
                    if (size.length != stride.length) {
                        throw fail("a tensor's size and stride differ in length");
                    }
                    return new TensorRef(storage, offset, size, stride);
                }
                case "torch._utils._rebuild_parameter", "torch._utils._rebuild_parameter_with_state",
                        "torch.jit._pickle.restore_type_tag" -> {
                    if (args.isEmpty()) {
                        throw fail(g.qualified() + " is called without arguments");
                    }
                    return args.get(0); // the tensor (or container) itself; the rest is autograd/type info
                }
                default -> throw fail(g.qualified() + " cannot be called");
            }
        }

        /** BUILD: a state dict's {@code _metadata} (module versions) on an OrderedDict, dropped. */
        private void build(Object state, Object target) {
            if (!(target instanceof Dict)) {
                throw fail("BUILD on something other than a dict");
            }
            if (state != null && !(state instanceof Map)) {
                throw fail("BUILD with state that is not a dict");
            }
        }

        private List<Object> tuple(Object o, String what) {
            if (o instanceof Tuple t) {
                return t.items();
            }
            throw fail(what + " is not a tuple");
        }

        private long[] longs(Object o, String what) {
            List<Object> items = tuple(o, what);
            long[] out = new long[items.size()];
            for (int i = 0; i < out.length; i++) {
                if (!(items.get(i) instanceof Long v) || v < 0) {
                    throw fail(what + " holds something other than a non-negative integer");
                }
                out[i] = v;
            }
            return out;
        }

        @SuppressWarnings("unchecked")
        private List<Object> list(Object o) {
            if (o instanceof ArrayList<?> l) {
                return (List<Object>) l;
            }
            throw fail("APPEND on something other than a list");
        }

        private Map<Object, Object> dict(Object o) {
            if (o instanceof Dict d) {
                return d;
            }
            throw fail("SETITEM on something other than a dict");
        }

        private Map<String, TensorRef> result(Object top) {
            if (!(top instanceof Dict d)) {
                throw fail("the pickled object is not a dict");
            }
            Map<String, TensorRef> out = new LinkedHashMap<>();
            for (Map.Entry<Object, Object> e : d.entrySet()) {
                if (!(e.getKey() instanceof String name)) {
                    throw fail("a state dict key is not a string: " + e.getKey());
                }
                if (!(e.getValue() instanceof TensorRef t)) {
                    throw fail("entry '" + name + "' is not a tensor");
                }
                out.put(name, t);
            }
            return out;
        }
    }
}
