package comlrl.cli;

import comlrl.generation.BuiltinModels;
import comlrl.tensor.DType;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code init-model}: a random-weight model directory in Hugging Face layout, with a tokenizer. */
@Command(name = "init-model", mixinStandardHelpOptions = true,
        description = "Write a random-weight model directory (Hugging Face layout) with a working tokenizer.")
final class InitModelCommand implements Callable<Integer> {
    @Option(names = "--arch", defaultValue = "qwen2", description = "qwen2, llama, qwen3 or mistral (default ${DEFAULT-VALUE})")
    String arch;

    @Option(names = "--preset", defaultValue = "tiny", description = "tiny, small, qwen2.5-0.5b, qwen2.5-1.5b or qwen2.5-coder-3b (default ${DEFAULT-VALUE})")
    String preset;

    @Option(names = "--seed", defaultValue = "0", description = "weight initialisation seed (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--dtype", defaultValue = "float32", description = "float32, bfloat16 or float16 (default ${DEFAULT-VALUE})")
    String dtype;

    @Option(names = "--out", required = true, description = "output directory")
    Path out;

    @Option(names = "--head", defaultValue = "lm", description = "lm (a causal LM, <Family>ForCausalLM) or score "
            + "(a sequence-classification reward model, <Family>ForSequenceClassification) (default ${DEFAULT-VALUE})")
    String head;

    @Option(names = "--num-labels", description = "labels of a --head score model: rows of score.weight "
            + "(default 1: one reward per text)")
    Integer numLabels;

    @Override
    public Integer call() {
        DType type = DType.fromTorchName(dtype);
        String h = head.trim().toLowerCase(java.util.Locale.ROOT);
        if (!h.equals("lm") && !h.equals("score")) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--head must be lm or score, got '"
                    + head + "'");
        }
        if (h.equals("lm")) {
            if (numLabels != null) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--num-labels needs --head score");
            }
            int vocab = BuiltinModels.write(arch, preset, seed, type, out);
            System.out.println(written(preset + " " + arch + " model (" + type.torchName(),
                    comlrl.model.ModelConfig.load(out).vocabSize(), vocab, out));
            return 0;
        }
        int labels = numLabels == null ? 1 : numLabels;
        if (labels < 1) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--num-labels must be at least 1, got "
                    + labels);
        }
        int vocab = BuiltinModels.writeSequenceClassifier(arch, preset, labels, seed, type, out);
        System.out.println(written(preset + " " + arch + " sequence-classification model (" + labels + " label"
                + (labels == 1 ? "" : "s") + ", " + type.torchName(), comlrl.model.ModelConfig.load(out).vocabSize(), vocab,
                out));
        return 0;
    }

    /**
     * The line that reports a written model: {@code what} (up to its dtype), the model's vocabulary
     * and the tokenizer's; when the model has ids the tokenizer lacks (the Qwen2.5 presets keep their
     * 151,936-id embedding for timing and memory beside the tiny tokenizer), a note that a random
     * model samples those nearly always and that they decode to nothing.
     */
    static String written(String what, int modelVocab, int tokenizerVocab, Path out) {
        String line = "wrote " + what + ", vocab " + modelVocab + (modelVocab == tokenizerVocab ? "" : ", tokenizer "
                + tokenizerVocab) + ") to " + out;
        return modelVocab <= tokenizerVocab ? line : line + "\nnote: ids " + tokenizerVocab + " to " + (modelVocab - 1)
                + " are not in the tokenizer and decode to nothing, and with random weights nearly every sampled id is"
                + " one of them: this preset has the real shape, for timing and memory; train on text with tiny or small";
    }

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;
}
