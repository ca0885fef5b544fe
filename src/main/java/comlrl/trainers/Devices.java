package comlrl.trainers;

import comlrl.tensor.Device;
import comlrl.tensor.Engine;
import java.util.Collections;
import java.util.List;
import java.util.stream.IntStream;

/**
 * Device placement with the reference's DeviceScheduler rules: null or "auto" → every model on
 * cuda:0 when a GPU is visible (cuda:0..n-1 when there are enough GPUs), else cpu; a string → that
 * device for all; a list of 1 → broadcast; a list of n → one per model.
 */
public final class Devices {
    private Devices() {
    }

    public static List<Device> resolve(Object spec, int n, String kind) {
        if (spec == null || "auto".equals(spec)) {
            int gpus = Engine.cudaDeviceCount();
            return IntStream.range(0, n).mapToObj(i -> gpus == 0 ? Device.CPU : new Device("cuda", gpus >= n ? i : 0))
                    .toList();
        }
        if (spec instanceof String s) {
            return Collections.nCopies(n, Device.parse(s));
        }
        if (spec instanceof List<?> list) {
            if (list.size() == 1) {
                return resolve(String.valueOf(list.get(0)), n, kind);
            }
            if (list.size() != n) {
                throw new IllegalArgumentException(kind + " length (" + list.size() + ") must be 1 or " + n + ".");
            }
            return list.stream().map(o -> Device.parse(String.valueOf(o))).toList();
        }
        throw new IllegalArgumentException(kind + " must be a device string or a list of them, got " + spec);
    }

    /** True when the devices are not all the same (so per-agent work can run concurrently). */
    public static boolean distinct(List<Device> devices) {
        return devices.stream().distinct().count() > 1;
    }
}
