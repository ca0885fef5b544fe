package comlrl.reward;

import comlrl.generation.CausalLm;
import comlrl.generation.PaddedBatch;
import comlrl.model.ModelConfig;
import comlrl.model.SequenceClassifier;
import comlrl.rl.Stats;
import comlrl.tensor.AdamW;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.GradMode;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import comlrl.tokenizer.Tokenizer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.IntStream;

/**
 * MARLHF's joint reward model (reference §6.4): a causal LM backbone with a scalar head
 * {@code Linear(E, 1)} (no bias) on the hidden state of the last non-padding token, scoring the joint
 * text of every agent's prompt and response:
 * <pre>
 *   "Joint multi-agent response\n\nAgent 1 prompt:\n{p_1}\n\nAgent 1 response:\n{c_1}\n\nAgent 2 prompt:\n…"
 * </pre>
 * trained on preference pairs with the Bradley–Terry loss
 * <pre>
 *   L = −(1/|B|) Σ_b log σ(s(w_b) − s(l_b))
 * </pre>
 * by AdamW, optionally with the backbone frozen (only the head trains). It is a Hugging Face
 * sequence-classification model ({@link SequenceClassifier}, one label) with its own tokenizer (pad :=
 * eos when it has none), saved in that layout so that it can be used again as
 * {@code reward: {type: reward_model}} or loaded by transformers.
 */
public final class JointRewardModel implements AutoCloseable {
    private final SequenceClassifier classifier;
    private final Tokenizer tokenizer;
    private final Integer maxLength;
    private final AdamW optimizer;

    private JointRewardModel(SequenceClassifier classifier, Tokenizer tokenizer, boolean freezeBackbone,
            Integer maxLength, double learningRate) {
        this.classifier = classifier;
        this.tokenizer = tokenizer;
        this.maxLength = maxLength;
        List<Tensor> params = new ArrayList<>();
        if (!freezeBackbone) {
            params.addAll(classifier.decoder().parameters());
        } else {
            classifier.decoder().parameters().forEach(p -> p.requiresGrad(false));
        }
        params.add(classifier.scoreWeight().requiresGrad(true));
        this.optimizer = new AdamW(params, learningRate, 0.01);
    }

    /**
     * A reward model on the backbone of the causal LM at {@code source} (a directory, hub id or
     * {@code builtin:NAME}) with a fresh head drawn as PyTorch's {@code nn.Linear} default
     * (uniform in ±1/√E), on {@code device}.
     *
     * @param maxLength tokens kept per text ({@code reward_max_length}), or null for all
     * @param learningRate AdamW's learning rate ({@code reward_learning_rate}; weight decay 0.01)
     */
    public static JointRewardModel fromCausalLm(String source, DType dtype, Device device, long seed,
            boolean freezeBackbone, Integer maxLength, double learningRate) {
        CausalLm lm = CausalLm.load(source, dtype, device);
        try {
            Tokenizer tok = lm.tokenizer();
            long pad = tok.padTokenId() >= 0 ? tok.padTokenId() : tok.eosTokenId();
            if (pad < 0) {
                throw new IllegalArgumentException("The reward model's tokenizer (" + source + ") has neither a pad nor "
                        + "an eos token; give reward_model_name a model whose tokenizer has one");
            }
            ModelConfig config = SequenceClassifier.classifierConfig(lm.model().config(), 1, pad);
            SequenceClassifier classifier;
            try (Scope s = Scope.open(); Rng rng = new Rng(seed)) {
                Map<String, Tensor> weights = new LinkedHashMap<>();
                lm.model().namedParameters().forEach((k, v) -> {
                    if (!k.equals("lm_head.weight")) {
                        weights.put(k, v.detach());
                    }
                });
                long e = config.hiddenSize();
                double bound = 1 / Math.sqrt(e);
                // U(−1/√E, 1/√E): 2·bound·U(0,1) − bound
                Tensor head = Tensor.zerosOf(DType.F32, device, 1, e).uniform_(rng).mul(2 * bound).sub(bound)
                        .to(lm.model().dtype());
                weights.put(SequenceClassifier.SCORE, head);
                classifier = SequenceClassifier.fromWeights(config, weights, lm.model().dtype(), device,
                        source + " (reward model)");
            }
            lm.model().close(); // the classifier holds its own copy; the tokenizer stays with the reward model
            try {
                return new JointRewardModel(classifier, tok, freezeBackbone, maxLength, learningRate);
            } catch (RuntimeException | Error e) {
                classifier.close();
                throw e;
            }
        } catch (RuntimeException | Error e) {
            lm.close();
            throw e;
        }
    }

    /** The joint text of one joint response (agents numbered from 1). */
    public static String jointText(List<String> prompts, List<String> responses) {
        if (prompts.size() != responses.size()) {
            throw new IllegalArgumentException(prompts.size() + " prompts but " + responses.size() + " responses");
        }
        List<String> parts = new ArrayList<>();
        parts.add("Joint multi-agent response");
        for (int i = 0; i < prompts.size(); i++) {
            parts.add("Agent " + (i + 1) + " prompt:\n" + prompts.get(i));
            parts.add("Agent " + (i + 1) + " response:\n" + responses.get(i));
        }
        return String.join("\n\n", parts);
    }

    public SequenceClassifier classifier() {
        return classifier;
    }

    private long[] encode(String text) {
        long[] ids = tokenizer.encode(text, true);
        return maxLength == null || ids.length <= maxLength ? ids : Arrays.copyOf(ids, maxLength);
    }

    /** Scores {@code [B]} of the texts, left-padded; gradients flow unless a no-grad mode is active. */
    private Tensor scores(List<String> texts) {
        List<long[]> ids = texts.stream().map(this::encode).toList();
        PaddedBatch batch = PaddedBatch.leftPadded(ids, classifier.padTokenId(), classifier.device());
        return classifier.logits(batch.ids(), batch.positions(), batch.mask()).select(1, 0).toFloat();
    }

    /** The scores of {@code texts}, in batches of {@code batchSize}, without gradients. */
    public double[] score(List<String> texts, int batchSize) {
        double[] out = new double[texts.size()];
        try (GradMode g = GradMode.noGrad()) {
            for (int from = 0; from < texts.size(); from += batchSize) {
                try (Scope s = Scope.open()) {
                    double[] part = scores(texts.subList(from, Math.min(texts.size(), from + batchSize))).toDoubleArray();
                    System.arraycopy(part, 0, out, from, part.length);
                }
            }
        }
        return out;
    }

    /**
     * The Bradley–Terry loss of one batch, differentiable in the model's parameters:
     * <pre>
     *   z_b = s(w_b) − s(l_b)
     *   L   = −(1/|B|) Σ_b log σ(z_b)              log σ stable ({@link Tensor#logSigmoid}): finite for any z
     *   ∂L/∂s(w_b) = −σ(−z_b) / |B| = −∂L/∂s(l_b)
     * </pre>
     * (the naive {@code log(1 + e^{−z})} overflows in float32 once −z &gt; 88, and its gradient is NaN).
     */
    static Tensor bradleyTerry(Tensor winnerScores, Tensor loserScores) {
        Tensor margins = winnerScores.sub(loserScores);      // z_b = s(w_b) − s(l_b)   [B]
        return margins.logSigmoid().mean().neg();            // −mean log σ(z_b)
    }

    /**
     * Trains on pairs (winner text beats loser text): {@code epochs} passes over the pairs shuffled by
     * a generator seeded by {@code seed}, one AdamW step per batch of {@code batchSize} (the other
     * overload tells {@code pairsDone} each batch's pairs). Returns each epoch's mean loss; fails on a
     * non-finite loss or gradient before any step uses it.
     */
    public double[] train(List<String> winners, List<String> losers, int epochs, int batchSize, long seed) {
        return train(winners, losers, epochs, batchSize, seed, pairs -> { });
    }

    public double[] train(List<String> winners, List<String> losers, int epochs, int batchSize, long seed,
            java.util.function.IntConsumer pairsDone) {
        if (winners.size() != losers.size() || winners.isEmpty()) {
            throw new IllegalArgumentException("the reward model trains on pairs: " + winners.size() + " winners and "
                    + losers.size() + " losers");
        }
        List<Integer> order = new ArrayList<>(IntStream.range(0, winners.size()).boxed().toList());
        Random shuffle = new Random(seed);
        double[] epochLoss = new double[epochs];
        for (int epoch = 0; epoch < epochs; epoch++) {
            Collections.shuffle(order, shuffle);
            double sum = 0;
            int batches = 0;
            for (int from = 0; from < order.size(); from += batchSize) {
                List<Integer> idx = order.subList(from, Math.min(order.size(), from + batchSize));
                optimizer.zeroGrad();
                double loss;
                try (Scope s = Scope.open()) {
                    Tensor l = bradleyTerry(scores(idx.stream().map(winners::get).toList()),
                            scores(idx.stream().map(losers::get).toList()));
                    loss = l.item();
                    if (!Double.isFinite(loss)) {
                        optimizer.zeroGrad();
                        throw new IllegalStateException("Reward model training stopped: the Bradley-Terry loss is "
                                + loss + "; no step used it; lower reward_learning_rate");
                    }
                    l.backward();
                }
                if (!optimizer.gradientsFinite()) {
                    optimizer.zeroGrad();
                    throw new IllegalStateException("Reward model training stopped: a gradient is not finite; "
                            + "no step used it; lower reward_learning_rate");
                }
                optimizer.step();
                optimizer.zeroGrad();
                sum += loss;
                batches++;
                pairsDone.accept(idx.size());
            }
            epochLoss[epoch] = sum / batches;
        }
        return epochLoss;
    }

    /** The pair accuracy {@code (1/|B|) Σ_b [s(w_b) > s(l_b)]} ({@link Stats#pairAccuracy}). */
    public double accuracy(List<String> winners, List<String> losers, int batchSize) {
        return Stats.pairAccuracy(score(winners, batchSize), score(losers, batchSize));
    }

    /** Its AdamW (the trained parameters' moments and step counts). */
    public AdamW optimizer() {
        return optimizer;
    }

    /** Overwrites the weights with those of a directory written by {@link #save} (a checkpoint). */
    public void loadWeights(Path dir) {
        classifier.loadParameters(dir);
    }

    /** Saves a Hugging Face sequence-classification directory with its tokenizer, all at once (atomically). */
    public void save(Path dir) {
        comlrl.model.io.ModelDirs.replace(dir, fresh -> {
            classifier.writeFiles(fresh, CausalLm.MAX_SHARD_BYTES);
            tokenizer.save(fresh);
        });
    }

    @Override
    public void close() {
        optimizer.close();
        classifier.close();
        tokenizer.close();
    }
}
