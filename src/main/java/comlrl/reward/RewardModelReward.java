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
 * <p><b>Per agent</b> ({@code per_agent: true}, {@link Builder#perAgent}): the model scores each agent's
 * completion on its own, one text per agent and joint response, and {@link #agentRewards()} gives the
 * scores as per-agent rewards ({@link AgentRewardFunction}: N values per joint response):
 * <pre>
 *   text_{i,k}   = template_i(item, completion = c_{i,k}, completion_0 = c_{0,k}, ...)
 *   reward_{i,k} = model(tokenizer(text_{i,k})).logits[label]
 * </pre>
 * {@code template_i} is the template, or agent i's entry of a list of templates (one per agent, e.g.
 * <code>["{prompt}

Brief: {completion}", "{prompt}

Detailed: {completion}"]</code>); without
 * one, the item's {@code prompt} and the agent's completion, separated by a blank line. The team reward
 * ({@link #score}) is then the agents' mean, as {@link AgentRewardFunction} defines it.
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
    private final List<TemplateFormatter> agentTemplates; // per agent (per_agent with a list); else null
    private final boolean perAgent;
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
        this.perAgent = b.perAgent;
        if (b.agentTemplates != null && !perAgent) {
            throw new IllegalArgumentException("reward_model template is a list (one per agent) but per_agent is false: "
                    + "give one template, or set per_agent: true to score each agent's completion on its own");
        }
        this.template = b.template == null ? null : Formatter.template(b.template);
        this.agentTemplates = b.agentTemplates == null ? null
                : b.agentTemplates.stream().map(Formatter::template).toList();
        this.label = b.label;
        this.device = b.device;
        this.dtype = b.dtype;
        this.batchSize = b.batchSize;
        this.maxLength = b.maxLength;
        List<TemplateFormatter> all = new ArrayList<>(agentTemplates == null ? List.of() : agentTemplates);
        if (template != null) {
            all.add(template);
        }
        for (TemplateFormatter t : all) {
            for (String field : t.placeholders()) {
                boolean own = perAgent && field.equals("completion");
                if (field.startsWith("completion") && !own && !COMPLETION.matcher(field).matches()) {
                    throw new IllegalArgumentException("reward_model template placeholder {" + field + "} is not a "
                            + "completion: write {completion_0}, {completion_1}, ... (one per agent, from 0)"
                            + (perAgent ? ", or {completion} (the scored agent's)" : field.equals("completion")
                            ? "; {completion} (the scored agent's own) needs per_agent: true" : ""));
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

    /** Whether each agent's completion is scored on its own ({@code per_agent}). */
    public boolean isPerAgent() {
        return perAgent;
    }

    /**
     * One reward per joint response: the score of its filled template; per agent, the mean of the
     * agents' scores ({@link AgentRewardFunction#teamMean}).
     */
    @Override
    public synchronized List<Double> score(List<List<String>> agentCompletions, List<TaskItem> batchItems) {
        if (perAgent) {
            return agentRewards().score(agentCompletions, batchItems);
        }
        return scoreTexts(texts(agentCompletions, batchItems));
    }

    /**
     * Per joint response k, the N agents' scores {@code [reward_{0,k}, ..., reward_{N-1,k}]}, each the
     * model's score of that agent's text ({@link #agentTexts}); needs {@code per_agent}.
     */
    public synchronized List<double[]> scorePerAgent(List<List<String>> agentCompletions, List<TaskItem> batchItems) {
        if (!perAgent) {
            throw new IllegalStateException("reward_model " + source + " scores joint responses (per_agent: false)");
        }
        List<List<String>> texts = agentTexts(agentCompletions, batchItems); // [N][K]
        int agents = texts.size();
        int k = agents == 0 ? 0 : texts.get(0).size();
        List<String> flat = new ArrayList<>(agents * k); // agent-major: i·K + k
        texts.forEach(flat::addAll);
        List<Double> scores = scoreTexts(flat);
        List<double[]> rows = new ArrayList<>(k);
        for (int j = 0; j < k; j++) {
            double[] row = new double[agents];
            for (int i = 0; i < agents; i++) {
                row[i] = scores.get(i * k + j);
            }
            rows.add(row);
        }
        return rows;
    }

    /**
     * This reward model as per-agent rewards (needs {@code per_agent}): N values per joint response, each
     * agent's own score; closing it closes this model.
     */
    public AgentRewards agentRewards() {
        if (!perAgent) {
            throw new IllegalStateException("reward_model " + source + " gives per-agent rewards only with per_agent: true");
        }
        return new AgentRewards(this);
    }

    /** A per-agent reward model as an {@link AgentRewardFunction} ({@link #agentRewards()}). */
    public static final class AgentRewards implements AgentRewardFunction, AutoCloseable {
        private final RewardModelReward model;

        private AgentRewards(RewardModelReward model) {
            this.model = model;
        }

        /** The reward model. */
        public RewardModelReward model() {
            return model;
        }

        @Override
        public List<double[]> scorePerAgent(List<List<String>> agentCompletions, List<TaskItem> batchItems) {
            return model.scorePerAgent(agentCompletions, batchItems);
        }

        @Override
        public void close() {
            model.close();
        }

        @Override
        public String toString() {
            return model.toString();
        }
    }

    /** The label's logit of each text, scored {@code batch_size} at a time. */
    private List<Double> scoreTexts(List<String> texts) {
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

    /** Fails when {@code t} names the completion of an agent beyond the {@code agents} there are. */
    private static void checkAgents(TemplateFormatter t, int agents) {
        for (String field : t.placeholders()) {
            Matcher m = COMPLETION.matcher(field);
            if (m.matches() && Long.parseLong(m.group(1)) >= agents) {
                throw new IllegalArgumentException("reward_model template uses {" + field + "} but there "
                        + (agents == 1 ? "is 1 agent ({completion_0})" : "are " + agents + " agents ({completion_0} .. {completion_"
                        + (agents - 1) + "})") + "; template: \"" + t.template() + "\"");
            }
        }
    }

    /** The texts the reward model scores, one per joint response (the template filled in); not per agent. */
    public List<String> texts(List<List<String>> agentCompletions, List<TaskItem> batchItems) {
        int k = RewardFunctions.jointResponseCount(agentCompletions);
        int agents = agentCompletions.size();
        if (template != null) {
            checkAgents(template, agents);
        }
        List<String> texts = new ArrayList<>(k);
        for (int j = 0; j < k; j++) {
            TaskItem item = jointItem(agentCompletions, batchItems, j, k);
            texts.add(template != null ? fill(template, item) : defaultText(item, agents));
        }
        return texts;
    }

    /**
     * The texts the reward model scores per agent ({@code per_agent}): entry [i][k] is agent i's text of
     * joint response k, its template filled with {@code {completion}} = its completion (and
     * {@code {completion_j}} = agent j's); without a template, the item's prompt and the agent's completion.
     */
    public List<List<String>> agentTexts(List<List<String>> agentCompletions, List<TaskItem> batchItems) {
        int k = RewardFunctions.jointResponseCount(agentCompletions);
        int agents = agentCompletions.size();
        if (agentTemplates != null && agentTemplates.size() != agents) {
            throw new IllegalArgumentException("reward_model template is a list of " + agentTemplates.size()
                    + " templates but there are " + agents + " agents: give one template per agent, or one for all");
        }
        List<List<String>> texts = new ArrayList<>(agents);
        for (int i = 0; i < agents; i++) {
            TemplateFormatter own = agentTemplates != null ? agentTemplates.get(i) : template;
            if (own != null) {
                checkAgents(own, agents);
            }
            List<String> agentTexts = new ArrayList<>(k);
            for (int j = 0; j < k; j++) {
                TaskItem item = jointItem(agentCompletions, batchItems, j, k).with("completion",
                        agentCompletions.get(i).get(j));
                agentTexts.add(own != null ? fill(own, item) : defaultAgentText(item));
            }
            texts.add(agentTexts);
        }
        return texts;
    }

    /** Joint response j's task item with {@code {completion_i}} = agent i's completion, for every agent. */
    private static TaskItem jointItem(List<List<String>> agentCompletions, List<TaskItem> batchItems, int j, int k) {
        TaskItem item = RewardFunctions.itemFor(batchItems, j, k);
        for (int i = 0; i < agentCompletions.size(); i++) {
            item = item.with("completion_" + i, agentCompletions.get(i).get(j));
        }
        return item;
    }

    private static String defaultAgentText(TaskItem item) {
        String prompt = item.getString("prompt", "");
        return prompt.isEmpty() ? item.getString("completion", "") : prompt + "\n\n" + item.getString("completion", "");
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
        return "RewardModelReward[" + source + ", label " + label + (perAgent ? ", per agent" : "") + "]";
    }

    /** Settings of a {@link RewardModelReward}; each setter documents its default. */
    public static final class Builder {
        private final String model;
        private String template;
        private List<String> agentTemplates;
        private boolean perAgent;
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

        /**
         * One template per agent (agent i's text at index i), over item fields, {@code {completion}} (the
         * scored agent's) and {@code {completion_j}}; needs {@link #perAgent}; replaces {@link #template}.
         */
        public Builder templatesPerAgent(List<String> templates) {
            this.agentTemplates = List.copyOf(templates);
            this.template = null;
            return this;
        }

        /**
         * Score each agent's completion on its own, N scores per joint response ({@link #agentRewards()});
         * default false (one score of the joint response).
         */
        public Builder perAgent(boolean perAgent) {
            this.perAgent = perAgent;
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
