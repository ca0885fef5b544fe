package comlrl.model;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import comlrl.tensor.Device;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/** Test helpers for {@link SequenceClassifier}: padded batches built by hand, config edits. */
public final class ClassifierBatches {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ClassifierBatches() {
    }

    /** The logits {@code [B][C]} of {@code sequences} padded on the right (or left) with the model's pad id. */
    public static double[][] logits(SequenceClassifier m, List<long[]> sequences, boolean left) {
        int b = sequences.size();
        int s = sequences.stream().mapToInt(x -> x.length).max().orElseThrow();
        long[] ids = new long[b * s];
        long[] mask = new long[b * s];
        for (int i = 0; i < b; i++) {
            long[] seq = sequences.get(i);
            int offset = left ? s - seq.length : 0;
            Arrays.fill(ids, i * s, (i + 1) * s, Math.max(m.padTokenId(), 0));
            System.arraycopy(seq, 0, ids, i * s + offset, seq.length);
            Arrays.fill(mask, i * s + offset, i * s + offset + seq.length, 1L);
        }
        try (Scope scope = Scope.open()) {
            double[] flat = m.logits(Tensor.ofLongs(ids, Device.CPU, b, s), Tensor.ofLongs(mask, Device.CPU, b, s))
                    .toDoubleArray();
            double[][] out = new double[b][];
            for (int i = 0; i < b; i++) {
                out[i] = Arrays.copyOfRange(flat, i * m.numLabels(), (i + 1) * m.numLabels());
            }
            return out;
        }
    }

    /** The logits {@code [C]} of one unpadded sequence. */
    public static double[] logits(SequenceClassifier m, long[] ids) {
        try (Scope scope = Scope.open()) {
            return m.logits(Tensor.ofLongs(ids, Device.CPU, 1, ids.length), null).toDoubleArray();
        }
    }

    /** Rewrites {@code dir/config.json} after {@code edit}. */
    public static void editConfig(Path dir, Consumer<ObjectNode> edit) {
        try {
            ObjectNode json = (ObjectNode) JSON.readTree(dir.resolve("config.json").toFile());
            edit.accept(json);
            Files.writeString(dir.resolve("config.json"), JSON.writeValueAsString(json));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
