package comlrl.model.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SafetensorsTest {

    private static Map<String, Tensor> sample() {
        Map<String, Tensor> m = new LinkedHashMap<>();
        try (Rng rng = new Rng(1)) {
            m.put("a.f32", Tensor.randn(rng, 1.0, DType.F32, Device.CPU, 3, 5));
            m.put("b.bf16", Tensor.randn(rng, 1.0, DType.BF16, Device.CPU, 7));
            m.put("c.f16", Tensor.randn(rng, 1.0, DType.F16, Device.CPU, 2, 2, 2));
            m.put("d.i64", Tensor.ofLongs(new long[] {1, -2, 3}, Device.CPU));
            m.put("e.empty", Tensor.zerosOf(DType.F32, Device.CPU, 0, 4));
        }
        return m;
    }

    @Test
    void roundTripsEveryDtypeBitExactly(@TempDir Path tmp) {
        try (Scope s = Scope.open()) {
            Map<String, Tensor> m = sample();
            Path f = tmp.resolve("x.safetensors");
            Safetensors.save(m, f);
            Map<String, Tensor> back = Safetensors.load(f);
            assertThat(back.keySet()).containsExactlyElementsOf(m.keySet());
            m.forEach((k, v) -> assertThat(back.get(k).bitEquals(v)).as(k).isTrue());
            assertThat(Safetensors.readHeader(f)).extracting(Safetensors.Entry::dtype)
                    .containsExactly(DType.F32, DType.BF16, DType.F16, DType.I64, DType.F32);
        }
    }

    @Test
    void headerMatchesTheFormatByHand(@TempDir Path tmp) throws Exception {
        try (Scope s = Scope.open()) {
            Path f = tmp.resolve("one.safetensors");
            Safetensors.save(Map.of("w", Tensor.ofFloats(new float[] {1f, 2f}, Device.CPU)), f);
            byte[] bytes = Files.readAllBytes(f);
            long n = ByteBuffer.wrap(bytes, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
            assertThat(n % 8).isZero();
            String header = new String(bytes, 8, (int) n, StandardCharsets.UTF_8).trim();
            assertThat(header).contains("\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}")
                    .contains("\"__metadata__\":{\"format\":\"pt\"}");
            // 1.0f = 0x3F800000, little-endian
            assertThat(Arrays.copyOfRange(bytes, 8 + (int) n, 8 + (int) n + 4)).containsExactly(0, 0, (byte) 0x80, 0x3F);
            assertThat(bytes.length).isEqualTo(8 + n + 8);
        }
    }

    @Test
    void shardedModelDirectoryRoundTrips(@TempDir Path tmp) throws Exception {
        try (Scope s = Scope.open()) {
            Map<String, Tensor> m = sample();
            Safetensors.saveModelDir(m, tmp, 40); // tiny shards force several files
            assertThat(Files.exists(tmp.resolve(Safetensors.INDEX_FILE))).isTrue();
            assertThat(Files.exists(tmp.resolve(Safetensors.SINGLE_FILE))).isFalse();
            assertThat(Safetensors.shardFiles(tmp.resolve(Safetensors.INDEX_FILE)).size()).isGreaterThan(1);
            Map<String, Tensor> back = Safetensors.loadModelDir(tmp);
            m.forEach((k, v) -> assertThat(back.get(k).bitEquals(v)).as(k).isTrue());
            assertThat(Files.readString(tmp.resolve(Safetensors.INDEX_FILE))).contains("total_size");
        }
    }

    @Test
    void truncatedAndMalformedFilesGiveClearErrors(@TempDir Path tmp) throws Exception {
        try (Scope s = Scope.open()) {
            Path f = tmp.resolve("t.safetensors");
            Safetensors.save(sample(), f);
            byte[] bytes = Files.readAllBytes(f);
            Path cut = tmp.resolve("cut.safetensors");
            Files.write(cut, Arrays.copyOf(bytes, bytes.length - 10));
            assertThatThrownBy(() -> Safetensors.load(cut)).hasMessageContaining("truncated").hasMessageContaining("cut.safetensors");
            Path tiny = tmp.resolve("tiny.safetensors");
            Files.write(tiny, new byte[] {1, 2, 3});
            assertThatThrownBy(() -> Safetensors.load(tiny)).hasMessageContaining("not a safetensors file");
            Path bad = tmp.resolve("bad.safetensors");
            byte[] junk = "{not json".getBytes(StandardCharsets.UTF_8);
            ByteBuffer b = ByteBuffer.allocate(8 + junk.length).order(ByteOrder.LITTLE_ENDIAN);
            b.putLong(junk.length).put(junk);
            Files.write(bad, b.array());
            assertThatThrownBy(() -> Safetensors.load(bad)).hasMessageContaining("malformed safetensors header JSON");
            assertThatThrownBy(() -> Safetensors.load(tmp.resolve("missing.safetensors"))).hasMessageContaining("Missing safetensors file");
            assertThatThrownBy(() -> Safetensors.loadModelDir(tmp.resolve("nowhere"))).hasMessageContaining("No model.safetensors");
        }
    }

    // ------------------------------------------------------------------ format validation

    /** A file of header length {@code n}, header bytes and data bytes, as given (no padding added). */
    private static Path raw(Path dir, String name, long n, String header, byte[] data) throws Exception {
        byte[] h = header.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(8 + h.length + data.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(n).put(h).put(data);
        Path f = dir.resolve(name);
        Files.write(f, b.array());
        return f;
    }

    private static Path raw(Path dir, String name, String header, byte[] data) throws Exception {
        return raw(dir, name, header.getBytes(StandardCharsets.UTF_8).length, header, data);
    }

    private static byte[] floats(float... v) {
        ByteBuffer b = ByteBuffer.allocate(4 * v.length).order(ByteOrder.LITTLE_ENDIAN);
        for (float x : v) {
            b.putFloat(x);
        }
        return b.array();
    }

    @Test
    void aHeaderLengthOneByteShortIsRefusedInsteadOfLoadingShiftedGarbage(@TempDir Path tmp) throws Exception {
        // the JSON is followed by padding spaces; a length one byte short still parses, but the data
        // section then starts one byte early and every value would be read shifted
        String json = "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}   ";
        Path f = raw(tmp, "short.safetensors", json.length() - 1, json, floats(1f, 2f));
        assertThatThrownBy(() -> Safetensors.load(f)).hasMessageContaining("short.safetensors")
                .hasMessageContaining("belong to no tensor");
        // the same bytes with the right length load
        Path ok = raw(tmp, "ok.safetensors", json, floats(1f, 2f));
        try (Scope s = Scope.open()) {
            assertThat(Safetensors.load(ok).get("w").toFloatArray()).containsExactly(1f, 2f);
        }
    }

    @Test
    void overlapsHolesAndTrailingBytesAreRefused(@TempDir Path tmp) throws Exception {
        String entry = "{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[%d,%d]}";
        Path overlap = raw(tmp, "overlap.safetensors", "{\"a\":" + String.format(entry, 0, 8) + ",\"b\":"
                + String.format(entry, 0, 8) + "}", floats(1f, 2f));
        assertThatThrownBy(() -> Safetensors.load(overlap)).hasMessageContaining("overlap.safetensors")
                .hasMessageContaining("'a' and 'b' overlap");
        Path hole = raw(tmp, "hole.safetensors", "{\"a\":" + String.format(entry, 0, 8) + ",\"b\":"
                + String.format(entry, 16, 24) + "}", floats(1f, 2f, 3f, 4f, 5f, 6f));
        assertThatThrownBy(() -> Safetensors.load(hole)).hasMessageContaining("bytes 8..16")
                .hasMessageContaining("belong to no tensor");
        Path trailing = raw(tmp, "trailing.safetensors", "{\"a\":" + String.format(entry, 0, 8) + "}",
                floats(1f, 2f, 3f));
        assertThatThrownBy(() -> Safetensors.load(trailing)).hasMessageContaining("the last 4 bytes belong to no tensor");
        Path reversed = raw(tmp, "reversed.safetensors", "{\"a\":" + String.format(entry, 8, 0) + "}", floats(1f, 2f));
        assertThatThrownBy(() -> Safetensors.load(reversed)).hasMessageContaining("end before they begin");
    }

    @Test
    void headerRulesOfTheFormatAreEnforced(@TempDir Path tmp) throws Exception {
        String w = "\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}";
        byte[] data = floats(1f, 2f);
        assertThatThrownBy(() -> Safetensors.load(raw(tmp, "lead.safetensors", " {" + w + "}", data)))
                .hasMessageContaining("must start with '{'");
        assertThatThrownBy(() -> Safetensors.load(raw(tmp, "dup.safetensors", "{" + w + "," + w + "}", data)))
                .hasMessageContaining("dup.safetensors").hasMessageContaining("Duplicate field 'w'");
        assertThatThrownBy(() -> Safetensors.load(raw(tmp, "junk.safetensors", "{" + w + "} x", data)))
                .hasMessageContaining("malformed safetensors header JSON");
        assertThatThrownBy(() -> Safetensors.load(raw(tmp, "neg.safetensors",
                "{\"w\":{\"dtype\":\"F32\",\"shape\":[-1,-2],\"data_offsets\":[0,8]}}", data)))
                .hasMessageContaining("tensor 'w' shape must hold non-negative integers");
        assertThatThrownBy(() -> Safetensors.load(raw(tmp, "frac.safetensors",
                "{\"w\":{\"dtype\":\"F32\",\"shape\":[2.5],\"data_offsets\":[0,8]}}", data)))
                .hasMessageContaining("non-negative integers");
        assertThatThrownBy(() -> Safetensors.load(raw(tmp, "f8.safetensors",
                "{\"w\":{\"dtype\":\"F8_E4M3\",\"shape\":[8],\"data_offsets\":[0,8]}}", data)))
                .hasMessageContaining("f8.safetensors: tensor 'w'").hasMessageContaining("'F8_E4M3'");
        assertThatThrownBy(() -> Safetensors.load(raw(tmp, "meta.safetensors",
                "{\"__metadata__\":{\"format\":1}," + w + "}", data)))
                .hasMessageContaining("__metadata__ value of 'format' must be a string");
        assertThatThrownBy(() -> Safetensors.load(raw(tmp, "huge.safetensors", -1L, "{" + w + "}", data)))
                .hasMessageContaining("exceeds the safetensors limit");
        // hostile lengths are refused from the file size before anything is allocated
        assertThatThrownBy(() -> Safetensors.readHeader(raw(tmp, "2p60.safetensors", 1L << 60, "{" + w + "}", data)))
                .hasMessageContaining("2p60.safetensors: header length " + (1L << 60) + " exceeds the safetensors limit");
        assertThatThrownBy(() -> Safetensors.readHeader(raw(tmp, "long.safetensors", 99_999_999L, "{" + w + "}", data)))
                .hasMessageContaining("long.safetensors: header length 99999999 does not fit the file of");
        Path latin = tmp.resolve("latin1.safetensors");
        byte[] h = ("{\"\u00e9\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}")
                .getBytes(StandardCharsets.ISO_8859_1);
        ByteBuffer b = ByteBuffer.allocate(8 + h.length + 8).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(h.length).put(h).put(data);
        Files.write(latin, b.array());
        assertThatThrownBy(() -> Safetensors.load(latin)).hasMessageContaining("not valid UTF-8");
        // padding with spaces, an empty file of tensors, zero-size tensors anywhere: all valid
        try (Scope s = Scope.open()) {
            assertThat(Safetensors.load(raw(tmp, "empty.safetensors", "{}      ", new byte[0]))).isEmpty();
            Map<String, Tensor> z = Safetensors.load(raw(tmp, "zero.safetensors", "{\"z\":{\"dtype\":\"F32\","
                    + "\"shape\":[0,3],\"data_offsets\":[0,0]}," + w + "}", data));
            assertThat(z.get("z").shape()).containsExactly(0, 3);
            assertThat(z.get("w").toFloatArray()).containsExactly(1f, 2f);
        }
    }

    @Test
    void shardedIndexAndShardsMustAgree(@TempDir Path tmp) throws Exception {
        try (Scope s = Scope.open()) {
            Safetensors.saveModelDir(sample(), tmp, 40);
            Path index = tmp.resolve(Safetensors.INDEX_FILE);
            String original = Files.readString(index);
            String shard2 = "model-00002-of-00003.safetensors";
            Files.move(tmp.resolve(shard2), tmp.resolve("aside"));
            assertThatThrownBy(() -> Safetensors.loadModelDir(tmp)).hasMessageContaining("lists shard " + shard2)
                    .hasMessageContaining("has no such file");
            Files.move(tmp.resolve("aside"), tmp.resolve(shard2));
            // the index places a tensor in a shard that does not hold it
            Files.writeString(index, original.replace("\"d.i64\" : \"model-00003", "\"d.i64\" : \"model-00001"));
            assertThatThrownBy(() -> Safetensors.loadModelDir(tmp)).hasMessageContaining("'d.i64'")
                    .hasMessageContaining("disagree");
            // the index lacks a tensor a shard holds
            Files.writeString(index, original.replace("\"b.bf16\" : \"model-00002-of-00003.safetensors\",", ""));
            assertThatThrownBy(() -> Safetensors.loadModelDir(tmp)).hasMessageContaining("holds tensor 'b.bf16'")
                    .hasMessageContaining("does not list it");
            Files.writeString(index, original);
            assertThat(Safetensors.loadModelDir(tmp)).hasSize(5);
        }
    }
}
