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

    /**
     * Runs {@code body} in a scope of its own and returns its result as if the enclosing scope had made
     * it (freed when that one closes); every other tensor the body made is freed on return. Autograd
     * holds what a backward needs through the result's graph, so a layer run this way keeps only the
     * activations autograd saved, not every intermediate the Java side created.
     */
    public static Tensor inner(java.util.function.Supplier<Tensor> body) {
        org.bytedeco.pytorch.Tensor owned;
        try (Scope inner = open()) {
            // a handle of its own: the body's may refer into a tensor that goes now (a gradient's does)
            owned = new org.bytedeco.pytorch.Tensor(body.get().handle);
            owned.retainReference(); // survives the inner scope
        }
        PointerScope outer = PointerScope.getInnerScope();
        if (outer != null) {
            outer.attach(owned);      // released with the enclosing scope...
            owned.releaseReference(); // ...and only then
        }
        return new Tensor(owned);
    }

    @Override
    public void close() {
        scope.close();
    }
}
