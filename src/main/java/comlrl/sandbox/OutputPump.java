package comlrl.sandbox;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Reads one output stream of a run: counts its bytes against the run's output limit (shared by stdout and
 * stderr), keeps the first {@link ExecutionResult#CAPTURED_BYTES} of them, and, on stderr, takes out the
 * harness's verdict lines ({@code <nonce> {json}}, each after a newline the harness writes first).
 */
final class OutputPump implements Runnable {
    private final InputStream in;
    private final AtomicLong total;
    private final long limit;
    private final Runnable onLimit;
    private final byte[] verdictPrefix; // null on stdout
    private final ByteArrayOutputStream captured = new ByteArrayOutputStream();
    private final ByteArrayOutputStream line = new ByteArrayOutputStream();
    private final List<String> verdicts = new ArrayList<>();
    private boolean blankLinePending;

    OutputPump(InputStream in, AtomicLong total, long limit, Runnable onLimit, String nonce) {
        this.in = in;
        this.total = total;
        this.limit = limit;
        this.onLimit = onLimit;
        this.verdictPrefix = nonce == null ? null : (nonce + " ").getBytes(StandardCharsets.US_ASCII);
    }

    @Override
    public void run() {
        byte[] buffer = new byte[8192];
        try {
            for (int n; (n = in.read(buffer)) > 0; ) {
                if (total.addAndGet(n) > limit) {
                    onLimit.run();
                    return;
                }
                if (verdictPrefix == null) {
                    keep(buffer, 0, n);
                } else {
                    splitLines(buffer, n);
                }
            }
            if (verdictPrefix != null) {
                endLine();
            }
        } catch (IOException e) {
            // the stream closed under us (the run was killed): what was read stays
        }
    }

    /** The kept bytes, as text. */
    synchronized String text() {
        return captured.toString(StandardCharsets.UTF_8);
    }

    /** The verdict lines' JSON, in order. */
    synchronized List<String> verdicts() {
        return List.copyOf(verdicts);
    }

    private void splitLines(byte[] buffer, int n) {
        for (int i = 0; i < n; i++) {
            line.write(buffer[i]);
            if (buffer[i] == '\n') {
                endLine();
            } else if (line.size() > ExecutionResult.CAPTURED_BYTES && !startsWithPrefix()) {
                flushLine(); // a long line of the program's own: no verdict, keep it as it comes
            }
        }
    }

    private synchronized void endLine() {
        if (line.size() == 0) {
            return;
        }
        if (startsWithPrefix()) {
            String text = line.toString(StandardCharsets.UTF_8).strip();
            verdicts.add(text.substring(verdictPrefix.length - 1).strip());
            blankLinePending = false; // the newline the harness wrote before its verdict
            line.reset();
        } else if (line.size() == 1) {
            if (blankLinePending) {
                keep(new byte[] {'\n'}, 0, 1);
            }
            blankLinePending = true;
            line.reset();
        } else {
            flushLine();
        }
    }

    private synchronized void flushLine() {
        if (blankLinePending) {
            keep(new byte[] {'\n'}, 0, 1);
            blankLinePending = false;
        }
        byte[] bytes = line.toByteArray();
        keep(bytes, 0, bytes.length);
        line.reset();
    }

    private boolean startsWithPrefix() {
        if (line.size() < verdictPrefix.length) {
            return false;
        }
        byte[] head = line.toByteArray();
        for (int i = 0; i < verdictPrefix.length; i++) {
            if (head[i] != verdictPrefix[i]) {
                return false;
            }
        }
        return true;
    }

    private synchronized void keep(byte[] bytes, int offset, int length) {
        int room = ExecutionResult.CAPTURED_BYTES - captured.size();
        captured.write(bytes, offset, Math.max(0, Math.min(room, length)));
    }
}
