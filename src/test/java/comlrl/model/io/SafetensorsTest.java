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
}
