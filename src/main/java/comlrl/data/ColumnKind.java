package comlrl.data;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;

/**
 * The Arrow type (and Hugging Face feature) a column of task-item values is saved as, inferred from
 * the values as pyarrow infers it from Python objects: {@link String} {@code string},
 * {@link Boolean} {@code bool}, {@link Long}, {@link Integer}, {@link Short}, {@link Byte} and
 * {@link BigInteger}s within 64 bits {@code int64} ({@code uint64} when some value lies above
 * {@code Long.MAX_VALUE}), {@link Float} {@code float32}, {@link Double} {@code float64} (also
 * for a column mixing integers and floats), {@link BigDecimal} {@code decimal128(38, s)} with
 * the largest scale {@code s} of the column, {@code byte[]} {@code binary}, lists {@code list} of
 * their elements' kind, maps with string keys {@code struct}s of the union of their keys (a map
 * lacking a key holds null there), and a column of nulls only {@code null}.
 */
sealed interface ColumnKind permits ColumnKind.Scalar, ColumnKind.Decimal, ColumnKind.ListOf, ColumnKind.StructOf {
    /** The longest decimal {@code decimal128} holds. */
    int DECIMAL_PRECISION = 38;

    /** This kind as a nullable Arrow field called {@code name}. */
    Field field(String name);

    /** This kind as a {@code datasets} feature in {@code dataset_info.json}. */
    JsonNode feature();

    /** Writes {@code value} (not null, of this kind) at {@code index} of {@code vector}. */
    void write(FieldVector vector, int index, Object value);

    /** Writes {@code value}, or marks {@code index} null (with everything inside it) when null. */
    default void writeNullable(FieldVector vector, int index, Object value) {
        if (value == null) {
            vector.setNull(index);
        } else {
            write(vector, index, value);
        }
    }

    /** The kind of a whole column, every row's value unified with the others. */
    static ColumnKind infer(String column, List<?> values) {
        ColumnKind kind = Scalar.NULL;
        for (int row = 0; row < values.size(); row++) {
            kind = unify(kind, of(values.get(row), column, row), column, row);
        }
        return kind;
    }

    /**
     * The kind of one value.
     *
     * @throws DatasetException naming the column (and field in it) and row of a value that cannot
     *     be saved: another Java type, an integer beyond 64 bits, a map with a key that is no string
     */
    static ColumnKind of(Object value, String path, int row) {
        if (value == null) {
            return Scalar.NULL;
        }
        if (value instanceof String) {
            return Scalar.STRING;
        }
        if (value instanceof Boolean) {
            return Scalar.BOOL;
        }
        if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
            return Scalar.INT64;
        }
        if (value instanceof BigInteger big) {
            if (big.bitLength() <= 63) {
                return Scalar.INT64;
            }
            if (big.signum() > 0 && big.bitLength() <= 64) {
                return Scalar.UINT64;
            }
            throw cannotSave(path, row, "the integer " + big + " does not fit in 64 bits (int64 or uint64)");
        }
        if (value instanceof Float) {
            return Scalar.FLOAT32;
        }
        if (value instanceof Double) {
            return Scalar.FLOAT64;
        }
        if (value instanceof BigDecimal decimal) {
            return new Decimal(Math.max(0, decimal.scale()));
        }
        if (value instanceof byte[]) {
            return Scalar.BINARY;
        }
        if (value instanceof List<?> list) {
            ColumnKind element = Scalar.NULL;
            for (Object e : list) {
                element = unify(element, of(e, path + "[]", row), path + "[]", row);
            }
            return new ListOf(element);
        }
        if (value instanceof Map<?, ?> map) {
            Map<String, ColumnKind> fields = new LinkedHashMap<>();
            for (Map.Entry<?, ?> e : map.entrySet()) {
                if (!(e.getKey() instanceof String key)) {
                    throw cannotSave(path, row, "a map has the key " + e.getKey() + " ("
                            + (e.getKey() == null ? "null" : e.getKey().getClass().getSimpleName())
                            + "); a struct's field names must be strings");
                }
                fields.put(key, of(e.getValue(), path + "." + key, row));
            }
            return new StructOf(Collections.unmodifiableMap(fields));
        }
        throw cannotSave(path, row, "it holds a " + value.getClass().getName() + ", which has no Arrow type here "
                + "(saved are strings, numbers, booleans, BigDecimal, byte[], lists, maps with string keys and null)");
    }

    /** The kind that holds both {@code a} and {@code b}, as pyarrow unifies types. */
    static ColumnKind unify(ColumnKind a, ColumnKind b, String path, int row) {
        if (a == Scalar.NULL || a.equals(b)) {
            return b;
        }
        if (b == Scalar.NULL) {
            return a;
        }
        if (a instanceof Scalar x && b instanceof Scalar y && x.numeric() && y.numeric()) {
            if (x.floating() || y.floating()) {
                return x == Scalar.FLOAT32 && y == Scalar.FLOAT32 ? Scalar.FLOAT32 : Scalar.FLOAT64;
            }
            return Scalar.UINT64; // int64 with uint64; a negative value fails when written
        }
        if (a instanceof Decimal x && b instanceof Decimal y) {
            return new Decimal(Math.max(x.scale(), y.scale()));
        }
        if (a instanceof ListOf x && b instanceof ListOf y) {
            return new ListOf(unify(x.element(), y.element(), path + "[]", row));
        }
        if (a instanceof StructOf x && b instanceof StructOf y) {
            Map<String, ColumnKind> fields = new LinkedHashMap<>(x.fields());
            y.fields().forEach((name, kind) ->
                    fields.merge(name, kind, (p, q) -> unify(p, q, path + "." + name, row)));
            return new StructOf(Collections.unmodifiableMap(fields));
        }
        throw cannotSave(path, row, "it holds " + b.describe() + " where earlier rows hold " + a.describe()
                + "; every row must hold the same kind of value (convert them with Dataset.map)");
    }

    private static DatasetException cannotSave(String path, int row, String problem) {
        return new DatasetException("cannot save column '" + path + "' (row " + row + "): " + problem);
    }

    /** A short name for messages: {@code int64}, {@code list<string>}, {@code struct<a, b>}. */
    String describe();

    /** The kinds without parts, each with its Arrow type and {@code datasets} dtype. */
    enum Scalar implements ColumnKind {
        NULL("null", ArrowType.Null.INSTANCE),
        BOOL("bool", ArrowType.Bool.INSTANCE),
        INT64("int64", new ArrowType.Int(64, true)),
        UINT64("uint64", new ArrowType.Int(64, false)),
        FLOAT32("float32", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)),
        FLOAT64("float64", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
        STRING("string", ArrowType.Utf8.INSTANCE),
        BINARY("binary", ArrowType.Binary.INSTANCE);

        private final String dtype;
        private final ArrowType type;

        Scalar(String dtype, ArrowType type) {
            this.dtype = dtype;
            this.type = type;
        }

        boolean numeric() {
            return this == INT64 || this == UINT64 || floating();
        }

        boolean floating() {
            return this == FLOAT32 || this == FLOAT64;
        }

        @Override
        public Field field(String name) {
            return new Field(name, FieldType.nullable(type), null);
        }

        @Override
        public JsonNode feature() {
            return value(dtype);
        }

        @Override
        public String describe() {
            return dtype;
        }

        @Override
        public void write(FieldVector vector, int index, Object value) {
            switch (this) {
                case BOOL -> ((BitVector) vector).setSafe(index, (Boolean) value ? 1 : 0);
                case INT64 -> ((BigIntVector) vector).setSafe(index, value instanceof BigInteger big
                        ? big.longValueExact() : ((Number) value).longValue());
                case UINT64 -> {
                    if (value instanceof BigInteger big ? big.signum() < 0 : ((Number) value).longValue() < 0) {
                        throw new DatasetException("the negative integer " + value + " shares a column with integers "
                                + "above " + Long.MAX_VALUE + ", and no Arrow integer type holds both; convert the "
                                + "column to floats or strings with Dataset.map");
                    }
                    ((UInt8Vector) vector).setSafe(index, ((Number) value).longValue()); // the low 64 bits
                }
                case FLOAT32 -> ((Float4Vector) vector).setSafe(index, (Float) value);
                case FLOAT64 -> ((Float8Vector) vector).setSafe(index, ((Number) value).doubleValue());
                case STRING -> ((VarCharVector) vector).setSafe(index, ((String) value).getBytes(StandardCharsets.UTF_8));
                case BINARY -> ((VarBinaryVector) vector).setSafe(index, (byte[]) value);
                case NULL -> throw new IllegalStateException("a null column holds only nulls");
            }
        }

        @Override
        public void writeNullable(FieldVector vector, int index, Object value) {
            if (this != NULL) {
                ColumnKind.super.writeNullable(vector, index, value);
            }
        }
    }

    /** {@code decimal128(38, scale)}. */
    record Decimal(int scale) implements ColumnKind {
        @Override
        public Field field(String name) {
            return new Field(name, FieldType.nullable(new ArrowType.Decimal(DECIMAL_PRECISION, scale, 128)), null);
        }

        @Override
        public JsonNode feature() {
            return value(describe());
        }

        @Override
        public String describe() {
            return "decimal128(" + DECIMAL_PRECISION + ", " + scale + ")";
        }

        @Override
        public void write(FieldVector vector, int index, Object value) {
            BigDecimal scaled = ((BigDecimal) value).setScale(scale);
            if (scaled.precision() > DECIMAL_PRECISION) {
                throw new DatasetException("the decimal " + value + " needs " + scaled.precision() + " digits at scale "
                        + scale + ", more than the " + DECIMAL_PRECISION + " of decimal128; round it or store it as a "
                        + "string with Dataset.map");
            }
            ((DecimalVector) vector).setSafe(index, scaled);
        }
    }

    /** {@code list<element>}, its element field named {@code item} as pyarrow names it. */
    record ListOf(ColumnKind element) implements ColumnKind {
        @Override
        public Field field(String name) {
            return new Field(name, FieldType.nullable(ArrowType.List.INSTANCE), List.of(element.field("item")));
        }

        /** A one-element JSON list, which every {@code datasets} version reads as a list feature. */
        @Override
        public JsonNode feature() {
            ArrayNode list = JsonNodeFactory.instance.arrayNode();
            list.add(element.feature());
            return list;
        }

        @Override
        public String describe() {
            return "list<" + element.describe() + ">";
        }

        @Override
        public void write(FieldVector vector, int index, Object value) {
            ListVector lists = (ListVector) vector;
            List<?> values = (List<?>) value;
            int start = lists.startNewValue(index);
            for (int i = 0; i < values.size(); i++) {
                element.writeNullable(lists.getDataVector(), start + i, values.get(i));
            }
            lists.endValue(index, values.size());
        }
    }

    /** {@code struct<name: kind, ...>} in the order the fields first appeared. */
    record StructOf(Map<String, ColumnKind> fields) implements ColumnKind {
        @Override
        public Field field(String name) {
            List<Field> children = new ArrayList<>();
            fields.forEach((child, kind) -> children.add(kind.field(child)));
            return new Field(name, FieldType.nullable(ArrowType.Struct.INSTANCE), children);
        }

        @Override
        public JsonNode feature() {
            ObjectNode struct = JsonNodeFactory.instance.objectNode();
            fields.forEach((name, kind) -> struct.set(name, kind.feature()));
            return struct;
        }

        @Override
        public String describe() {
            return "struct<" + String.join(", ", fields.keySet()) + ">";
        }

        @Override
        public void write(FieldVector vector, int index, Object value) {
            StructVector struct = (StructVector) vector;
            Map<?, ?> map = (Map<?, ?>) value;
            struct.setIndexDefined(index);
            int i = 0;
            for (Map.Entry<String, ColumnKind> field : fields.entrySet()) {
                field.getValue().writeNullable(struct.getChildrenFromFields().get(i++), index, map.get(field.getKey()));
            }
        }

        /** A null struct's fields are null too (Arrow reads them, whatever the struct's validity). */
        @Override
        public void writeNullable(FieldVector vector, int index, Object value) {
            if (value != null) {
                write(vector, index, value);
                return;
            }
            vector.setNull(index);
            int i = 0;
            for (ColumnKind kind : fields.values()) {
                kind.writeNullable(((StructVector) vector).getChildrenFromFields().get(i++), index, null);
            }
        }
    }

    /** {@code {"dtype": dtype, "_type": "Value"}}. */
    private static JsonNode value(String dtype) {
        ObjectNode value = JsonNodeFactory.instance.objectNode();
        value.put("dtype", dtype);
        value.put("_type", "Value");
        return value;
    }
}
