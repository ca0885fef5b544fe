package comlrl.distributed;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * Values (not tensors) exchanged between the processes of a run through {@link Codec}s, over
 * {@link DistributedContext#allGatherBytes}. Every rank makes the same calls in the same order.
 */
public final class Exchange {
    private Exchange() {
    }

    /** Every rank's {@code mine}, by rank. */
    public static <T> List<T> gather(DistributedContext context, T mine, Codec<T> codec) {
        List<byte[]> all = context.allGatherBytes(Codecs.encode(mine, codec));
        List<T> out = new ArrayList<>();
        for (int r = 0; r < all.size(); r++) {
            out.add(Codecs.decode(all.get(r), "the value rank " + r + " sent", codec));
        }
        return out;
    }

    /**
     * {@code compute} run on rank 0 only, its result given to every rank. When it fails on rank 0,
     * rank 0 rethrows its exception and the other ranks fail naming rank 0 and {@code what}.
     */
    public static <T> T fromRank0(DistributedContext context, String what, Supplier<T> compute, Codec<T> codec) {
        Codec<Outcome<T>> wire = outcome(codec);
        if (context.rank() != 0) {
            Outcome<T> outcome = Codecs.decode(context.allGatherBytes(new byte[0]).get(0), "rank 0's result of " + what,
                    wire);
            if (outcome.error() != null) {
                throw new IllegalStateException("rank 0 failed while " + what + ": " + outcome.error()
                        + " (rank 0's output has the details)");
            }
            return outcome.value();
        }
        T value;
        byte[] payload;
        try {
            value = compute.get();
            payload = Codecs.encode(new Outcome<>(value, null), wire); // a value that cannot be sent fails here too
        } catch (RuntimeException e) {
            String message = e.getMessage() == null || e.getMessage().isBlank()
                    ? DistributedException.describe(e) : e.getMessage();
            context.allGatherBytes(Codecs.encode(new Outcome<>(null, message), wire));
            throw e;
        } catch (Error e) {
            context.allGatherBytes(Codecs.encode(new Outcome<>(null, e.toString()), wire));
            throw e;
        }
        context.allGatherBytes(payload);
        return value;
    }

    /** What rank 0 sends: its value, or the message of its failure. */
    private record Outcome<T>(T value, String error) {
    }

    /** An outcome as a boolean (succeeded) followed by the value or the failure's message. */
    private static <T> Codec<Outcome<T>> outcome(Codec<T> value) {
        return new Codec<>() {
            @Override
            public void write(java.io.DataOutputStream out, Outcome<T> o) throws java.io.IOException {
                out.writeBoolean(o.error() == null);
                if (o.error() == null) {
                    value.write(out, o.value());
                } else {
                    Codecs.STRING.write(out, o.error());
                }
            }

            @Override
            public Outcome<T> read(java.io.DataInputStream in) throws java.io.IOException {
                return in.readBoolean() ? new Outcome<>(value.read(in), null) : new Outcome<>(null, Codecs.STRING.read(in));
            }
        };
    }
}
