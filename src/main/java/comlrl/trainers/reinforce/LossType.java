package comlrl.trainers.reinforce;

import comlrl.utils.ConfigName;

/**
 * {@code loss_type}: how the per-token terms of a minibatch B are aggregated into L_B, named as TRL's
 * GRPOConfig does. Each is {@link MAGRPOLoss}'s weighted log-likelihood
 * {@code L_B = Σ_{s∈B} Σ_k w_{s,k} Σ_t log π(y_{s,k,t})}, {@code w_{s,k} = −A_{s,k} / D_{s,k}}, differing
 * only in the divisor D ({@link #weight}). Counted over the completions in the loss: M_s completions of
 * sample s, |y| a completion's tokens, T_s = Σ_k |y_{s,k}|, T_B = Σ_s T_s, L = {@code max_new_tokens};
 * each count at least 1.
 *
 * <p>A NodeSample is TRL's micro-batch (one forward and backward) and B its accumulated batch (one
 * optimizer step): hence {@link #BNPO} normalises per sample and {@link #DAPO} over the minibatch, as
 * TRL's {@code bnpo} and {@code dapo} ({@code num_items_in_batch}) do.
 */
public enum LossType implements ConfigName {
    /** The reference's (§3.3) and the default: token sum, mean over completions and samples. D = M_s·|B|. */
    SEQUENCE_SUM,
    /** GRPO: each completion's token mean, mean over completions and samples. D = |y_{s,k}|·M_s·|B|. */
    GRPO,
    /** Dr. GRPO: token sum over a constant, the completions' token budget. D = M_s·L·|B|. */
    DR_GRPO,
    /** DAPO: token mean over every token of the minibatch (a long completion weighs by its length). D = T_B. */
    DAPO,
    /** BNPO: token mean over each sample's tokens, mean over samples. D = T_s·|B|. */
    BNPO;

    /**
     * w = −a / D of a completion in the loss with advantage {@code a}: {@code m} = M_s, {@code length} =
     * |y_{s,k}|, {@code groupTokens} = T_s, {@code batchTokens} = T_B, {@code batchSize} = |B|,
     * {@code maxNewTokens} = L (all ≥ 1).
     */
    double weight(double a, int m, int length, int groupTokens, int batchTokens, int batchSize, int maxNewTokens) {
        return switch (this) {
            case SEQUENCE_SUM -> -a / m / batchSize; // two divisions, as the reference divides
            case GRPO -> -a / length / m / batchSize;
            case DR_GRPO -> -a / m / maxNewTokens / batchSize;
            case DAPO -> -a / batchTokens;
            case BNPO -> -a / groupTokens / batchSize;
        };
    }

    /** Parses a config value (case and blanks ignored; null = sequence_sum); an unknown one fails. */
    public static LossType parse(String value) {
        return comlrl.utils.ConfigNames.parse("loss_type", value, SEQUENCE_SUM, values(), LossType::configName, "");
    }

    @Override
    public String toString() {
        return configName();
    }
}
