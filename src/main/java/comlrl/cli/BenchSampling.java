package comlrl.cli;

import comlrl.generation.LogitsProcessing;
import comlrl.generation.SamplingConfig;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * How {@code bench} draws tokens, on our side and on the PyTorch sides alike ({@code --sampling}):
 * {@code plain} (temperature 1, no filter), {@code qwen2.5} (the settings of Qwen2.5-Instruct's
 * generation_config.json, which a trainer reads from such a model's directory: temperature 0.7,
 * top_k 20, top_p 0.8, repetition_penalty 1.05), or {@code KEY=VALUE,...} of those four keys.
 *
 * @param topK 0: no top-k
 * @param topP 1: no top-p
 */
record BenchSampling(double temperature, int topK, double topP, double repetitionPenalty) {
    static final BenchSampling PLAIN = new BenchSampling(1.0, 0, 1.0, 1.0);
    static final BenchSampling QWEN25 = new BenchSampling(0.7, 20, 0.8, 1.05);
    private static final Set<String> KEYS = Set.of("temperature", "top_k", "top_p", "repetition_penalty");

    BenchSampling {
        if (!(temperature > 0) || topK < 0 || !(topP > 0 && topP <= 1) || !(repetitionPenalty > 0)) {
            throw new IllegalArgumentException("--sampling needs temperature > 0, top_k >= 0, top_p in (0, 1] and "
                    + "repetition_penalty > 0, got " + this);
        }
    }

    static BenchSampling parse(String spec) {
        if (spec.equals("plain")) {
            return PLAIN;
        }
        if (spec.equals("qwen2.5")) {
            return QWEN25;
        }
        Map<String, String> values = new LinkedHashMap<>();
        for (String item : spec.split(",")) {
            String[] kv = item.split("=", 2);
            if (kv.length != 2 || !KEYS.contains(kv[0].trim())) {
                throw new IllegalArgumentException("--sampling is plain, qwen2.5 or KEY=VALUE,... with keys temperature, "
                        + "top_k, top_p and repetition_penalty; got '" + spec + "'");
            }
            values.put(kv[0].trim(), kv[1].trim());
        }
        try {
            return new BenchSampling(Double.parseDouble(values.getOrDefault("temperature", "1")),
                    Integer.parseInt(values.getOrDefault("top_k", "0")), Double.parseDouble(values.getOrDefault("top_p", "1")),
                    Double.parseDouble(values.getOrDefault("repetition_penalty", "1")));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--sampling '" + spec + "': " + e.getMessage() + " is not a number");
        }
    }

    /** The draw of {@code generations} completions of {@code newTokens} tokens each. */
    SamplingConfig config(int newTokens, int generations) {
        return new SamplingConfig(temperature, topK == 0 ? null : topK, topP == 1 ? null : topP, false, newTokens, generations,
                LogitsProcessing.builder().repetitionPenalty(repetitionPenalty).build());
    }

    /** The {@code --sampling} value that gives these settings (the PyTorch scripts take the same). */
    String spec() {
        return String.format(Locale.ROOT, "temperature=%s,top_k=%d,top_p=%s,repetition_penalty=%s", temperature, topK, topP,
                repetitionPenalty);
    }
}
