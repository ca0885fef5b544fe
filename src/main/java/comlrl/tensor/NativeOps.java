package comlrl.tensor;

import java.util.List;
import org.bytedeco.pytorch.Dispatcher;
import org.bytedeco.pytorch.GenericList;
import org.bytedeco.pytorch.IValue;
import org.bytedeco.pytorch.IValueVector;
import org.bytedeco.pytorch.ListType;
import org.bytedeco.pytorch.OperatorHandle;
import org.bytedeco.pytorch.OptionalType;
import org.bytedeco.pytorch.Type;

/**
 * libtorch operators that the Java mapping does not expose as functions, called through the
 * operator dispatcher by name with boxed arguments (as TorchScript calls them): the fused AdamW
 * kernel and oneDNN's linear. Each handle is looked up once.
 */
final class NativeOps {
    private NativeOps() {
    }

    private static final class Handles {
        static final OperatorHandle FUSED_ADAMW = find("aten::_fused_adamw_", "");
        static final OperatorHandle ONEDNN_LINEAR = find("mkldnn::_linear_pointwise", "");
        static final OperatorHandle ONEDNN_REORDER = find("mkldnn::_reorder_linear_weight", "");
        // process-wide constants: retained, so that no scope open at class initialisation frees them
        static final Type.TypePtr TENSOR = ListType.ofTensors().getElementType().retainReference();
        static final IValue NO_SCALARS = new IValue(new GenericList(OptionalType.get(ListType.ofNumbers()
                .getElementType()))).retainReference();
        static final IValue ATTR_NONE = new IValue("none").retainReference();
        static final IValue EMPTY_ALGORITHM = new IValue("").retainReference();
        static final IValue NONE = new IValue().retainReference();

        private static OperatorHandle find(String name, String overload) {
            Engine.init();
            return Dispatcher.singleton().findSchemaOrThrow(name, overload).retainReference();
        }
    }

    /**
     * The tensor an operator left on the stack, as a tensor of its own (the stack's element is a
     * reference into the stack, which goes with it).
     */
    private static Tensor result(IValueVector stack) {
        return new Tensor(new org.bytedeco.pytorch.Tensor(stack.get(0).toTensor()));
    }

    /** A boxed {@code Tensor[]}. */
    private static IValue tensorList(List<Tensor> tensors) {
        GenericList list = new GenericList(Handles.TENSOR);
        list.reserve(tensors.size());
        for (Tensor t : tensors) {
            list.push_back(new IValue(t.handle));
        }
        return new IValue(list);
    }

    /**
     * One AdamW step over every parameter in one pass through memory per tensor (libtorch's fused
     * CPU/CUDA kernel, the one {@code torch.optim.AdamW(fused=True)} runs), in place:
     * <pre>
     *   p ← p·(1 − lr·λ);  m ← β1 m + (1−β1) g;  v ← β2 v + (1−β2) g²
     *   p ← p − (lr / (1−β1^t)) · m / (√v / √(1−β2^t) + ε)
     * </pre>
     * {@code steps} holds t (float32 scalars, read, not advanced).
     */
    static void fusedAdamW(List<Tensor> params, List<Tensor> grads, List<Tensor> expAvg, List<Tensor> expAvgSq,
            List<Tensor> steps, double lr, double beta1, double beta2, double weightDecay, double eps) {
        IValueVector stack = new IValueVector();
        stack.push_back(tensorList(params));
        stack.push_back(tensorList(grads));
        stack.push_back(tensorList(expAvg));
        stack.push_back(tensorList(expAvgSq));
        stack.push_back(tensorList(List.of()));    // max_exp_avg_sqs (amsgrad only)
        stack.push_back(tensorList(steps));
        stack.push_back(new IValue(lr));
        stack.push_back(new IValue(beta1));
        stack.push_back(new IValue(beta2));
        stack.push_back(new IValue(weightDecay));
        stack.push_back(new IValue(eps));
        stack.push_back(new IValue(false));        // amsgrad
        stack.push_back(new IValue(false));        // maximize
        stack.push_back(Handles.NONE);             // grad_scale
        stack.push_back(Handles.NONE);             // found_inf
        Handles.FUSED_ADAMW.callBoxed(stack);
    }

    /**
     * {@code weight} ({@code [out, in]}) reordered into oneDNN's blocked layout for products with
     * {@code rows} rows: an opaque tensor only {@link #oneDnnLinear} can use, with those rows.
     */
    static Tensor oneDnnPack(Tensor weight, long rows) {
        IValueVector stack = new IValueVector();
        stack.push_back(new IValue(weight.handle));
        stack.push_back(new IValue(rows));
        Handles.ONEDNN_REORDER.callBoxed(stack);
        return result(stack);
    }

    /** {@code x @ Wᵀ + b} by oneDNN's inner-product kernel, on the weight as stored ({@code [out, in]}) or packed. */
    static Tensor oneDnnLinear(Tensor x, Tensor weight, Tensor bias) {
        IValueVector stack = new IValueVector();
        stack.push_back(new IValue(x.handle));
        stack.push_back(new IValue(weight.handle));
        stack.push_back(bias == null ? Handles.NONE : new IValue(bias.handle));
        stack.push_back(Handles.ATTR_NONE);
        stack.push_back(Handles.NO_SCALARS);
        stack.push_back(Handles.EMPTY_ALGORITHM);
        Handles.ONEDNN_LINEAR.callBoxed(stack);
        return result(stack);
    }
}
