package comlrl.rl;

import java.util.Arrays;
import java.util.List;

/**
 * DAPO's dynamic sampling for the MAGRPO family ({@code dynamic_sampling}, {@code dynamic_sampling_max_draws}):
 * a task item whose rollout tree carries no learning signal is not buffered, and the next item of the
 * epoch takes its place in the update batch. An item carries no signal when at every node the joint
 * returns of the K joint actions are all equal (and finite):
 * <pre>
 *   drop(item)  ⇔  ∀ node n:  R^n_1 = R^n_2 = … = R^n_K           (R as {@link TreeReturns}, before KL shaping)
 * </pre>
 * Then every agent's R_i[k] are equal too, so with a group baseline (mean, max, rloo) or scaled
 * advantages every advantage is 0 and the item only dilutes the minibatch mean. With one turn this is
 * DAPO's "all rewards of the group equal"; with several, an item whose later turns differ is kept. The
 * test is on the team's joint returns (with per-agent rewards, each agent's own), so it holds for every
 * credit assignment; reference-KL shaping is not looked at (as DAPO); a non-finite return keeps the
 * item, so the update's non-finite checks see it.
 *
 * <p>The cap: at most {@code dynamic_sampling_max_draws} items are dropped per update batch (between two
 * buffer drains; an epoch's end is one); past it an all-equal item is trained on, so updates come at
 * least every {@code rollout_buffer_size + max_draws} items. null means no cap; 0 drops nothing. verl's
 * {@code max_num_gen_batches} fails when reached; here the item is used instead. A dropped item's
 * rollouts still count in {@code env_step}; the count starts at 0 every epoch, so a resumed run drops
 * exactly what the uninterrupted run dropped.
 */
public final class DynamicSampling {
    private final boolean enabled;
    /** null: no cap. */
    private final Integer maxDraws;
    /** Items dropped since the last buffer drain (or the epoch's start). */
    private int dropped;

    public DynamicSampling(boolean enabled, Integer maxDraws) {
        this.enabled = enabled;
        this.maxDraws = maxDraws;
    }

    /**
     * Whether the item with these returns (its team's tree, or each agent's own) is dropped: dynamic
     * sampling is on, no tree {@link #carriesNoSignal carries a signal} and the cap is not reached; counts it.
     */
    public boolean drop(List<TreeReturns> returns) {
        if (!enabled || (maxDraws != null && dropped >= maxDraws)
                || !returns.stream().allMatch(DynamicSampling::carriesNoSignal)) {
            return false;
        }
        dropped++;
        return true;
    }

    /** A buffer was drained (an update batch ended): the cap counts afresh. */
    public void drained() {
        dropped = 0;
    }

    /** Whether every node's joint returns are finite and all equal. */
    public static boolean carriesNoSignal(TreeReturns node) {
        double[] returns = node.returns(); // [K]
        return Arrays.stream(returns).allMatch(r -> Double.isFinite(r) && r == returns[0])
                && node.children().stream().allMatch(DynamicSampling::carriesNoSignal);
    }
}
