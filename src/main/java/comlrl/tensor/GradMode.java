package comlrl.tensor;

import org.bytedeco.pytorch.InferenceMode;
import org.bytedeco.pytorch.NoGradGuard;

/**
 * Autograd switches, as try-with-resources guards on the current thread.
 * <pre>{@code try (GradMode g = GradMode.noGrad()) { ... } }</pre>
 */
public final class GradMode implements AutoCloseable {
    private final org.bytedeco.javacpp.Pointer guard;

    private GradMode(org.bytedeco.javacpp.Pointer guard) {
        this.guard = guard;
    }

    /** No autograd graph is recorded until closed ({@code torch.no_grad()}). */
    public static GradMode noGrad() {
        Engine.init();
        NoGradGuard g = new NoGradGuard();
        return new GradMode(g);
    }

    /**
     * Inference mode ({@code torch.inference_mode()}): no graph and no version counters. Tensors
     * made inside must not later take part in autograd; use it for rollouts and evaluation only.
     */
    public static GradMode inference() {
        Engine.init();
        InferenceMode g = new InferenceMode();
        return new GradMode(g);
    }

    @Override
    public void close() {
        guard.deallocate(); // restores the previous mode now, whatever scope is open
    }
}
