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
        int vocab = BuiltinModels.write(arch, preset, seed, type, out);
        System.out.println("wrote " + preset + " " + arch + " model (" + type.torchName() + ", vocab " + vocab + ") to " + out);
        return 0;
    }
}
