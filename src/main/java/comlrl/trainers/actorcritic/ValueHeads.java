package comlrl.trainers.actorcritic;

import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.distributed.RankWork;
import comlrl.generation.CausalLm;
import comlrl.generation.Scorer;
import comlrl.model.DecoderLm;
import comlrl.model.ValueHead;
import comlrl.model.io.ModelDirs;
import comlrl.model.io.Safetensors;
import comlrl.tensor.AdamW;
import comlrl.tensor.GradMode;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import comlrl.checkpoint.TrainerCheckpoint;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.DoubleStream;

/**
 * What the critics do with their value heads outside the updates: values without gradients, checkpoint
 * parts, and {@code value_head.json} beside a saved head ({@code critic_type}, widths, algorithm), so
 * that restoring it into a run with another {@code critic_type} fails instead of training on another quantity.
 */
final class ValueHeads {
    static final String INFO_FILE = "value_head.json";
    private static final ObjectMapper JSON = new ObjectMapper();

    private ValueHeads() {
    }

    /**
     * {@code V = head(model(prompt ⊕ response))[last token]} of each row without gradients (a Q critic's
     * K rows of one prompt compute it once: {@link Scorer#lastHidden}); one row broadcast to {@code k}
     * values when given one (a V critic's one value for K generations).
     */
    static double[] values(DecoderLm model, ValueHead head, List<long[]> prompts, List<long[]> responses, long pad, int k) {
        try (Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
            Tensor last = Scorer.lastHidden(model, prompts, responses, pad);  // [B, E]
            double[] values = head.forward(last).toFloat().toDoubleArray(); // [B]
            return values.length == k ? values : DoubleStream.generate(() -> values[0]).limit(k).toArray();
        }
    }

    /** AdamW (weight decay 0.01) over {@code model}'s parameters and those of {@code head} (null: none). */
    static AdamW adamW(RankWork work, DecoderLm model, ValueHead head, double learningRate) {
        List<Tensor> params = new ArrayList<>(model.parameters());
        params.addAll(head == null ? List.of() : head.parameters());
        return work.adamW(params, learningRate, 0.01);
    }

    /** Fails when {@code critic}'s vocabulary does not cover the {@code readerVocab} ids of {@code who}'s tokenizer. */
    static void requireVocabulary(String name, CausalLm critic, long readerVocab, String who, String keys) {
        long criticVocab = critic.model().config().vocabSize();
        if (criticVocab < readerVocab) {
            throw new IllegalArgumentException(name + " (" + critic.source() + ") has vocab_size " + criticVocab
                    + " but reads " + who + " token ids, up to " + (readerVocab - 1) + "; give it a critic of " + who
                    + " model family (" + keys + ")");
        }
    }

    /** A value head in {@code checkpoint/dirName/}. */
    static TrainerCheckpoint.Part checkpointPart(String dirName, ValueHead head) {
        return TrainerCheckpoint.Part.of(dir -> head.save(dir.resolve(dirName)), dir -> head.restore(dir.resolve(dirName)));
    }

    /** Writes {@code head}'s files and {@value #INFO_FILE} into {@code dir}, all or none. */
    static void save(Path dir, ValueHead head, CriticType type, String algorithm) {
        ModelDirs.replaceFiles(dir, staging -> {
            head.writeFiles(staging);
            writeInfo(staging, head, type, algorithm);
        });
    }

    private static void writeInfo(Path dir, ValueHead head, CriticType type, String algorithm) {
        Map<String, Object> info = new LinkedHashMap<>();
        info.put("critic_type", type.configName());
        info.put("input_dim", head.inputDim());
        info.put("hidden_dim", head.hiddenDim() == 0 ? null : head.hiddenDim());
        info.put("algorithm", algorithm);
        try {
            Safetensors.writeSmallFile(dir.resolve(INFO_FILE), JSON.writerWithDefaultPrettyPrinter().writeValueAsString(info)
                    + "\n");
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot write " + dir.resolve(INFO_FILE) + ": " + e.getMessage(), e);
        }
    }

    /**
     * Fails when {@code dir}'s {@value #INFO_FILE} records another {@code critic_type} than
     * {@code expected} (a head saved without one, e.g. by the Python library, is accepted).
     */
    static void requireInfo(Path dir, CriticType expected, String widthField) {
        Path file = dir.resolve(INFO_FILE);
        if (!Files.isRegularFile(file)) {
            return;
        }
        Map<?, ?> info;
        try {
            info = JSON.readValue(file.toFile(), Map.class);
        } catch (IOException e) {
            throw new IllegalArgumentException("Malformed " + file + ": " + e.getMessage(), e);
        }
        Object saved = info.get("critic_type");
        if (saved != null && !expected.configName().equals(String.valueOf(saved))) {
            throw new IllegalArgumentException("The value head in " + dir + " was trained with critic_type \"" + saved
                    + "\" but this run uses \"" + expected.configName() + "\": its values are of another quantity; set "
                    + "critic_type: " + saved + " as in the saved run (and " + widthField + " "
                    + (info.get("hidden_dim") == null ? "unset" : info.get("hidden_dim")) + ")");
        }
    }
}
