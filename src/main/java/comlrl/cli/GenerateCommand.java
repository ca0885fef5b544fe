package comlrl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import comlrl.generation.CausalLm;
import comlrl.generation.Completion;
import comlrl.generation.GenerationSettings;
import comlrl.generation.SamplingConfig;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code generate}: sample (or greedily decode) a continuation of one prompt. */
@Command(name = "generate", mixinStandardHelpOptions = true,
        description = "Generate a continuation of a prompt with a model directory or hub id.")
final class GenerateCommand implements Callable<Integer> {
    @Option(names = "--model", required = true, description = "model directory or hub id (e.g. Qwen/Qwen2.5-0.5B)")
    String model;

    @ArgGroup(exclusive = true, multiplicity = "1")
    PromptSource prompt;

    static final class PromptSource {
        @Option(names = "--prompt", description = "prompt text (encoded with the tokenizer's default special tokens)")
        String text;

        @Option(names = "--prompt-ids", split = ",", description = "prompt token ids, comma separated")
        long[] ids;
    }

    @Option(names = "--greedy", description = "always take the most likely token")
    boolean greedy;

    @Option(names = "--temperature", description = "sampling temperature (default: the model's generation config, else 1.0)")
    Double temperature;

    @Option(names = "--top-p", description = "nucleus sampling threshold in (0, 1] (default: the model's, else 1.0)")
    Double topP;

    @Option(names = "--top-k", description = "sample among the k most likely tokens; 0 disables (default: the model's, else 50)")
    Integer topK;

    @Option(names = "--generation", paramLabel = "key=value", description = "another setting of transformers' generate, "
            + "e.g. repetition_penalty=1.1 (repeatable; 'null' switches one off)")
    List<String> generationKwargs = new java.util.ArrayList<>();

    @Option(names = "--stop", paramLabel = "STRING", description = "end the completion once its decoded text contains "
            + "STRING, the token that completes it kept (repeatable; transformers' stop_strings; not together with "
            + "--generation stop_strings)")
    List<String> stop = new java.util.ArrayList<>();

    @Option(names = "--seed", defaultValue = "0", description = "sampling seed (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--max-new-tokens", required = true, description = "maximum number of generated tokens")
    int maxNewTokens;

    @Option(names = "--dtype", description = "override the weights' dtype (float32, bfloat16, float16)")
    String dtype;

    @Option(names = "--device", defaultValue = "cpu", description = "cpu or cuda:N (default ${DEFAULT-VALUE})")
    String device;

    @Option(names = "--json", description = "print one JSON object: ids, logprobs, text, finish_reason, generation")
    boolean json;

    @Override
    public Integer call() throws Exception {
        // as transformers' generate: settings given here, then the model's generation config, then defaults
        Map<String, Object> passed = new LinkedHashMap<>();
        for (String kv : generationKwargs) {
            int eq = kv.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("--generation expects key=value, got '" + kv + "'");
            }
            // a YAML scalar or list: 1.1, 3, true, [5, 7], null
            passed.put(kv.substring(0, eq).trim(), new ObjectMapper(new com.fasterxml.jackson.dataformat.yaml.YAMLFactory())
                    .readValue(kv.substring(eq + 1), Object.class));
        }
        GenerationSettings.requireKnown("--generation", passed.keySet());
        if (!stop.isEmpty()) {
            // one place sets the stop strings: a silent merge or override would hide which list ran
            if (passed.containsKey("stop_strings")) {
                throw new IllegalArgumentException("--stop and --generation stop_strings both set the stop strings: "
                        + "give them all as --stop (repeatable), or all in --generation stop_strings=[...]");
            }
            passed.put("stop_strings", List.copyOf(stop));
        }
        if (temperature != null) {
            passed.put("temperature", temperature);
        }
        if (topP != null) {
            passed.put("top_p", topP);
        }
        if (topK != null) {
            passed.put("top_k", topK);
        }
        try (CausalLm lm = CausalLm.load(model, dtype == null ? null : DType.fromTorchName(dtype), Device.parse(device))) {
            GenerationSettings.Resolved settings = GenerationSettings.resolve(passed, "command line", greedy, maxNewTokens,
                    1, lm.generationConfig());
            SamplingConfig cfg = settings.sampling();
            long[] promptIds = prompt.ids != null ? prompt.ids : lm.encode(prompt.text);
            long vocab = lm.model().config().vocabSize();
            for (long id : promptIds) {
                if (id < 0 || id >= vocab) {
                    throw new IllegalArgumentException("--prompt-ids: id " + id + " is outside the vocabulary [0, " + vocab + ")");
                }
            }
            Completion c = lm.generator().generate(List.of(promptIds), cfg, seed).get(0).get(0);
            if (json) {
                ObjectMapper m = new ObjectMapper();
                ObjectNode o = m.createObjectNode();
                var ids = o.putArray("ids");
                Arrays.stream(c.tokenIds()).forEach(ids::add);
                var lp = o.putArray("logprobs");
                Arrays.stream(c.logprobs()).forEach(lp::add);
                o.put("text", c.text());
                o.put("finish_reason", c.finishReason().name().toLowerCase(java.util.Locale.ROOT));
                var pi = o.putArray("prompt_ids");
                Arrays.stream(promptIds).forEach(pi::add);
                o.set("generation", m.valueToTree(settings.describe()));
                System.out.println(m.writeValueAsString(o));
            } else {
                System.out.println(c.text());
            }
        }
        return 0;
    }
}
