package comlrl.model;

import comlrl.model.io.ModelDirs;
import comlrl.model.io.Safetensors;
import comlrl.model.io.TorchSave;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.GradMode;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The value head of the actor-critic trainers (the reference's {@code ValueHead}): one value per
 * position from a backbone's final-normed last hidden states {@code h [B, S, E]}.
 * <pre>
 *   without a hidden layer (hiddenDim 0):   V = h·w_vᵀ + b_v                      w_v [1, E]
 *   with hidden width d = hiddenDim > 0:    V = tanh(h·W_pᵀ + b_p)·w_vᵀ + b_v     W_p [d, E], b_p [d], w_v [1, d]
 * </pre>
 * with {@code b_v [1]}, and the last dimension squeezed: values {@code [B, S]}. In PyTorch:
 * {@code value_projection(pre_projection(h)).squeeze(-1)}, {@code pre_projection = Sequential(Linear(E, d), Tanh())},
 * {@code value_projection = Linear(d or E, 1)}; the parameters carry those state-dict names
 * ({@code pre_projection.0.weight}, {@code pre_projection.0.bias}, {@code value_projection.weight},
 * {@code value_projection.bias}).
 *
 * <p>Initialisation as the reference: weights ~ N(0, 0.02), drawn in float32 in registration order
 * (pre-projection first), biases 0; then cast to the backbone's dtype and moved to its device.
 *
 * <p>Files: {@link #save} writes {@value #SAFETENSORS_FILE} and {@value #TORCH_FILE}, a state dict that
 * Python opens with {@code torch.load(path, weights_only=True)}, so that
 * {@code value_head.load_state_dict(torch.load(path, weights_only=True))} restores it there;
 * {@link #restore} and {@link #load} read either file, also one saved by the reference.
 *
 * <p>Owns its parameters: close it.
 */
public final class ValueHead implements AutoCloseable {
    /** The safetensors copy of a saved head (read first when a directory has both). */
    public static final String SAFETENSORS_FILE = "value_head.safetensors";
    /** The PyTorch state dict of a saved head, as the reference names it. */
    public static final String TORCH_FILE = "value_head.pt";

    // ---------------------------------------------------------------- reference state-dict names
    static final String PRE_WEIGHT = "pre_projection.0.weight";
    static final String PRE_BIAS = "pre_projection.0.bias";
    static final String VALUE_WEIGHT = "value_projection.weight";
    static final String VALUE_BIAS = "value_projection.bias";

    /** Standard deviation of the initial weights. */
    static final double INIT_STD = 0.02;

    private final int inputDim;
    private final int hiddenDim;
    private final DType dtype;
    private final Device device;
    private final Map<String, Tensor> parameters; // reference name -> parameter, in registration order
    private final Tensor preWeight;               // [d, E], null without a hidden layer
    private final Tensor preBias;                 // [d]
    private final Tensor valueWeight;             // [1, d or E]
    private final Tensor valueBias;               // [1]

    private ValueHead(int inputDim, int hiddenDim, DType dtype, Device device, Map<String, Tensor> parameters) {
        this.inputDim = inputDim;
        this.hiddenDim = hiddenDim;
        this.dtype = dtype;
        this.device = device;
        this.parameters = parameters;
        this.preWeight = parameters.get(PRE_WEIGHT);
        this.preBias = parameters.get(PRE_BIAS);
        this.valueWeight = parameters.get(VALUE_WEIGHT);
        this.valueBias = parameters.get(VALUE_BIAS);
    }

    /**
     * Every parameter name and shape of a head reading {@code inputDim}-wide hidden states with
     * hidden width {@code hiddenDim} (0 for none), in registration order.
     */
    public static Map<String, long[]> expectedShapes(int inputDim, int hiddenDim) {
        checkWidths(inputDim, hiddenDim);
        Map<String, long[]> s = new LinkedHashMap<>();
        if (hiddenDim > 0) {
            s.put(PRE_WEIGHT, new long[] {hiddenDim, inputDim});
            s.put(PRE_BIAS, new long[] {hiddenDim});
        }
        s.put(VALUE_WEIGHT, new long[] {1, hiddenDim > 0 ? hiddenDim : inputDim});
        s.put(VALUE_BIAS, new long[] {1});
        return s;
    }

    private static void checkWidths(int inputDim, int hiddenDim) {
        if (inputDim < 1) {
            throw new IllegalArgumentException("A value head needs the backbone's hidden size (>= 1), got " + inputDim);
        }
        if (hiddenDim < 0) {
            throw new IllegalArgumentException("A value head's hidden width (value_head_hidden_dim, "
                    + "critic_value_head_hidden_dim) must be positive, or unset/0 for none; got " + hiddenDim);
        }
    }

    /**
     * A freshly initialised head: weights ~ N(0, 0.02) drawn from {@code rng}, biases 0.
     *
     * @param inputDim the backbone's hidden size E
     * @param hiddenDim the hidden width d, or 0 for a single {@code Linear(E, 1)}
     */
    public static ValueHead create(int inputDim, int hiddenDim, DType dtype, Device device, Rng rng) {
        Map<String, Tensor> params = new LinkedHashMap<>();
        try (Scope s = Scope.open()) {
            for (Map.Entry<String, long[]> e : expectedShapes(inputDim, hiddenDim).entrySet()) {
                Tensor t = e.getKey().endsWith(".bias") ? Tensor.zerosOf(dtype, device, e.getValue())
                        : Tensor.randn(rng, INIT_STD, dtype, device, e.getValue());
                params.put(e.getKey(), t.contiguous().detach().requiresGrad(true).keep());
            }
        }
        return new ValueHead(inputDim, hiddenDim, dtype, device, params);
    }

    /** As {@link #create(int, int, DType, Device, Rng)} with a generator seeded with {@code seed}. */
    public static ValueHead create(int inputDim, int hiddenDim, DType dtype, Device device, long seed) {
        try (Rng rng = new Rng(seed)) {
            return create(inputDim, hiddenDim, dtype, device, rng);
        }
    }

    /** A fresh head for {@code backbone}: its hidden size, dtype and device. */
    public static ValueHead forBackbone(DecoderLm backbone, int hiddenDim, Rng rng) {
        return create(backbone.config().hiddenSize(), hiddenDim, backbone.dtype(), backbone.device(), rng);
    }

    /**
     * A head with the widths given, holding the values saved at {@code fileOrDir} (see
     * {@link #restore}); fails as {@link #restore} does.
     */
    public static ValueHead load(Path fileOrDir, int inputDim, int hiddenDim, DType dtype, Device device) {
        Map<String, Tensor> params = new LinkedHashMap<>();
        try (Scope s = Scope.open()) {
            expectedShapes(inputDim, hiddenDim).forEach((name, shape) ->
                    params.put(name, Tensor.zerosOf(dtype, device, shape).requiresGrad(true).keep()));
        }
        ValueHead head = new ValueHead(inputDim, hiddenDim, dtype, device, params);
        try {
            head.restore(fileOrDir);
        } catch (RuntimeException e) {
            head.close();
            throw e;
        }
        return head;
    }

    public int inputDim() {
        return inputDim;
    }

    /** The hidden width d; 0 when the head is a single {@code Linear(E, 1)}. */
    public int hiddenDim() {
        return hiddenDim;
    }

    public DType dtype() {
        return dtype;
    }

    public Device device() {
        return device;
    }

    /** Trainable parameters by reference state-dict name, in registration order. */
    public Map<String, Tensor> namedParameters() {
        return Collections.unmodifiableMap(parameters);
    }

    /** The trainable parameters in registration order (for {@link comlrl.tensor.AdamW}). */
    public List<Tensor> parameters() {
        return new ArrayList<>(parameters.values());
    }

    /**
     * The values of hidden states, differentiable in both the hidden states and the parameters.
     *
     * @param hidden {@code [B, S, E]} (any leading shape {@code [..., E]}) in this head's dtype, on its device
     * @return {@code [B, S]} (the leading shape)
     */
    public Tensor forward(Tensor hidden) {
        if (hidden.dim() < 1 || hidden.size(-1) != inputDim) {
            throw new IllegalArgumentException("This value head reads hidden states [..., " + inputDim + "], got "
                    + Arrays.toString(hidden.shape()) + ": create the head with the backbone's hidden size");
        }
        if (hidden.dtype() != dtype) {
            throw new IllegalArgumentException("The hidden states are " + hidden.dtype().torchName() + " but the value "
                    + "head is " + dtype.torchName() + ": create the head in the backbone's dtype");
        }
        Tensor features = preWeight == null ? hidden : hidden.linear(preWeight, preBias).tanh(); // [B, S, d or E]
        return features.linear(valueWeight, valueBias).squeeze(-1);                             // [B, S]
    }

    /**
     * The value at one position per row, {@code values[b, positions[b]]}, i.e.
     * {@code values.gather(1, positions.view(B, 1)).squeeze(1)}; differentiable (the gradient
     * reaches the picked positions only).
     *
     * @param values {@code [B, S]}
     * @param positions B positions, each in {@code [0, S)}
     * @return {@code [B]}
     */
    public static Tensor valuesAt(Tensor values, long[] positions) {
        if (values.dim() != 2 || values.size(0) != positions.length) {
            throw new IllegalArgumentException("valuesAt takes values [B, S] and B positions, got values "
                    + Arrays.toString(values.shape()) + " and " + positions.length + " positions");
        }
        long s = values.size(1);
        for (int b = 0; b < positions.length; b++) {
            if (positions[b] < 0 || positions[b] >= s) {
                throw new IllegalArgumentException("Position " + positions[b] + " of row " + b + " is outside the "
                        + s + " positions of the values");
            }
        }
        Tensor index = Tensor.ofLongs(positions, values.device(), positions.length, 1); // [B, 1]
        return values.gather(1, index).squeeze(1);                                      // [B]
    }

    // ---------------------------------------------------------------- files

    /**
     * Writes {@value #SAFETENSORS_FILE} and {@value #TORCH_FILE} into {@code dir} (created if
     * needed), in this head's dtype, both or neither ({@link ModelDirs#replaceFiles}): a failed write
     * (a full disk) leaves the previous files whole; the directory's other files stay as they are.
     *
     * @throws java.io.UncheckedIOException naming the file when a write fails
     */
    public void save(Path dir) {
        ModelDirs.replaceFiles(dir, this::writeFiles);
    }

    /**
     * Writes {@value #SAFETENSORS_FILE} and {@value #TORCH_FILE} into {@code dir}, file by file (for
     * assembling a larger set of files inside {@link ModelDirs#replaceFiles}).
     */
    public void writeFiles(Path dir) {
        try (Scope s = Scope.open()) {
            Map<String, Tensor> detached = new LinkedHashMap<>();
            parameters.forEach((name, p) -> detached.put(name, p.detach()));
            Safetensors.save(detached, dir.resolve(SAFETENSORS_FILE));
            TorchSave.save(detached, dir.resolve(TORCH_FILE));
        }
    }

    /**
     * Copies the values saved at {@code fileOrDir} into this head, in place (the reference's
     * {@code value_head.load_state_dict(torch.load(path, weights_only=True))}). A directory is read
     * from {@value #SAFETENSORS_FILE}, else {@value #TORCH_FILE}; a file by its extension
     * ({@code .safetensors}, else a {@code torch.save} archive). Fails, naming the file, the saved
     * shape and the expected one, when the saved head has another hidden width or input size than
     * this one, or another set of tensors, or non-finite values; this head is then unchanged.
     */
    public void restore(Path fileOrDir) {
        Path file = savedFile(fileOrDir);
        Map<String, Tensor> saved = file.getFileName().toString().endsWith(".safetensors") ? Safetensors.load(file)
                : TorchSave.load(file);
        try {
            loadStateDict(saved, file.toString());
        } finally {
            saved.values().forEach(Tensor::close);
        }
    }

    private static Path savedFile(Path fileOrDir) {
        if (Files.isDirectory(fileOrDir)) {
            for (String name : new String[] {SAFETENSORS_FILE, TORCH_FILE}) {
                if (Files.isRegularFile(fileOrDir.resolve(name))) {
                    return fileOrDir.resolve(name);
                }
            }
            throw new IllegalArgumentException(fileOrDir + " holds neither " + SAFETENSORS_FILE + " nor " + TORCH_FILE
                    + ": point to the directory a value head was saved in (an agent's or critic's directory)");
        }
        if (!Files.isRegularFile(fileOrDir)) {
            throw new IllegalArgumentException("No value head at " + fileOrDir + ": no such file or directory");
        }
        return fileOrDir;
    }

    /**
     * Copies {@code state} (reference names to tensors of any floating dtype and device) into this
     * head, in place, after the checks of {@link #restore}; {@code source} names the origin in messages.
     */
    public void loadStateDict(Map<String, Tensor> state, String source) {
        Map<String, long[]> shapes = new LinkedHashMap<>();
        state.forEach((name, t) -> shapes.put(name, t.shape()));
        checkShapes(shapes, source);
        try (Scope s = Scope.open()) {
            for (Map.Entry<String, Tensor> e : state.entrySet()) {
                Tensor t = e.getValue();
                if (!t.dtype().isFloatingPoint()) {
                    throw new IllegalArgumentException(source + ": tensor '" + e.getKey() + "' is "
                            + t.dtype().torchName() + ", not a floating-point type: this is not a saved value head");
                }
                if (!t.allFinite()) {
                    throw new IllegalArgumentException(source + ": tensor '" + e.getKey() + "' holds NaN or infinite "
                            + "values: the file is corrupt or training diverged; restore an earlier save");
                }
            }
            try (GradMode g = GradMode.noGrad()) {
                parameters.forEach((name, p) -> p.copy_(state.get(name)));
            }
        }
    }

    /** Widths first (the likely mistake, with its fix), then every name and shape. */
    private void checkShapes(Map<String, long[]> saved, String source) {
        long[] value = saved.get(VALUE_WEIGHT);
        if (value == null || !saved.containsKey(VALUE_BIAS)) {
            throw new IllegalArgumentException(source + " holds no value head: '" + (value == null ? VALUE_WEIGHT
                    : VALUE_BIAS) + "' is missing (it holds " + describe(saved) + ")");
        }
        long[] pre = saved.get(PRE_WEIGHT);
        if (value.length == 2 && (pre == null || pre.length == 2)) {
            long savedHidden = pre == null ? 0 : pre[0];
            String key = pre == null ? VALUE_WEIGHT : PRE_WEIGHT;
            long[] shape = pre == null ? value : pre;
            long savedInput = shape[1];
            if (savedInput != inputDim) {
                throw new IllegalArgumentException(source + ": the saved value head reads hidden states of size "
                        + savedInput + " ('" + key + "' " + Arrays.toString(shape) + ") but this backbone's hidden size "
                        + "is " + inputDim + " (expected '" + key + "' " + Arrays.toString(expected(key)) + "): the head "
                        + "was saved with another model; load it with the backbone of the saved run");
            }
            if (savedHidden != hiddenDim) {
                throw new IllegalArgumentException(widthMismatch(source, savedHidden, key, shape));
            }
        }
        Map<String, long[]> expected = expectedShapes(inputDim, hiddenDim);
        for (Map.Entry<String, long[]> e : expected.entrySet()) {
            long[] s = saved.get(e.getKey());
            if (s == null || !Arrays.equals(s, e.getValue())) {
                throw new IllegalArgumentException(source + ": tensor '" + e.getKey() + "' is "
                        + (s == null ? "missing" : "of shape " + Arrays.toString(s)) + "; this value head (hidden size "
                        + inputDim + ", hidden width " + hiddenDim + ") expects " + Arrays.toString(e.getValue()));
            }
        }
        List<String> unexpected = new ArrayList<>(saved.keySet());
        unexpected.removeAll(expected.keySet());
        if (!unexpected.isEmpty()) {
            throw new IllegalArgumentException(source + " holds tensors a value head does not have: "
                    + String.join(", ", unexpected) + "; it is not a saved value head");
        }
    }

    private long[] expected(String key) {
        return key.equals(PRE_WEIGHT) ? new long[] {hiddenDim, inputDim}
                : new long[] {1, hiddenDim > 0 ? hiddenDim : inputDim};
    }

    private String widthMismatch(String source, long savedHidden, String savedKey, long[] savedShape) {
        String saved = savedHidden == 0 ? "has no hidden layer" : "has hidden width " + savedHidden;
        String ours = hiddenDim == 0 ? "this head has no hidden layer" : "this head has hidden width " + hiddenDim;
        String ourKey = hiddenDim == 0 ? VALUE_WEIGHT : PRE_WEIGHT;
        String fix = savedHidden == 0
                ? "unset value_head_hidden_dim (critic_value_head_hidden_dim for a separate critic)"
                : "set value_head_hidden_dim: " + savedHidden + " (critic_value_head_hidden_dim: " + savedHidden
                        + " for a separate critic)";
        return source + ": the saved value head " + saved + " ('" + savedKey + "' " + Arrays.toString(savedShape)
                + ") but " + ours + " (expected '" + ourKey + "' " + Arrays.toString(expected(ourKey)) + "); " + fix
                + " as in the saved run";
    }

    private static String describe(Map<String, long[]> shapes) {
        if (shapes.isEmpty()) {
            return "no tensors";
        }
        List<String> parts = new ArrayList<>();
        shapes.forEach((name, shape) -> parts.add(name + " " + Arrays.toString(shape)));
        return String.join(", ", parts.subList(0, Math.min(5, parts.size()))) + (parts.size() > 5 ? ", ..." : "");
    }

    @Override
    public void close() {
        parameters.values().forEach(Tensor::close);
    }
}
