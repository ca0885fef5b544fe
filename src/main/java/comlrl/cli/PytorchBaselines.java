package comlrl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The PyTorch sides of {@code bench --compare-pytorch}: which baselines run and how. Each is a Python
 * script of {@code bench/} run on the same model directory with the same step options, printing one
 * JSON object.
 * <ul>
 * <li>{@code plain}: {@code bench/pytorch_step.py}, eager PyTorch with AdamW's for-loop implementation
 *     (torch's CPU default); bfloat16 as bf16 weights on float32 masters. The baseline of the figures
 *     recorded before the others existed; the {@code ratios} of the output stay against it.</li>
 * <li>{@code fused}: the same with {@code AdamW(fused=True)}, transformers' Trainer default (so TRL's).</li>
 * <li>{@code autocast} (bfloat16 only): float32 weights, every forward under
 *     {@code torch.autocast("cpu", bfloat16)} (Trainer's {@code bf16=True}), fused AdamW.</li>
 * <li>{@code peft} ({@code --lora R}): {@code bench/peft_step.py}, transformers + peft, N adapters on
 *     one base, the team's rows generated in one batch with peft's mixed-adapter batches, fused AdamW
 *     per adapter.</li>
 * </ul>
 */
final class PytorchBaselines {
    private PytorchBaselines() {
    }

    /** One baseline: its name, its script under {@code bench/}, its own options, and what it is. */
    record Baseline(String name, String script, List<String> options, String what) {
    }

    /** The full-agent baselines for {@code dtype}, in output order ({@code plain} first). */
    static List<Baseline> forDtype(String dtype) {
        boolean bf16 = dtype.equals("bfloat16");
        String weights = bf16 ? ", bf16 weights on float32 masters" : "";
        List<Baseline> out = new ArrayList<>(List.of(
                new Baseline("plain", "pytorch_step.py", bf16 ? List.of("--adamw", "plain", "--bf16", "weights")
                        : List.of("--adamw", "plain"), "eager, AdamW for-loop" + weights),
                new Baseline("fused", "pytorch_step.py", bf16 ? List.of("--adamw", "fused", "--bf16", "weights")
                        : List.of("--adamw", "fused"), "eager, AdamW fused" + weights)));
        if (bf16) {
            out.add(new Baseline("autocast", "pytorch_step.py", List.of("--adamw", "fused", "--bf16", "autocast"),
                    "eager, float32 weights under autocast(bf16), AdamW fused"));
        }
        return out;
    }

    /** The baselines named in {@code names} (all of {@link #forDtype} when empty); unknown names fail. */
    static List<Baseline> select(String dtype, List<String> names) {
        List<Baseline> all = forDtype(dtype);
        if (names == null || names.isEmpty()) {
            return all;
        }
        List<Baseline> out = new ArrayList<>();
        for (String name : names) {
            out.add(all.stream().filter(b -> b.name().equals(name)).findFirst().orElseThrow(() ->
                    new IllegalArgumentException("--pytorch-baselines: no baseline \"" + name + "\" for --dtype " + dtype
                            + "; choose from " + all.stream().map(Baseline::name).toList())));
        }
        return out;
    }

    /**
     * The transformers + peft team baseline of {@code bench --lora R}; with {@code autocast} its passes run
     * under {@code torch.autocast} (bfloat16), as {@code bench --lora-autocast} runs ours.
     */
    static Baseline peft(int rank, List<String> targets, boolean autocast) {
        List<String> args = new ArrayList<>(List.of("--lora", "" + rank, "--lora-targets",
                String.join(",", targets), "--adamw", "fused"));
        if (autocast) {
            args.add("--autocast");
        }
        return new Baseline("peft", "peft_step.py", args, "transformers + peft, one base with N adapters, mixed-adapter "
                + "team generation, AdamW fused" + (autocast ? ", under torch.autocast (bf16)" : ""));
    }

    /**
     * Runs {@code baseline} on {@code dir} with the shared {@code stepArgs} and {@code threads} threads
     * (OMP/OpenBLAS/MKL variables set to match) and returns its JSON result, with {@code baseline} and
     * {@code baseline_what} added.
     */
    @SuppressWarnings("unchecked")
    static Map<String, Object> run(Baseline baseline, Path dir, List<String> stepArgs, int threads, String python)
            throws IOException, InterruptedException {
        String root = System.getProperty("comlrl.root", ".");
        Path script = Path.of(root, "bench", baseline.script());
        if (!Files.isRegularFile(script)) {
            throw new IllegalArgumentException("--compare-pytorch needs " + script + " (run from a checkout)");
        }
        String interpreter = python;
        if (interpreter == null) {
            Path venv = Path.of(root, "bench", ".venv", "bin", "python");
            interpreter = Files.isExecutable(venv) ? venv.toString() : "python3";
        }
        List<String> cmd = new ArrayList<>(List.of(interpreter, script.toString(), "--model-dir", dir.toString()));
        cmd.addAll(stepArgs);
        cmd.addAll(baseline.options());
        ProcessBuilder pb = new ProcessBuilder(cmd);
        for (String variable : List.of("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")) {
            pb.environment().put(variable, "" + threads);
        }
        Process p = pb.redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String stdout = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        int code = p.waitFor();
        if (code != 0) {
            throw new IllegalStateException("PyTorch baseline " + baseline.name() + " (" + String.join(" ", cmd)
                    + ") failed (exit " + code + ")\n(make its environment with: bash bench/setup.sh)");
        }
        Map<String, Object> result = new ObjectMapper().readValue(stdout.substring(stdout.lastIndexOf('\n') + 1),
                Map.class);
        result.put("baseline", baseline.name());
        result.put("baseline_what", baseline.what());
        return result;
    }
}
