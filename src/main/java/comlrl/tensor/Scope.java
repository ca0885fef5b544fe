package comlrl.tensor;

import org.bytedeco.javacpp.PointerScope;

/**
 * A native-memory scope: every tensor made while it is open (on this thread) is freed when it
 * closes, except tensors on which {@link Tensor#keep()} was called. Use one per step:
 * <pre>{@code try (Scope step = Scope.open()) { ... } }</pre>
 */
public final class Scope implements AutoCloseable {
    private final PointerScope scope;

    private Scope() {
        Engine.init();
        this.scope = new PointerScope();
    }

    public static Scope open() {
        return new Scope();
    }

    @Override
    public void close() {
        scope.close();
    }
}
