package comlrl.data;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * JSON trees to the plain Java values a {@link TaskItem} holds: objects become unmodifiable
 * {@link LinkedHashMap}s (key order kept), arrays unmodifiable lists, integers {@link Long} (or
 * {@link java.math.BigInteger} past 64 bits), other numbers {@link Double}, and
 * strings, booleans and null themselves.
 */
final class JsonValues {
    /** Strict: one value per document, trailing tokens are an error; NaN/Infinity accepted. */
    static final ObjectMapper MAPPER = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(JsonParser.Feature.ALLOW_NON_NUMERIC_NUMBERS)
            .build();

    private JsonValues() {}

    /** The Java value of {@code node}. */
    static Object toJava(JsonNode node) {
        if (node == null || node.isNull() || node.isMissingNode()) {
            return null;
        }
        if (node.isTextual()) {
            return node.textValue();
        }
        if (node.isBoolean()) {
            return node.booleanValue();
        }
        if (node.isIntegralNumber()) {
            return node.canConvertToLong() ? (Object) node.longValue() : node.bigIntegerValue();
        }
        if (node.isNumber()) {
            return node.doubleValue();
        }
        if (node.isArray()) {
            List<Object> list = new ArrayList<>(node.size());
            for (JsonNode element : node) {
                list.add(toJava(element));
            }
            return Collections.unmodifiableList(list);
        }
        if (node.isObject()) {
            return Collections.unmodifiableMap(fields(node));
        }
        if (node.isBinary()) {
            return node.toString();
        }
        return node.asText();
    }

    /** The fields of a JSON object, converted, in order. */
    static Map<String, Object> fields(JsonNode object) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = object.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> field = it.next();
            map.put(field.getKey(), toJava(field.getValue()));
        }
        return map;
    }

    /** "an array", "a string", ... for error messages. */
    static String kind(JsonNode node) {
        switch (node.getNodeType()) {
            case ARRAY: return "an array";
            case OBJECT: return "an object";
            case STRING: return "a string";
            case NUMBER: return "a number";
            case BOOLEAN: return "a boolean";
            case NULL: return "null";
            default: return node.getNodeType().toString().toLowerCase(java.util.Locale.ROOT);
        }
    }
}
