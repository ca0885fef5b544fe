package comlrl.model;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * Int arrays kept for reuse, by length: a base model's host copies of its teams' LoRA adapters
 * ({@link LoraBatch}), made again for every team generation at the same sizes. Taking them from here
 * spares the garbage collector ~50 MB of large arrays per generation at the 0.5B shape (pauses of
 * 0.1–0.3 s each with the CLI's serial collector and small heap).
 */
final class IntArrays {
    private final Map<Integer, ArrayDeque<int[]>> free = new HashMap<>();

    /** An array of {@code length} ints (a returned one, or a new one); its contents are undefined. */
    synchronized int[] take(int length) {
        ArrayDeque<int[]> q = free.get(length);
        int[] a = q == null ? null : q.poll();
        return a != null ? a : new int[length];
    }

    /** Keeps {@code a} for a later {@link #take} of its length. */
    synchronized void give(int[] a) {
        free.computeIfAbsent(a.length, k -> new ArrayDeque<>()).push(a);
    }
}
