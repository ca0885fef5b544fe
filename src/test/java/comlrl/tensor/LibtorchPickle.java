package comlrl.tensor;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.bytedeco.pytorch.ByteVector;
import org.bytedeco.pytorch.CompilationUnit;
import org.bytedeco.pytorch.GenericDict;
import org.bytedeco.pytorch.GenericDictEntryRef;
import org.bytedeco.pytorch.GenericDictIterator;
import org.bytedeco.pytorch.GenericList;
import org.bytedeco.pytorch.IValue;
import org.bytedeco.pytorch.IValueVector;
import org.bytedeco.pytorch.ListType;
import org.bytedeco.pytorch.QualifiedName;
import org.bytedeco.pytorch.global.torch;

/**
 * libtorch's own {@code torch::pickle_load} and {@code torch::pickle_save} on dicts of tensors, as an
 * independent reader and writer of the {@code torch.save} format for tests.
 */
public final class LibtorchPickle {
    private LibtorchPickle() {
    }

    /** {@code torch::pickle_load(bytes)} of a dict from names to tensors, in dict order. */
    public static Map<String, Tensor> load(byte[] bytes) {
        Engine.init();
        IValue value = torch.pickle_load(new ByteVector(bytes));
        if (!value.isGenericDict()) {
            throw new IllegalArgumentException("pickle_load did not return a dict");
        }
        GenericDict dict = value.toGenericDict();
        Map<String, Tensor> out = new LinkedHashMap<>();
        GenericDictIterator end = dict.end();
        for (GenericDictIterator it = dict.begin(); !it.equals(end); it = it.increment()) {
            GenericDictEntryRef entry = it.multiply();
            out.put(entry.key().toStringRef().getString(), new Tensor(entry.value().toTensor()));
        }
        return out;
    }

    /**
     * {@code torch::pickle_save} of a {@code Dict[str, Tensor]} holding {@code tensors} (names
     * without commas), the dict built by a TorchScript function (the Java mapping cannot build one).
     */
    public static byte[] save(Map<String, Tensor> tensors) {
        Engine.init();
        CompilationUnit unit = torch.compile("def make(joined: str, values: List[Tensor]) -> Dict[str, Tensor]:\n"
                + "    names = joined.split(\",\")\n"
                + "    d: Dict[str, Tensor] = {}\n"
                + "    for i in range(len(names)):\n"
                + "        d[names[i]] = values[i]\n"
                + "    return d\n");
        GenericList values = new GenericList(ListType.ofTensors().getElementType());
        for (Tensor t : tensors.values()) {
            values.push_back(new IValue(t.handle));
        }
        IValueVector args = new IValueVector();
        args.push_back(new IValue(String.join(",", List.copyOf(tensors.keySet()))));
        args.push_back(new IValue(values));
        IValue dict = unit.get_function(new QualifiedName("make")).apply(args);
        ByteVector bytes = torch.pickle_save(dict);
        return bytes.get();
    }
}
