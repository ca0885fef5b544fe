package comlrl.data;

import java.math.BigInteger;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseLargeVariableWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float2Vector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.complex.BaseListVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.pojo.ArrowType;

/**
 * Arrow vectors to the plain Java values a {@link TaskItem} holds, as {@link Dataset#fromParquet}
 * gives them: strings (utf8, large_utf8, utf8_view) {@link String}; integers of every width,
 * signed or not, {@link Long} (uint64 values above {@code Long.MAX_VALUE} {@link BigInteger});
 * float16/32/64 {@link Double} (the exact value of the stored float); booleans {@link Boolean};
 * decimals {@link java.math.BigDecimal}; binary {@code byte[]}; dates, times, timestamps and
 * durations their stored integers as {@link Long} (days for date32, milliseconds for date64, the
 * column's unit otherwise); list, large_list and fixed-size list unmodifiable lists; structs and
 * maps unmodifiable maps; nulls null.
 *
 * <p>A {@link Cell} is built once per column from the column's type, so an unsupported type is
 * reported before any row is read, naming the column (and the field inside it) and the type.
 */
final class ArrowValues {
    private ArrowValues() {}

    /** Reads row {@code index} of one vector; the vector's buffers may be reloaded between calls. */
    @FunctionalInterface
    interface Cell {
        Object at(int index);
    }

    /**
     * The reader of {@code vector}'s values.
     *
     * @param path the column (and field inside it, {@code meta.inner}) for error messages
     * @throws DatasetException naming {@code file}, {@code path} and the type when task items cannot
     *     hold it (unions, intervals, list views, run-end encoded, dictionary-encoded columns)
     */
    static Cell cell(FieldVector vector, Path file, String path) {
        ArrowType type = vector.getField().getType();
        if (vector.getField().getDictionary() != null) {
            throw unsupported(file, path, "dictionary-encoded " + type);
        }
        switch (type.getTypeID()) {
            case Null:
                return index -> null;
            case Bool: {
                BitVector bits = (BitVector) vector;
                return index -> bits.isNull(index) ? null : (Object) (bits.get(index) != 0);
            }
            case Int:
                return integer(vector, (ArrowType.Int) type);
            case FloatingPoint:
                return floating(vector, (ArrowType.FloatingPoint) type);
            case Utf8:
            case LargeUtf8:
            case Utf8View:
                // getObject is the vector's Text (UTF-8 bytes); toString decodes them
                return index -> vector.isNull(index) ? null : vector.getObject(index).toString();
            case Binary:
            case LargeBinary:
            case BinaryView:
            case FixedSizeBinary:
            case Decimal:
                // byte[] and BigDecimal already
                return index -> vector.isNull(index) ? null : vector.getObject(index);
            case Date:
            case Time:
            case Timestamp:
            case Duration:
                return storedInteger((BaseFixedWidthVector) vector);
            case List:
            case FixedSizeList:
                return list((BaseListVector) vector, file, path);
            case LargeList:
                return largeList((LargeListVector) vector, file, path);
            case Struct:
                return struct((StructVector) vector, file, path);
            case Map:
                return map((MapVector) vector, file, path);
            default:
                throw unsupported(file, path, type.toString());
        }
    }

    /**
     * Fails unless every offset buffer in {@code vector} and its children rises monotonically from
     * 0, so that no value's length (end offset minus start offset) is negative or larger than the
     * data: strings and binary (32- and 64-bit offsets), lists, large lists and maps.
     *
     * @throws IllegalStateException naming the vector and the position
     */
    static void requireRisingOffsets(FieldVector vector) {
        int count = vector.getValueCount();
        if (count > 0 && (vector instanceof BaseVariableWidthVector || vector instanceof ListVector)) {
            ArrowBuf offsets = vector.getOffsetBuffer();
            for (int i = 0; i < count; i++) {
                requireRising(vector, i, offsets.getInt((long) i * Integer.BYTES), offsets.getInt((long) (i + 1) * Integer.BYTES));
            }
        } else if (count > 0 && (vector instanceof BaseLargeVariableWidthVector || vector instanceof LargeListVector)) {
            ArrowBuf offsets = vector.getOffsetBuffer();
            for (int i = 0; i < count; i++) {
                requireRising(vector, i, offsets.getLong((long) i * Long.BYTES), offsets.getLong((long) (i + 1) * Long.BYTES));
            }
        }
        for (FieldVector child : vector.getChildrenFromFields()) {
            requireRisingOffsets(child);
        }
    }

    private static void requireRising(FieldVector vector, int index, long start, long end) {
        if (start < 0 || end < start) {
            throw new IllegalStateException("column '" + vector.getName() + "' value " + index + " spans offsets "
                    + start + " to " + end);
        }
    }

    private static DatasetException unsupported(Path file, String path, String type) {
        return DatasetException.inFile(file, "column '" + path + "' has Arrow type " + type + ", which a task "
                + "item cannot hold (supported: strings, integers, floats, booleans, decimals, binary, dates and "
                + "times, lists, structs, maps, nulls); convert the column in Python (ds.cast_column or ds.map) and "
                + "save it again");
    }

    private static Cell integer(FieldVector vector, ArrowType.Int type) {
        if (!type.getIsSigned() && type.getBitWidth() == 64) {
            UInt8Vector unsigned = (UInt8Vector) vector;
            return index -> {
                if (unsigned.isNull(index)) {
                    return null;
                }
                long bits = unsigned.get(index);
                return bits >= 0 ? (Object) bits : new BigInteger(Long.toUnsignedString(bits));
            };
        }
        // signed widths sign-extend, uint8/16/32 read without overflow
        BaseIntVector ints = (BaseIntVector) vector;
        return index -> vector.isNull(index) ? null : (Object) ints.getValueAsLong(index);
    }

    private static Cell floating(FieldVector vector, ArrowType.FloatingPoint type) {
        switch (type.getPrecision()) {
            case HALF: {
                Float2Vector halves = (Float2Vector) vector;
                return index -> halves.isNull(index) ? null : (Object) halves.getValueAsDouble(index);
            }
            case SINGLE: {
                Float4Vector singles = (Float4Vector) vector;
                return index -> singles.isNull(index) ? null : (Object) (double) singles.get(index);
            }
            default: {
                Float8Vector doubles = (Float8Vector) vector;
                return index -> doubles.isNull(index) ? null : (Object) doubles.get(index);
            }
        }
    }

    /** date32 and time32 are 4-byte integers, the other temporal types 8-byte ones. */
    private static Cell storedInteger(BaseFixedWidthVector vector) {
        boolean narrow = vector.getTypeWidth() == Integer.BYTES;
        return index -> {
            if (vector.isNull(index)) {
                return null;
            }
            return narrow ? (long) vector.getDataBuffer().getInt((long) index * Integer.BYTES)
                    : (Object) vector.getDataBuffer().getLong((long) index * Long.BYTES);
        };
    }

    private static Cell list(BaseListVector vector, Path file, String path) {
        Cell element = cell((FieldVector) vector.getChildrenFromFields().get(0), file, path + "[]");
        return index -> vector.isNull(index) ? null
                : elements(element, vector.getElementStartIndex(index), vector.getElementEndIndex(index));
    }

    private static Cell largeList(LargeListVector vector, Path file, String path) {
        Cell element = cell(vector.getDataVector(), file, path + "[]");
        return index -> vector.isNull(index) ? null
                : elements(element, Math.toIntExact(vector.getElementStartIndex(index)),
                        Math.toIntExact(vector.getElementEndIndex(index)));
    }

    private static List<Object> elements(Cell element, int start, int end) {
        List<Object> values = new ArrayList<>(end - start);
        for (int i = start; i < end; i++) {
            values.add(element.at(i));
        }
        return Collections.unmodifiableList(values);
    }

    private static Cell struct(StructVector vector, Path file, String path) {
        List<FieldVector> children = vector.getChildrenFromFields();
        String[] names = new String[children.size()];
        Cell[] cells = new Cell[children.size()];
        for (int i = 0; i < cells.length; i++) {
            names[i] = children.get(i).getName();
            cells[i] = cell(children.get(i), file, path + "." + names[i]);
        }
        return index -> {
            if (vector.isNull(index)) {
                return null;
            }
            Map<String, Object> fields = new LinkedHashMap<>();
            for (int i = 0; i < cells.length; i++) {
                fields.put(names[i], cells[i].at(index));
            }
            return Collections.unmodifiableMap(fields);
        };
    }

    /** A map's entries (a list of key/value structs) as a map, in stored order. */
    private static Cell map(MapVector vector, Path file, String path) {
        StructVector entries = (StructVector) vector.getDataVector();
        Cell key = cell(entries.getChildrenFromFields().get(0), file, path + ".key");
        Cell value = cell(entries.getChildrenFromFields().get(1), file, path + ".value");
        return index -> {
            if (vector.isNull(index)) {
                return null;
            }
            Map<Object, Object> map = new LinkedHashMap<>();
            for (int i = vector.getElementStartIndex(index); i < vector.getElementEndIndex(index); i++) {
                map.put(key.at(i), value.at(i));
            }
            return Collections.unmodifiableMap(map);
        };
    }
}
