package comlrl.tensor;

import org.bytedeco.pytorch.Generator;
import org.bytedeco.pytorch.GeneratorOptional;
import org.bytedeco.pytorch.global.torch;

/**
 * A seeded libtorch random generator (Philox/MT on the CPU). Sampling that draws from an
 * {@code Rng} is repeatable for a seed. Its state can be saved and restored for checkpoints.
 */
public final class Rng implements AutoCloseable {
    private final Generator generator;
    private final GeneratorOptional optional;

    public Rng(long seed) {
        Engine.init();
        this.generator = torch.createCPUGenerator(seed);
        this.generator.retainReference();
        this.optional = new GeneratorOptional(generator);
        this.optional.retainReference();
    }

    GeneratorOptional optional() {
        return optional;
    }

    /** The generator state as bytes (for checkpoints). */
    public byte[] state() {
        try (Scope s = Scope.open()) {
            return new Tensor(generator.get_state()).toBytes();
        }
    }

    /** Restores a state returned by {@link #state()}. */
    public void setState(byte[] state) {
        try (Scope s = Scope.open()) {
            Tensor t = Tensor.fromBytes(java.nio.ByteBuffer.wrap(state), DType.U8, state.length);
            generator.set_state(t.handle);
        }
    }

    @Override
    public void close() {
        optional.releaseReference();
        generator.releaseReference();
    }
}
