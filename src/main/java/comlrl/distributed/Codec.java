package comlrl.distributed;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.function.Function;

/**
 * How a value travels between the processes of a run: written to bytes by the sender, read back by
 * every receiver. The codecs in use are {@link Codecs}' constants and compositions of them
 * ({@link Codecs#listOf}, {@link Codecs#mapOf}, {@link Codecs#fields}, {@link #as}), so code that
 * exchanges values says what it sends, not how its bytes are laid out.
 */
public interface Codec<T> {
    void write(DataOutputStream out, T value) throws IOException;

    T read(DataInputStream in) throws IOException;

    /**
     * Values of another type sent as this codec's: {@code toWire} turns a value into this codec's
     * kind before writing, {@code fromWire} turns what was read back. The two must be inverse for
     * the receivers to get the sender's value ({@code fromWire(toWire(u))} equal to {@code u}).
     */
    default <U> Codec<U> as(Function<T, U> fromWire, Function<U, T> toWire) {
        Codec<T> wire = this;
        return new Codec<>() {
            @Override
            public void write(DataOutputStream out, U value) throws IOException {
                wire.write(out, toWire.apply(value));
            }

            @Override
            public U read(DataInputStream in) throws IOException {
                return fromWire.apply(wire.read(in));
            }
        };
    }
}
