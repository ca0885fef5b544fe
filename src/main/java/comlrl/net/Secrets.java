package comlrl.net;

import java.io.ByteArrayOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The process-wide registry of secrets (API keys, tokens) that no text we write may contain.
 * Whoever holds a credential registers it ({@link #register}: the API comparator its key,
 * {@code HubCache} the Hugging Face token, the W&amp;B sink {@code WANDB_API_KEY}); every writer of
 * text passes it through {@link #scrub}, which replaces each registered value, and its JSON-escaped
 * form, by {@value #HIDDEN}: replay shards and checkpoint JSON ({@code Checkpoints.writeJson}),
 * {@code metrics.jsonl}, reports, the W&amp;B bridge's messages, and the console ({@link #scrubbing},
 * installed on {@code System.out}/{@code System.err} by the command line).
 *
 * <p>Values shorter than {@value #MIN_LENGTH} characters are not registered: replacing so short a
 * string everywhere would corrupt ordinary text, and no real key is that short. Matching is exact
 * and on ASCII text (keys and tokens are ASCII). Thread-safe.
 */
public final class Secrets {
    /** What a secret is replaced by. */
    public static final String HIDDEN = "***";
    /** The shortest value {@link #register} keeps. */
    public static final int MIN_LENGTH = 8;

    /** Every registered value and its JSON-escaped form, longest first (so no shorter one splits a longer one). */
    private static volatile List<String> values = List.of();

    private Secrets() {}

    /**
     * Adds {@code secret} (stripped) to the registry; null, blank or shorter than
     * {@value #MIN_LENGTH} characters is ignored.
     */
    public static synchronized void register(String secret) {
        if (secret == null || secret.strip().length() < MIN_LENGTH) {
            return;
        }
        String value = secret.strip();
        List<String> next = new ArrayList<>(values);
        for (String form : List.of(value, jsonEscaped(value))) {
            if (!next.contains(form)) {
                next.add(form);
            }
        }
        next.sort(Comparator.comparingInt(String::length).reversed());
        values = List.copyOf(next);
    }

    /** {@code text} with every registered secret replaced by {@value #HIDDEN}; null stays null. */
    public static String scrub(String text) {
        if (text == null) {
            return null;
        }
        String out = text;
        for (String secret : values) {
            if (out.contains(secret)) {
                out = out.replace(secret, HIDDEN);
            }
        }
        return out;
    }

    /**
     * A print stream over {@code out} that scrubs what passes: it hands on text a line at a time
     * ({@code \n} or {@code \r} ends one), and on {@code flush} all but an ending that could be the
     * start of a secret, so a secret split across two writes is still caught.
     */
    public static PrintStream scrubbing(OutputStream out) {
        return new PrintStream(new ScrubbingStream(out), true, Charset.defaultCharset());
    }

    /** {@code value} as it appears inside a JSON string (keys are printable ASCII: only {@code \ "} change). */
    private static String jsonEscaped(String value) {
        return value.replace("\\", "\\\\").replace("\"", "\\\"");
    }

    /** The length of the longest ending of {@code text} that begins some secret (0 when none). */
    static int partialSecretAtEnd(String text) {
        int longest = 0;
        for (String secret : values) {
            for (int k = Math.min(secret.length() - 1, text.length()); k > longest; k--) {
                if (text.regionMatches(text.length() - k, secret, 0, k)) {
                    longest = k;
                    break;
                }
            }
        }
        return longest;
    }

    /** Bytes held until a line ends (or a flush), then scrubbed and handed on. */
    private static final class ScrubbingStream extends FilterOutputStream {
        private final ByteArrayOutputStream pending = new ByteArrayOutputStream();

        ScrubbingStream(OutputStream out) {
            super(out);
        }

        @Override
        public synchronized void write(int b) throws IOException {
            pending.write(b);
            if (b == '\n' || b == '\r') {
                emit(0);
            }
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) throws IOException {
            for (int i = off; i < off + len; i++) {
                write(b[i]);
            }
        }

        @Override
        public synchronized void flush() throws IOException {
            // ISO-8859-1 maps bytes to chars one to one, so lengths agree and any bytes round-trip
            emit(partialSecretAtEnd(pending.toString(StandardCharsets.ISO_8859_1)));
            out.flush();
        }

        @Override
        public synchronized void close() throws IOException {
            emit(0);
            out.close();
        }

        /** Hands on everything pending but the last {@code keep} bytes, scrubbed. */
        private void emit(int keep) throws IOException {
            String text = pending.toString(StandardCharsets.ISO_8859_1);
            String ready = text.substring(0, text.length() - keep);
            pending.reset();
            pending.writeBytes(text.substring(text.length() - keep).getBytes(StandardCharsets.ISO_8859_1));
            out.write(scrub(ready).getBytes(StandardCharsets.ISO_8859_1));
        }
    }
}
