package comlrl.cli;

import comlrl.generation.CausalLm;
import comlrl.generation.GenerationConfig;
import comlrl.model.DecoderLm;
import comlrl.model.ModelConfig;
import comlrl.model.ModelPresets;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tokenizer.TinyTokenizerFactory;
import comlrl.tokenizer.Tokenizer;
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

    @Option(names = "--preset", defaultValue = "tiny", description = "tiny, small or qwen2.5-0.5b (default ${DEFAULT-VALUE})")
    String preset;

    @Option(names = "--seed", defaultValue = "0", description = "weight initialisation seed (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--dtype", defaultValue = "float32", description = "float32, bfloat16 or float16 (default ${DEFAULT-VALUE})")
    String dtype;

    @Option(names = "--out", required = true, description = "output directory")
    Path out;

    @Override
    public Integer call() {
        DType type = DType.fromTorchName(dtype);
        int vocab = TinyTokenizerFactory.write(out);
        try (Tokenizer tokenizer = Tokenizer.load(out)) {
            long eos = tokenizer.eosTokenId();
            ModelConfig config = ModelPresets.config(arch, preset, vocab, -1, eos, type.torchName());
            try (CausalLm lm = new CausalLm(out.toString(), DecoderLm.random(config, type, Device.CPU, seed),
                    Tokenizer.load(out), GenerationConfig.of(-1, eos, tokenizer.padTokenId()))) {
                lm.save(out);
            }
        }
        System.out.println("wrote " + preset + " " + arch + " model (" + type.torchName() + ", vocab " + vocab + ") to " + out);
        return 0;
    }
}
