package comlrl.generation;

import java.util.List;
import java.util.Set;
import java.util.function.Function;

/**
 * Where each sequence of one decode ends, found on the host from its generated ids: at its first
 * end-of-sequence id, or, for a row with stop strings (transformers' {@code stop_strings}, its
 * {@code StopStringCriteria}), at the first step whose decoded completion contains one of them:
 * <pre>
 *   end(r) = min over t of  t + 1   where  y_{r,t} ∈ eos                                  (FinishReason.EOS)
 *                                      or  decode(y_{r,0..t}) contains some s ∈ stops(r)   (FinishReason.STOP)
 *          = T when there is no such t                                                     (FinishReason.LENGTH)
 * </pre>
 * The completion keeps {@code y_{r,0..end-1}}: the token that completes a match stays whole, also when
 * the string ends inside it, as in transformers; the tokens after it are dropped. Only the completion is
 * searched (a stop string that appears in the prompt, or across the prompt's end, does not end the
 * sequence; transformers, which matches the tail of the whole sequence against its tokens' vocabulary
 * strings, would stop on one across the prompt's end), decoded as {@link Completion#text()} is (the
 * generator's decoder, special tokens skipped).
 * An end-of-sequence token decodes to nothing, so it never completes a match: at one step, EOS wins.
 *
 * <p>Steps arrive in order, in blocks: the decode loop copies the ids generated since its last check in
 * one transfer (the transfer that replaces its "all finished?" flag), and the rest once decoding ends.
 * A row with stop strings is decoded once per step until it ends (at most T decodes of at most T ids);
 * a row without is only scanned for end-of-sequence ids.
 */
final class StopStrings {
    private final List<List<String>> stops;        // per row; empty: none
    private final boolean searchesText;
    private final Set<Long> eosIds;
    private final Function<long[], String> decoder;
    private final long[][] ids;                     // [R, T] the ids seen so far
    private final int[] end;                        // per row: kept length, -1 while it runs
    private final FinishReason[] reasons;           // per row, once ended
    private int seen;                               // steps consumed
    private int running;                            // rows not ended

    /**
     * @param rowStops row r's stop strings at index r (empty: none)
     * @param maxSteps the most steps the decode may run (max_new_tokens)
     */
    StopStrings(List<List<String>> rowStops, Set<Long> eosIds, Function<long[], String> decoder, int maxSteps) {
        this.stops = List.copyOf(rowStops);
        this.searchesText = stops.stream().anyMatch(s -> !s.isEmpty());
        this.eosIds = eosIds;
        this.decoder = decoder;
        int rows = stops.size();
        this.ids = new long[rows][maxSteps];
        this.end = new int[rows];
        java.util.Arrays.fill(end, -1);
        this.reasons = new FinishReason[rows];
        this.running = rows;
    }

    /** Whether some row has stop strings (only then does the decode loop need the ids before it ends). */
    boolean searchesText() {
        return searchesText;
    }

    /** Steps consumed so far: the next {@link #advance} starts at this step. */
    int seen() {
        return seen;
    }

    /**
     * Consumes the steps of {@code block} not seen yet.
     *
     * @param block {@code [R, width]} row-major: entry {@code (r, c)} is row r's id at step {@code from + c}
     * @param from the step of the block's first column; at most {@link #seen()}
     * @return whether every row has ended
     */
    boolean advance(long[] block, int from, int width) {
        if (from > seen) {
            throw new IllegalArgumentException("steps " + seen + ".." + (from - 1) + " were skipped");
        }
        int rows = end.length;
        for (int t = seen; t < from + width; t++) {
            for (int r = 0; r < rows; r++) {
                if (end[r] >= 0) {
                    continue;
                }
                long id = block[r * width + (t - from)];
                ids[r][t] = id;
                if (eosIds.contains(id)) {
                    finish(r, t + 1, FinishReason.EOS);
                } else if (completesStop(r, t)) {
                    finish(r, t + 1, FinishReason.STOP);
                }
            }
        }
        seen = Math.max(seen, from + width);
        return running == 0;
    }

    /** Whether row r's completion {@code y_{r,0..t}}, decoded, contains one of its stop strings. */
    private boolean completesStop(int r, int t) {
        List<String> rowStops = stops.get(r);
        if (rowStops.isEmpty()) {
            return false;
        }
        String text = decoder.apply(java.util.Arrays.copyOf(ids[r], t + 1));
        for (String stop : rowStops) {
            if (text.contains(stop)) {
                return true;
            }
        }
        return false;
    }

    private void finish(int row, int length, FinishReason reason) {
        end[row] = length;
        reasons[row] = reason;
        running--;
    }

    /** Row {@code row}'s kept length after {@code steps} steps. */
    int length(int row, int steps) {
        return end[row] >= 0 ? end[row] : steps;
    }

    /** Why row {@code row} ended. */
    FinishReason reason(int row) {
        return end[row] >= 0 ? reasons[row] : FinishReason.LENGTH;
    }
}
