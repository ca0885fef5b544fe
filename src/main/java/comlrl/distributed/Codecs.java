package comlrl.distributed;

import comlrl.generation.Completion;
import comlrl.generation.FinishReason;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * The {@link Codec}s of the values processes exchange, and the combinators that build the others
 * from them. Big-endian {@link DataOutputStream} layouts: a scalar as itself; an array, a list or
 * a map as an int count followed by its items; a string as an int byte count followed by UTF-8.
 * Every count is checked against the bytes left before anything is allocated ({@link #decode}).
 */
public final class Codecs {
    private Codecs() {
    }

    /** An int. */
    public static final Codec<Integer> INT = new Codec<>() {
        @Override
        public void write(DataOutputStream out, Integer v) throws IOException {
            out.writeInt(v);
        }

        @Override
        public Integer read(DataInputStream in) throws IOException {
            return in.readInt();
        }
    };

    /** A long. */
    public static final Codec<Long> LONG = new Codec<>() {
        @Override
        public void write(DataOutputStream out, Long v) throws IOException {
            out.writeLong(v);
        }

        @Override
        public Long read(DataInputStream in) throws IOException {
            return in.readLong();
        }
    };

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

    /** A long array. */
    public static final Codec<long[]> LONGS = new Codec<>() {
        @Override
        public void write(DataOutputStream out, long[] v) throws IOException {
            out.writeInt(v.length);
            for (long x : v) {
                out.writeLong(x);
            }
        }

        @Override
        public long[] read(DataInputStream in) throws IOException {
            long[] v = new long[length(in, Long.BYTES)];
            for (int i = 0; i < v.length; i++) {
                v[i] = in.readLong();
            }
            return v;
        }
    };

    /** A string: UTF-8 with an int length (strings longer than 64 KiB pass). */
    public static final Codec<String> STRING = new Codec<>() {
        @Override
        public void write(DataOutputStream out, String s) throws IOException {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            out.writeInt(b.length);
            out.write(b);
        }

        @Override
        public String read(DataInputStream in) throws IOException {
            byte[] b = new byte[length(in, 1)];
            in.readFully(b);
            return new String(b, StandardCharsets.UTF_8);
        }
    };

    /** A list of strings. */
    public static final Codec<List<String>> STRINGS = listOf(STRING);

    /** A matrix of doubles (rows of any length). */
    public static final Codec<double[][]> DOUBLE_MATRIX =
            listOf(DOUBLES).as(rows -> rows.toArray(double[][]::new), Arrays::asList);

    private static final com.fasterxml.jackson.databind.ObjectMapper MAPPER = new com.fasterxml.jackson.databind.ObjectMapper();

    /** A JSON value (maps, lists, strings, numbers, booleans, null), through Jackson as its text. */
    public static final Codec<Object> JSON = STRING.as(Codecs::parseJson, Codecs::toJson);

    /** A generated completion, every field: prompt ids, token ids, text, log-probabilities, finish reason. */
    public static final Codec<Completion> COMPLETION = new Codec<>() {
        @Override
        public void write(DataOutputStream out, Completion c) throws IOException {
            LONGS.write(out, c.promptIds());
            LONGS.write(out, c.tokenIds());
            STRING.write(out, c.text());
            DOUBLES.write(out, c.logprobs());
            out.writeInt(c.finishReason().ordinal());
        }

        @Override
        public Completion read(DataInputStream in) throws IOException {
            long[] prompt = LONGS.read(in);
            long[] tokens = LONGS.read(in);
            String text = STRING.read(in);
            double[] logprobs = DOUBLES.read(in);
            return new Completion(prompt, tokens, text, logprobs, FinishReason.values()[in.readInt()]);
        }
    };

    /** {@code element}'s values or null (a boolean before the value). */
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

    /** A map, its entries read back in the sender's iteration order (a {@link LinkedHashMap}). */
    public static <K, V> Codec<Map<K, V>> mapOf(Codec<K> keys, Codec<V> values) {
        return new Codec<>() {
            @Override
            public void write(DataOutputStream out, Map<K, V> v) throws IOException {
                out.writeInt(v.size());
                for (Map.Entry<K, V> e : v.entrySet()) {
                    keys.write(out, e.getKey());
                    values.write(out, e.getValue());
                }
            }

            @Override
            public Map<K, V> read(DataInputStream in) throws IOException {
                Map<K, V> v = new LinkedHashMap<>();
                for (int n = length(in, 1); n > 0; n--) {
                    K key = keys.read(in);
                    v.put(key, values.read(in));
                }
                return v;
            }
        };
    }

    /** A value of two fields, each sent by its codec, in order; {@code make} builds it back from them. */
    public static <T, A, B> Codec<T> fields(Codec<A> a, Function<T, A> getA, Codec<B> b, Function<T, B> getB,
            BiFunction<A, B, T> make) {
        return new Codec<>() {
            @Override
            public void write(DataOutputStream out, T v) throws IOException {
                a.write(out, getA.apply(v));
                b.write(out, getB.apply(v));
            }

            @Override
            public T read(DataInputStream in) throws IOException {
                A first = a.read(in);
                return make.apply(first, b.read(in));
            }
        };
    }

    /** Builds a value from three fields. */
    public interface Make3<A, B, C, T> {
        T make(A a, B b, C c);
    }

    /** A value of three fields, each sent by its codec, in order; {@code make} builds it back from them. */
    public static <T, A, B, C> Codec<T> fields(Codec<A> a, Function<T, A> getA, Codec<B> b, Function<T, B> getB,
            Codec<C> c, Function<T, C> getC, Make3<A, B, C, T> make) {
        return new Codec<>() {
            @Override
            public void write(DataOutputStream out, T v) throws IOException {
                a.write(out, getA.apply(v));
                b.write(out, getB.apply(v));
                c.write(out, getC.apply(v));
            }

            @Override
            public T read(DataInputStream in) throws IOException {
                A first = a.read(in);
                B second = b.read(in);
                return make.make(first, second, c.read(in));
            }
        };
    }

    /** {@code value}'s bytes. */
    public static <T> byte[] encode(T value, Codec<T> codec) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            codec.write(out, value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /**
     * {@code b} read by {@code codec}. Bytes that do not read as expected (the ranks exchanged
     * different things at the same point) fail naming {@code source} and what went wrong.
     */
    public static <T> T decode(byte[] b, String source, Codec<T> codec) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(b))) {
            return codec.read(in);
        } catch (IOException | RuntimeException | OutOfMemoryError e) { // OutOfMemoryError: one array of a garbage length
            throw new IllegalStateException("could not read " + source + " (" + b.length + " bytes): "
                    + DistributedException.describe(e) + "; the ranks exchanged different values at "
                    + "this point: do all processes run the same code and config?", e);
        }
    }

    /**
     * A length written before {@code n} items of at least {@code bytesEach} bytes each, checked against
     * the bytes left: values that another rank did not write as this one reads them (the ranks
     * exchanging different things) fail here instead of allocating an array of a garbage length.
     */
    private static int length(DataInputStream in, int bytesEach) throws IOException {
        int n = in.readInt();
        int left = in.available(); // exact: the values are decoded from a byte array
        if (n < 0 || (long) n * bytesEach > left) {
            throw new IOException("a length of " + n + " where " + left + " bytes remain");
        }
        return n;
    }

    private static String toJson(Object value) {
        try {
            return MAPPER.writeValueAsString(value);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Object parseJson(String text) {
        try {
            return MAPPER.readValue(text, Object.class);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }
}
