package comlrl.tensor;

import java.util.Locale;
import org.bytedeco.pytorch.global.torch.ScalarType;

/** Element types we store and compute in, with their safetensors and Hugging Face names. */
public enum DType {
    F32(ScalarType.Float, "F32", "float32", 4),
    BF16(ScalarType.BFloat16, "BF16", "bfloat16", 2),
    F16(ScalarType.Half, "F16", "float16", 2),
    F64(ScalarType.Double, "F64", "float64", 8),
    I64(ScalarType.Long, "I64", "int64", 8),
    I32(ScalarType.Int, "I32", "int32", 4),
    U8(ScalarType.Byte, "U8", "uint8", 1),
    BOOL(ScalarType.Bool, "BOOL", "bool", 1);

    final ScalarType scalarType;
    private final String safetensorsName;
    private final String torchName;
    private final int byteSize;

    DType(ScalarType scalarType, String safetensorsName, String torchName, int byteSize) {
        this.scalarType = scalarType;
        this.safetensorsName = safetensorsName;
        this.torchName = torchName;
        this.byteSize = byteSize;
    }

    /** The name used in safetensors headers ("F32", "BF16", ...). */
    public String safetensorsName() {
        return safetensorsName;
    }

    /** The name used in Hugging Face {@code config.json} ("float32", "bfloat16", ...). */
    public String torchName() {
        return torchName;
    }

    public int byteSize() {
        return byteSize;
    }

    public boolean isFloatingPoint() {
        return this == F32 || this == BF16 || this == F16 || this == F64;
    }

    /** The type named in a safetensors header; fails naming the supported ones. */
    public static DType fromSafetensors(String name) {
        for (DType d : values()) {
            if (d.safetensorsName.equals(name)) {
                return d;
            }
        }
        throw new IllegalArgumentException("Unsupported safetensors dtype '" + name
                + "'; supported: F32, BF16, F16, F64, I64, I32, U8, BOOL");
    }

    /**
     * The type named by a Hugging Face {@code torch_dtype}/{@code dtype} value ("float32", "bf16",
     * "torch.bfloat16", "half", ...); fails naming the accepted spellings.
     */
    public static DType fromTorchName(String name) {
        String n = name.toLowerCase(Locale.ROOT).trim();
        if (n.startsWith("torch.")) {
            n = n.substring(6);
        }
        switch (n) {
            case "float32": case "float": case "f32": case "fp32":
                return F32;
            case "bfloat16": case "bf16":
                return BF16;
            case "float16": case "half": case "f16": case "fp16":
                return F16;
            case "float64": case "double":
                return F64;
            default:
                throw new IllegalArgumentException("Unsupported dtype '" + name
                        + "'; use one of float32, bfloat16, float16");
        }
    }

    static DType of(ScalarType st) {
        int v = st.value;
        for (DType d : values()) {
            if (d.scalarType.value == v) {
                return d;
            }
        }
        throw new IllegalStateException("Unmapped libtorch scalar type " + st);
    }
}
