package comlrl.distributed;

import java.util.Locale;

/** The collective-communication library a {@link DistributedContext} runs on. */
public enum Backend {
    /** NCCL when the context's device is a CUDA device, else Gloo. */
    AUTO,
    /** Gloo over TCP: CPU tensors (CUDA tensors pass through host memory). */
    GLOO,
    /** NCCL: CUDA tensors, one GPU per process; needs the CUDA build of the natives. */
    NCCL;

    /** Parses "auto", "gloo" or "nccl" (case-insensitive). */
    public static Backend parse(String name) {
        try {
            return valueOf(name.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("Unknown distributed backend '" + name + "'; use auto, gloo or nccl", e);
        }
    }

    public String configName() {
        return name().toLowerCase(Locale.ROOT);
    }
}
