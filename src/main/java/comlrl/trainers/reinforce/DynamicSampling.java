package comlrl.trainers.reinforce;

import comlrl.rl.TreeReturns;
import java.util.List;

/**
 * DAPO's dynamic sampling for the MAGRPO family ({@code dynamic_sampling},
 * {@code dynamic_sampling_max_draws}): a task item whose rollout tree carries no learning signal is
 * not buffered, and the next item of the epoch takes its place in the update batch.
 *
 * <p>An item carries no signal when, at every node of its rollout tree, the joint returns of the K
 * joint actions are all equal (and finite):
 * <pre>
 *   drop(item)  ⇔  ∀ node n:  R^n_1 = R^n_2 = … = R^n_K           (R as {@link TreeReturns}, before KL shaping)
 * </pre>
 * Then every agent's returns R_i[k] are equal too (aligned: R_i[k] = R_k; cross: sums of G^{N−1}
 * equal values), so with a group baseline (mean, max, rloo) or scaled advantages ({@code scale_rewards}
 * group or batch) every advantage is 0 and the item adds nothing to the policy gradient; it only
 * dilutes the minibatch mean. With one turn this is DAPO's "all rewards of the group equal" on the
 * root's joint rewards; with several turns an item whose first turn ties but whose later turns
 * differ is kept. The test is on the team's joint returns, not on each agent's, so it holds for every
 * credit assignment (a cross-mode tree whose joint returns differ but whose per-agent sums tie is
 * kept). Reference-KL shaping is not looked at (DAPO filters on rewards as well). A non-finite return
 * keeps the item, so the non-finite checks of the update see it.
 *
 * <p>The cap: at most {@code dynamic_sampling_max_draws} items are dropped per update batch, i.e.
 * between two buffer drains (an epoch's end is one); past it, an all-equal item is buffered and
 * trained on as without dynamic sampling, so updates keep their size and come at least every
 * {@code rollout_buffer_size + max_draws} items (with one turn: one NodeSample per agent per item).
 * null means no cap; 0 drops nothing (the same run as
 * {@code dynamic_sampling: false}). verl calls the cap {@code max_num_gen_batches} and fails when it
 * is reached; here the item is used instead, since the epoch's items are drawn in order anyway.
 *
 * <p>A dropped item's rollouts still count in {@code env_step}. The count starts at 0 every epoch,
 * so a run resumed from a checkpoint (written at an epoch's end) drops exactly what the uninterrupted
 * run dropped.
 */
final class DynamicSampling {
    private final boolean enabled;
    /** null: no cap. */
    private final Integer maxDraws;
    /** Items dropped since the last buffer drain (or the epoch's start). */
    private int dropped;

    DynamicSampling(boolean enabled, Integer maxDraws) {
        this.enabled = enabled;
        this.maxDraws = maxDraws;
    }

    /**
     * Whether the item with these returns is dropped (its team's tree, or with per-agent rewards each
     * agent's own): dynamic sampling is on, every tree's joint returns are all equal at every node ({@link #carriesNoSignal}) and fewer than the cap were dropped since the
     * last drain. A dropped item counts toward the cap.
     */
    boolean drop(List<TreeReturns> returns) {
        if (!enabled || (maxDraws != null && dropped >= maxDraws)
                || !returns.stream().allMatch(DynamicSampling::carriesNoSignal)) {
            return false;
        }
        dropped++;
        return true;
    }

    /** A buffer was drained (an update batch ended): the cap counts afresh. */
    void drained() {
        dropped = 0;
    }

    /** Whether every node's joint returns are finite and all equal: {@code ∀ n: max_k R^n_k = min_k R^n_k}. */
    static boolean carriesNoSignal(TreeReturns node) {
        double[] returns = node.returns(); // [K]
        for (double r : returns) {
            if (!Double.isFinite(r) || r != returns[0]) {
                return false;
            }
        }
        for (TreeReturns child : node.children()) {
            if (!carriesNoSignal(child)) {
                return false;
            }
        }
        return true;
    }
}
