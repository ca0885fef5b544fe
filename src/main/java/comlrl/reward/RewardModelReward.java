package comlrl.reward;

import comlrl.data.TaskItem;
import comlrl.generation.CausalLm;
import comlrl.generation.PaddedBatch;
import comlrl.model.SequenceClassifier;
import comlrl.model.io.ModelSources;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Engine;
import comlrl.tensor.GradMode;
import comlrl.tensor.Scope;
import comlrl.tokenizer.Tokenizer;
import comlrl.utils.Formatter;
import comlrl.utils.TemplateFormatter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Scores joint responses with an existing LLM reward model (config {@code type: reward_model}): a
 * Hugging Face sequence-classification checkpoint ({@link SequenceClassifier}) read from a model
 * directory or hub id, with its own tokenizer, as the seed documentation's
 * {@code AutoModelForSequenceClassification} example does:
 * <pre>
 *   text_k   = template(item, completion_0 = c_{0,k}, completion_1 = c_{1,k}, ...)
 *   ids_k    = tokenizer(text_k, add_special_tokens=True, truncation=True, max_length)
 *   reward_k = model(ids).logits[k, label]
 * </pre>
 * One reward per joint response k (K = the number of completions per agent).
 *
 * <p><b>Template.</b> {@link TemplateFormatter} syntax over the task item's fields plus
 * {@code {completion_0}}, {@code {completion_1}}, ... (agent i's completion; these override item
 * fields of the same name): e.g. <code>"{prompt}\n\nBrief: {completion_0}\n\nDetailed:
 * {completion_1}"</code>. Without one, the item's {@code prompt} and each completion, separated by
 * blank lines.
 *
 * <p><b>Tokens.</b> Special tokens are added as {@code tokenizer(text)} adds them; a text longer than
 * {@code max_length} tokens keeps its first tokens and the special tokens (transformers'
 * {@code truncation=True} with the default right truncation side). Texts are scored
 * {@code batch_size} at a time, left-padded with config.json's {@code pad_token_id} (each text at the
 * positions it has alone), and pooled at the last token that is not the pad id, as transformers
 * pools; a model without a {@code pad_token_id} is scored one text at a time (transformers refuses
 * batches without one).
 *
 * <p><b>Lifetime.</b> Nothing heavy happens at construction: the source and the checkpoint's
 * config, labels and {@code score.weight} are checked (for a local directory), and the weights and
 * tokenizer load at the first {@link #score} call. The model runs in inference mode and is never
 * updated. Calls are serialised ({@code synchronized}). Close it to free the model.
 */
public final class RewardModelReward implements RewardFunction, AutoCloseable {
    /** Default {@code batch_size}: texts per forward pass. */
    public static final int DEFAULT_BATCH_SIZE = 8;
    /** Default {@code max_length}: tokens kept per text. */
    public static final int DEFAULT_MAX_LENGTH = 1024;

    private static final Pattern COMPLETION = Pattern.compile("completion_(\\d+)");

    private final String source;
    private final Path directory;          // null for a hub id until loaded
    private final TemplateFormatter template; // null: prompt and completions separated by blank lines
    private final Object label;
    private final Device device;
    private final DType dtype;             // null: config.json's torch_dtype
    private final int batchSize;
    private final int maxLength;

    private SequenceClassifier model;      // loaded on first use
    private Tokenizer tokenizer;
    private int labelIndex = -1;
    private boolean closed;

    private RewardModelReward(Builder b) {
        this.source = b.model;
        this.template = b.template == null ? null : Formatter.template(b.template);
        this.label = b.label;
        this.device = b.device;
        this.dtype = b.dtype;
        this.batchSize = b.batchSize;
        this.maxLength = b.maxLength;
        if (template != null) {
            for (String field : template.placeholders()) {
                if (field.startsWith("completion") && !COMPLETION.matcher(field).matches()) {
                    throw new IllegalArgumentException("reward_model template placeholder {" + field + "} is not a "
                            + "completion: write {completion_0}, {completion_1}, ... (one per agent, from 0)");
                }
            }
        }
        if (batchSize < 1) {
            throw new IllegalArgumentException("reward_model batch_size must be at least 1, got " + batchSize);
        }
        if (maxLength < 1) {
            throw new IllegalArgumentException("reward_model max_length must be at least 1, got " + maxLength);
        }
        if (device.isCuda()) {
            Engine.checkDevice(device);
        }
        this.directory = localDirectory(source);
        if (directory != null) {
            SequenceClassifier.Description d = SequenceClassifier.describe(directory);
            this.labelIndex = SequenceClassifier.labelIndex(label, d.labels(), "reward_model " + source);
            if (!java.nio.file.Files.isRegularFile(directory.resolve(Tokenizer.TOKENIZER_FILE))) {
                throw new IllegalArgumentException("reward_model " + source + " has no " + Tokenizer.TOKENIZER_FILE
                        + ": the reward model is scored with its own tokenizer; save it beside the weights "
                        + "(transformers: AutoTokenizer.from_pretrained(...).save_pretrained(dir))");
            }
        }
    }

    /** A builder for the reward model at {@code model}: a model directory or a hub id. */
    public static Builder builder(String model) {
        return new Builder(model);
    }

    /** Whether the weights have been loaded (at the first {@link #score} call). */
    public synchronized boolean isLoaded() {
        return model != null;
    }

    /** The source as given (directory or hub id). */
    public String source() {
        return source;
    }

    @Override
    public synchronized List<Double> score(List<List<String>> agentCompletions, List<TaskItem> batchItems) {
        List<String> texts = texts(agentCompletions, batchItems);
        ensureLoaded();
        List<long[]> ids = new ArrayList<>(texts.size());
        for (String text : texts) {
            ids.add(encode(text));
        }
        int step = model.padTokenId() < 0 ? 1 : batchSize;
        int labels = model.numLabels();
        List<Double> rewards = new ArrayList<>(texts.size());
        try (GradMode g = GradMode.inference()) {
            for (int from = 0; from < ids.size(); from += step) {
                try (Scope s = Scope.open()) {
                    // left-padded with the pad id the model pools by; positions as each text has alone
                    PaddedBatch batch = PaddedBatch.leftPadded(ids.subList(from, Math.min(ids.size(), from + step)),
                            model.padTokenId(), model.device());
                    double[] logits = model.logits(batch.ids(), batch.positions(), batch.mask()).toDoubleArray(); // [b, C]
                    for (int row = 0; row < batch.batchSize(); row++) {
                        rewards.add(logits[row * labels + labelIndex]);
                    }
                }
            }
        }
        return rewards;
    }

    /** The texts the reward model scores, one per joint response (the template filled in). */
    public List<String> texts(List<List<String>> agentCompletions, List<TaskItem> batchItems) {
        int k = RewardFunctions.jointResponseCount(agentCompletions);
        int agents = agentCompletions.size();
        if (template != null) {
            for (String field : template.placeholders()) {
                Matcher m = COMPLETION.matcher(field);
                if (m.matches() && Long.parseLong(m.group(1)) >= agents) {
                    throw new IllegalArgumentException("reward_model template uses {" + field + "} but there "
                            + (agents == 1 ? "is 1 agent ({completion_0})" : "are " + agents + " agents ({completion_0} .. {completion_"
                            + (agents - 1) + "})") + "; template: \"" + template.template() + "\"");
                }
            }
        }
        List<String> texts = new ArrayList<>(k);
        for (int j = 0; j < k; j++) {
            TaskItem item = RewardFunctions.itemFor(batchItems, j, k);
            for (int i = 0; i < agents; i++) {
                item = item.with("completion_" + i, agentCompletions.get(i).get(j));
            }
            texts.add(template != null ? fill(template, item) : defaultText(item, agents));
        }
        return texts;
    }

    private static String fill(TemplateFormatter template, TaskItem item) {
        for (String field : template.placeholders()) {
            if (!item.has(field)) {
                throw new IllegalArgumentException("reward_model template placeholder {" + field + "} names a field "
                        + "the task item does not have; fields present: " + item.asMap().keySet() + " (template: \""
                        + template.template() + "\")");
            }
        }
        return template.format(item);
    }

    private static String defaultText(TaskItem item, int agents) {
        StringBuilder text = new StringBuilder(item.getString("prompt", ""));
        for (int i = 0; i < agents; i++) {
            text.append(text.length() == 0 ? "" : "\n\n").append(item.getString("completion_" + i, ""));
        }
        return text.toString();
    }

    /**
     * {@code tokenizer(text, truncation=True, max_length=maxLength).input_ids}: with special tokens;
     * a longer text keeps its leading and trailing special tokens and the first content tokens.
     */
    private long[] encode(String text) {
        long[] ids = tokenizer.encode(text, true);
        if (ids.length <= maxLength) {
            return ids;
        }
        long[] plain = tokenizer.encode(text, false);
        int specials = ids.length - plain.length;
        int prefix = indexOf(ids, plain);
        if (prefix < 0) {
            return java.util.Arrays.copyOf(ids, maxLength);
        }
        int keep = maxLength - specials;
        if (keep < 0) {
            throw new IllegalArgumentException("reward_model max_length " + maxLength + " leaves no room for the "
                    + specials + " special tokens " + source + "'s tokenizer adds; raise max_length");
        }
        long[] out = new long[maxLength];
        System.arraycopy(ids, 0, out, 0, prefix);
        System.arraycopy(plain, 0, out, prefix, keep);
        System.arraycopy(ids, prefix + plain.length, out, prefix + keep, specials - prefix);
        return out;
    }

    private static int indexOf(long[] haystack, long[] needle) {
        outer:
        for (int p = 0; p + needle.length <= haystack.length; p++) {
            for (int i = 0; i < needle.length; i++) {
                if (haystack[p + i] != needle[i]) {
                    continue outer;
                }
            }
            return p;
        }
        return -1;
    }

    private void ensureLoaded() {
        if (closed) {
            throw new IllegalStateException("reward_model " + source + " is closed");
        }
        if (model != null) {
            return;
        }
        Path dir = directory != null ? directory : ModelSources.resolve(source);
        Tokenizer tok = Tokenizer.load(dir);
        try {
            SequenceClassifier loaded = SequenceClassifier.load(dir, dtype, device);
            try {
                CausalLm.requireVocabularyFits(tok, loaded.config(), dir);
                int index = SequenceClassifier.labelIndex(label, loaded.labels(), "reward_model " + source);
                loaded.namedParameters().values().forEach(p -> p.requiresGrad(false));
                this.labelIndex = index;
                this.model = loaded;
                this.tokenizer = tok;
            } catch (RuntimeException e) {
                loaded.close();
                throw e;
            }
        } catch (RuntimeException e) {
            tok.close();
            throw e;
        }
    }

    /** Frees the model and tokenizer (if loaded); later calls fail. Idempotent. */
    @Override
    public synchronized void close() {
        closed = true;
        if (model != null) {
            model.close();
            tokenizer.close();
            model = null;
            tokenizer = null;
        }
    }

    @Override
    public String toString() {
        return "RewardModelReward[" + source + ", label " + label + "]";
    }

    /** Settings of a {@link RewardModelReward}; each setter documents its default. */
    public static final class Builder {
        private final String model;
        private String template;
        private Object label = 0;
        private Device device = Device.CPU;
        private DType dtype;
        private int batchSize = DEFAULT_BATCH_SIZE;
        private int maxLength = DEFAULT_MAX_LENGTH;

        private Builder(String model) {
            if (model == null || model.isBlank()) {
                throw new IllegalArgumentException("reward_model needs 'model': a sequence-classification model "
                        + "directory or a hub id");
            }
            this.model = model;
        }

        /**
         * The scored text, over item fields and {@code {completion_i}}; default (null): the item's
         * {@code prompt} and each completion, separated by blank lines.
         */
        public Builder template(String template) {
            this.template = template;
            return this;
        }

        /** The logit column used as the reward: an index or a name from {@code id2label}; default 0. */
        public Builder label(Object label) {
            this.label = Objects.requireNonNull(label, "label");
            return this;
        }

        /** Where the model runs; default cpu. */
        public Builder device(Device device) {
            this.device = Objects.requireNonNull(device, "device");
            return this;
        }

        /** The weights' dtype; default (null) the checkpoint's {@code torch_dtype}. */
        public Builder dtype(DType dtype) {
            this.dtype = dtype;
            return this;
        }

        /** Texts per forward pass; default {@value #DEFAULT_BATCH_SIZE}. */
        public Builder batchSize(int batchSize) {
            this.batchSize = batchSize;
            return this;
        }

        /** Tokens kept per text (truncation); default {@value #DEFAULT_MAX_LENGTH}. */
        public Builder maxLength(int maxLength) {
            this.maxLength = maxLength;
            return this;
        }

        /**
         * Checks the settings and, for a local directory, the checkpoint's config, labels and
         * {@code score.weight} (headers only); loads nothing.
         */
        public RewardModelReward build() {
            return new RewardModelReward(this);
        }
    }

    /** The directory {@code source} names, or null for a hub id. */
    private static Path localDirectory(String source) {
        Path p;
        try {
            p = Path.of(source);
        } catch (java.nio.file.InvalidPathException e) {
            return null;
        }
        if (java.nio.file.Files.isDirectory(p)) {
            return p;
        }
        boolean pathLike = source.startsWith("/") || source.startsWith(".") || source.startsWith("~")
                || source.split("/").length > 2;
        if (pathLike) {
            throw new IllegalArgumentException("reward_model model directory not found: " + source
                    + " (relative paths are resolved against the config file's directory; give an existing "
                    + "directory or a hub id like org/reward-model)");
        }
        return null;
    }
}
