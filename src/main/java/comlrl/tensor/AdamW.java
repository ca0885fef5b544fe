package comlrl.tensor;

import java.nio.file.Path;
import java.util.List;
import org.bytedeco.pytorch.AdamWOptions;
import org.bytedeco.pytorch.InputArchive;
import org.bytedeco.pytorch.OutputArchive;
import org.bytedeco.pytorch.TensorVector;

/**
 * libtorch's AdamW (decoupled weight decay), the same update as {@code torch.optim.AdamW}:
 * <pre>
 *   p   ← p · (1 − lr·λ)
 *   m   ← β1·m + (1 − β1)·g          v ← β2·v + (1 − β2)·g²
 *   p   ← p − lr · (m / (1 − β1^t)) / (sqrt(v / (1 − β2^t)) + ε)
 * </pre>
 * Defaults as PyTorch: β = (0.9, 0.999), ε = 1e-8, λ = 0.01.
 */
public final class AdamW implements AutoCloseable {
    private final org.bytedeco.pytorch.AdamW optimizer;
    private final List<Tensor> parameters;

    public AdamW(List<Tensor> parameters, double lr, double weightDecay) {
        this(parameters, lr, 0.9, 0.999, 1e-8, weightDecay);
    }

    public AdamW(List<Tensor> parameters, double lr, double beta1, double beta2, double eps,
            double weightDecay) {
        Engine.init();
        this.parameters = List.copyOf(parameters);
        TensorVector v = new TensorVector();
        for (Tensor p : parameters) {
            v.push_back(p.handle);
        }
        AdamWOptions o = new AdamWOptions(lr);
        o.betas().put(0, beta1).put(1, beta2);
        o.eps().put(eps);
        o.weight_decay().put(weightDecay);
        this.optimizer = new org.bytedeco.pytorch.AdamW(v, o);
        this.optimizer.retainReference();
    }

    public List<Tensor> parameters() {
        return parameters;
    }

    /** Clears every parameter's gradient (set to none, as {@code zero_grad()} does). */
    public void zeroGrad() {
        optimizer.zero_grad(true);
    }

    public void step() {
        try (Scope s = Scope.open()) {
            optimizer.step();
        }
    }

    /** Writes the optimizer state (moments, step counts) to {@code file}. */
    public void save(Path file) {
        try (Scope s = Scope.open()) {
            OutputArchive a = new OutputArchive();
            optimizer.save(a);
            a.save_to(file.toString());
        }
    }

    /** Restores state written by {@link #save(Path)} (same parameters in the same order). */
    public void load(Path file) {
        try (Scope s = Scope.open()) {
            InputArchive a = new InputArchive();
            a.load_from(file.toString());
            optimizer.load(a);
        }
    }

    @Override
    public void close() {
        optimizer.releaseReference();
    }
}
