package comlrl.tensor;

import java.util.Locale;
import java.util.Objects;

/**
 * Where tensors live: {@code cpu}, or {@code cuda:N} when the CUDA natives are on the class path.
 *
 * @param type "cpu" or "cuda"
 * @param index the CUDA device index (0 for cpu)
 */
public record Device(String type, int index) {
    public static final Device CPU = new Device("cpu", 0);

    public Device {
        Objects.requireNonNull(type, "type");
        if (!type.equals("cpu") && !type.equals("cuda")) {
            throw new IllegalArgumentException("Unknown device type '" + type + "'; use cpu or cuda:N");
        }
        if (index < 0) {
            throw new IllegalArgumentException("Device index must be >= 0, got " + index);
        }
    }

    /** Parses "cpu", "cuda", "cuda:1" (case-insensitive). */
    public static Device parse(String spec) {
        String s = spec.trim().toLowerCase(Locale.ROOT);
        if (s.equals("cpu")) {
            return CPU;
        }
        if (s.equals("cuda")) {
            return new Device("cuda", 0);
        }
        if (s.startsWith("cuda:")) {
            try {
                return new Device("cuda", Integer.parseInt(s.substring(5)));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("Bad device '" + spec + "'; use cpu, cuda or cuda:N", e);
            }
        }
        throw new IllegalArgumentException("Bad device '" + spec + "'; use cpu, cuda or cuda:N");
    }

    public boolean isCuda() {
        return type.equals("cuda");
    }

    @Override
    public String toString() {
        return isCuda() ? "cuda:" + index : "cpu";
    }
}
