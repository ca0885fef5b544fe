package comlrl.data;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.schema.GroupType;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.Type;

/**
 * {@link Dataset#fromParquet}: reads every row group ({@link ParquetRows}) through Parquet's record
 * assembly (which handles nesting, repetition and nulls) into {@code Group}s, then turns each
 * top-level field into a plain Java value following the schema's logical annotations
 * ({@link #row}).
 *
 * <p>Lists follow the Parquet LIST rules, including the older two-level layouts: the repeated
 * field is itself the element when it is primitive, has several fields, or is named
 * {@code array} or {@code <list>_tuple}; otherwise its single field is the element.
 */
final class ParquetLoader {
    private ParquetLoader() {}

    static List<Map<String, Object>> load(Path file) {
        List<Map<String, Object>> rows = new ArrayList<>();
        try (ParquetRows cursor = ParquetRows.open(file)) {
            Map<String, Object> row;
            while ((row = cursor.next()) != null) {
                rows.add(row);
            }
        }
        return rows;
    }

    /** One record as a map of top-level field to plain value, in schema order. */
    static Map<String, Object> row(Group record, MessageType schema) {
        return fields(record, schema);
    }

    /** The fields of a struct-like group, in schema order. */
    private static Map<String, Object> fields(Group group, GroupType type) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (int i = 0; i < type.getFieldCount(); i++) {
            map.put(type.getFieldName(i), fieldValue(group, i, type.getType(i)));
        }
        return map;
    }

    /** A field's value: a list when repeated, null when an absent optional, else its one value. */
    private static Object fieldValue(Group group, int field, Type type) {
        int count = group.getFieldRepetitionCount(field);
        if (type.isRepetition(Type.Repetition.REPEATED)) {
            List<Object> values = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                values.add(value(group, field, i, type));
            }
            return Collections.unmodifiableList(values);
        }
        return count == 0 ? null : value(group, field, 0, type);
    }

    /** Occurrence {@code index} of {@code field}, ignoring its repetition. */
    private static Object value(Group group, int field, int index, Type type) {
        if (type.isPrimitive()) {
            return primitive(group, field, index, type.asPrimitiveType());
        }
        GroupType groupType = type.asGroupType();
        Group inner = group.getGroup(field, index);
        LogicalTypeAnnotation annotation = groupType.getLogicalTypeAnnotation();
        if (annotation instanceof LogicalTypeAnnotation.ListLogicalTypeAnnotation && groupType.getFieldCount() == 1) {
            return list(inner, groupType);
        }
        if ((annotation instanceof LogicalTypeAnnotation.MapLogicalTypeAnnotation
                || annotation instanceof LogicalTypeAnnotation.MapKeyValueTypeAnnotation)
                && groupType.getFieldCount() == 1 && !groupType.getType(0).isPrimitive()) {
            return map(inner, groupType);
        }
        return Collections.unmodifiableMap(fields(inner, groupType));
    }

    private static List<Object> list(Group list, GroupType listType) {
        Type repeated = listType.getType(0);
        boolean repeatedIsElement = repeated.isPrimitive()
                || repeated.asGroupType().getFieldCount() != 1
                || repeated.getName().equals("array")
                || repeated.getName().equals(listType.getName() + "_tuple");
        int count = list.getFieldRepetitionCount(0);
        List<Object> values = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            if (repeatedIsElement) {
                values.add(value(list, 0, i, repeated));
            } else {
                Group entry = list.getGroup(0, i);
                values.add(fieldValue(entry, 0, repeated.asGroupType().getType(0)));
            }
        }
        return Collections.unmodifiableList(values);
    }

    private static Map<Object, Object> map(Group map, GroupType mapType) {
        GroupType keyValue = mapType.getType(0).asGroupType();
        int count = map.getFieldRepetitionCount(0);
        Map<Object, Object> entries = new LinkedHashMap<>();
        for (int i = 0; i < count; i++) {
            Group entry = map.getGroup(0, i);
            Object key = fieldValue(entry, 0, keyValue.getType(0));
            Object val = keyValue.getFieldCount() > 1 ? fieldValue(entry, 1, keyValue.getType(1)) : null;
            entries.put(key, val);
        }
        return Collections.unmodifiableMap(entries);
    }

    private static Object primitive(Group group, int field, int index, PrimitiveType type) {
        LogicalTypeAnnotation annotation = type.getLogicalTypeAnnotation();
        switch (type.getPrimitiveTypeName()) {
            case BOOLEAN:
                return group.getBoolean(field, index);
            case INT32: {
                int v = group.getInteger(field, index);
                if (annotation instanceof LogicalTypeAnnotation.DecimalLogicalTypeAnnotation d) {
                    return BigDecimal.valueOf(v, d.getScale());
                }
                if (annotation instanceof LogicalTypeAnnotation.IntLogicalTypeAnnotation i && !i.isSigned()) {
                    return Integer.toUnsignedLong(v);
                }
                return (long) v;
            }
            case INT64: {
                long v = group.getLong(field, index);
                if (annotation instanceof LogicalTypeAnnotation.DecimalLogicalTypeAnnotation d) {
                    return BigDecimal.valueOf(v, d.getScale());
                }
                if (annotation instanceof LogicalTypeAnnotation.IntLogicalTypeAnnotation i && !i.isSigned() && v < 0) {
                    return new BigInteger(Long.toUnsignedString(v));
                }
                return v;
            }
            case FLOAT:
                return (double) group.getFloat(field, index);
            case DOUBLE:
                return group.getDouble(field, index);
            case INT96:
                return group.getInt96(field, index).getBytes();
            case BINARY:
            case FIXED_LEN_BYTE_ARRAY: {
                Binary binary = group.getBinary(field, index);
                if (annotation instanceof LogicalTypeAnnotation.StringLogicalTypeAnnotation
                        || annotation instanceof LogicalTypeAnnotation.EnumLogicalTypeAnnotation
                        || annotation instanceof LogicalTypeAnnotation.JsonLogicalTypeAnnotation) {
                    return binary.toStringUsingUTF8();
                }
                if (annotation instanceof LogicalTypeAnnotation.DecimalLogicalTypeAnnotation d) {
                    return new BigDecimal(new BigInteger(binary.getBytes()), d.getScale());
                }
                return binary.getBytes();
            }
            default:
                throw new IllegalStateException("unsupported Parquet type " + type);
        }
    }
}
