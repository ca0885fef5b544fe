package comlrl.data;

import comlrl.utils.ResidentMemory;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Path;

/**
 * Streams one Parquet file ({@code args[0]}) in a JVM of its own and prints, as {@code key: value}
 * lines, the memory measures of {@link ParquetStreamTest#residentMemoryStaysFlatPerRowGroup} after
 * the first {@code args[1]} rows and at the end. Started with a heap that is fixed and touched from
 * the start ({@code -Xms = -Xmx}, {@code -XX:+AlwaysPreTouch}), so growth of the resident set is
 * native memory, not heap pages the JVM touches for the first time, nor other tests' threads.
 */
public final class ParquetStreamMemoryProbe {
    private ParquetStreamMemoryProbe() {}

    public static void main(String[] args) {
        Path file = Path.of(args[0]);
        long early = Long.parseLong(args[1]);
        long rows = 0;
        long text = 0;
        try (ParquetStream stream = ParquetStream.open(file)) {
            for (TaskItem item : stream) {
                if (item.getLong("i") != rows) {
                    throw new AssertionError("row " + rows + " came as " + item.getLong("i"));
                }
                text += item.getString("prompt").length();
                rows++;
                if (rows == early) {
                    print("early");
                }
            }
        }
        print("end");
        System.out.println("rows: " + rows);
        System.out.println("text: " + text);
    }

    private static void print(String when) {
        System.out.println(when + "Rss: " + (ResidentMemory.settledBytes() - jvmCommittedBytes()));
        System.out.println(when + "Heap: " + liveHeapBytes());
        System.out.println(when + "Direct: " + directBufferBytes());
    }

    private static long liveHeapBytes() {
        System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static long directBufferBytes() {
        return ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
                .filter(pool -> pool.getName().equals("direct"))
                .mapToLong(BufferPoolMXBean::getMemoryUsed)
                .sum();
    }

    /** Heap and non-heap memory the JVM has committed (part of RSS whatever the stream does). */
    private static long jvmCommittedBytes() {
        MemoryMXBean m = ManagementFactory.getMemoryMXBean();
        return m.getHeapMemoryUsage().getCommitted() + m.getNonHeapMemoryUsage().getCommitted();
    }
}
