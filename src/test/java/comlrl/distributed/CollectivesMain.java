package comlrl.distributed;

import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Tensor;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * One rank of the tests' multi-process runs: joins through the environment (as under
 * {@code launch}) with the timeout in seconds of its first argument, runs a scenario and prints
 * what it saw as {@code key: value} lines.
 * <ul>
 *   <li>{@code collectives}: sums, broadcast, gathers and a barrier with known inputs; then
 *       collectives the ranks disagree about: tensors of different shapes, counts and dtypes,
 *       different broadcast roots, different collectives — each failure's message is printed
 *       ({@code mismatch.<case>}) — and a sum that agrees, to show the context still works;</li>
 *   <li>{@code kill}: after one sum, rank 0 enters another and reports how it failed, while the
 *       other ranks print {@code busy} and wait to be killed;</li>
 *   <li>{@code hang}: as {@code kill}, but the other ranks stay alive (and never enter).</li>
 *   <li>{@code loop}: sums every 50 ms for two minutes (printing {@code looping} after the first); a failure
 *       prints {@code failed.message} and exits with code 1.</li>
 * </ul>
 */
public final class CollectivesMain {
    private CollectivesMain() {
    }

    public static void main(String[] args) throws Exception {
        Duration timeout = Duration.ofMillis(Math.round(Double.parseDouble(args[0]) * 1000));
        String scenario = args[1];
        DistributedContext.Options options = DistributedContext.Options.defaults().withTimeout(timeout)
                .withRendezvousTimeout(Duration.ofSeconds(60));
        try (DistributedContext ctx = DistributedContext.fromEnvironment(System.getenv(), options)) {
            System.out.println("joined: " + ctx.rank() + " " + ctx.worldSize() + " " + ctx.localRank() + " "
                    + ctx.isMain() + " " + ctx.backend().configName() + " " + ctx.device());
            switch (scenario) {
                case "collectives" -> {
                    collectives(ctx);
                    mismatch(ctx);
                }
                case "kill", "hang" -> failure(ctx);
                case "loop" -> loop(ctx);
                default -> throw new IllegalArgumentException(scenario);
            }
        }
        System.out.println("closed");
    }

    private static void collectives(DistributedContext ctx) {
        int r = ctx.rank();
        // integers held as floats: sums are exact, so every rank must see the same bits
        Tensor a = Tensor.ofFloats(new float[] {1e6f + r, 2 * r, -3, 8_000_000f + r, 0.5f, r}, Device.CPU, 2, 3);
        Tensor b = Tensor.ofDoubles(new double[] {r, 10 * r, 1e15 + r}, Device.CPU);
        Tensor c = Tensor.ofLongs(new long[] {r, 1L << 40, -r}, Device.CPU);
        Tensor d = Tensor.ofFloats(new float[] {r, 2 * r, 3 * r, 4 * r}, Device.CPU, 2, 2).transpose(0, 1); // not contiguous
        Tensor e = Tensor.ofFloats(new float[] {7 + r}, Device.CPU); // float32 again: shares a's bucket
        Tensor f = Tensor.ofFloats(new float[] {r + 1, 256 * r}, Device.CPU).to(DType.BF16);
        ctx.allReduceSum(List.of(a, b, c, d, e, f));
        System.out.println("sum.a: " + Arrays.toString(a.toFloatArray()));
        System.out.println("sum.b: " + Arrays.toString(b.toDoubleArray()));
        System.out.println("sum.c: " + Arrays.toString(c.toLongArray()));
        System.out.println("sum.d: " + Arrays.toString(d.toFloatArray()));
        System.out.println("sum.e: " + Arrays.toString(e.toFloatArray()));
        System.out.println("sum.f: " + f.dtype() + " " + Arrays.toString(f.toFloatArray()));
        Tensor single = Tensor.ofFloats(new float[] {r + 1, 100}, Device.CPU);
        ctx.allReduceSum(List.of(single)); // reduced where it is
        System.out.println("sum.single: " + Arrays.toString(single.toFloatArray()));

        int root = ctx.worldSize() - 1;
        Tensor t = r == root ? Tensor.ofFloats(new float[] {7, 8, 9}, Device.CPU) : Tensor.zerosOf(DType.F32, Device.CPU, 3);
        ctx.broadcast(t, root);
        System.out.println("broadcast: " + Arrays.toString(t.toFloatArray()));

        List<byte[]> all = ctx.allGatherBytes(payload(r));
        boolean same = all.size() == ctx.worldSize();
        for (int k = 0; k < all.size(); k++) {
            same &= Arrays.equals(all.get(k), payload(k));
        }
        System.out.println("gather.lengths: " + all.stream().map(x -> Integer.toString(x.length)).toList());
        System.out.println("gather.equal: " + same);
        List<byte[]> empty = ctx.allGatherBytes(new byte[0]);
        System.out.println("gather.empty: " + empty.size() + " " + empty.stream().mapToInt(x -> x.length).sum());
        ctx.barrier();
        System.out.println("barrier: passed");
    }

    /** What rank {@code r} contributes to the gather: none at rank 0, text of different lengths elsewhere. */
    private static byte[] payload(int r) {
        return r == 0 ? new byte[0] : ("ünïcode from rank " + r + " " + "x".repeat(1000 * r)).getBytes(StandardCharsets.UTF_8);
    }

    private static void mismatch(DistributedContext ctx) {
        int r = ctx.rank();
        Tensor same = Tensor.zerosOf(DType.F32, Device.CPU, 2, 3);
        report("shape", () -> ctx.allReduceSum(List.of(same, Tensor.zerosOf(DType.F32, Device.CPU, 4, 3 + r))));
        report("count", () -> ctx.allReduceSum(r == 0 ? List.of(same) : List.of(same, same)));
        report("dtype", () -> ctx.broadcast(Tensor.zerosOf(r == 0 ? DType.F32 : DType.F64, Device.CPU, 3), 0));
        report("root", () -> ctx.broadcast(Tensor.zerosOf(DType.F32, Device.CPU, 3), r));
        report("order", () -> {
            if (r == 0) {
                ctx.barrier();
            } else {
                ctx.allGatherBytes(new byte[] {1, 2});
            }
        });
        Tensor t = Tensor.ofFloats(new float[] {r + 1}, Device.CPU);
        ctx.allReduceSum(List.of(t));
        System.out.println("after: " + Arrays.toString(t.toFloatArray()));
    }

    private static void report(String name, Runnable call) {
        try {
            call.run();
            System.out.println("mismatch." + name + ": none");
        } catch (DistributedException e) {
            System.out.println("mismatch." + name + ": " + e.getMessage() + " suspects " + e.suspects());
        }
    }

    private static void loop(DistributedContext ctx) throws InterruptedException {
        try {
            for (int i = 0; i < 2400; i++) {
                ctx.allReduceSum(List.of(Tensor.ofFloats(new float[] {1}, Device.CPU)));
                if (i == 0) {
                    System.out.println("looping");
                }
                Thread.sleep(50);
            }
        } catch (DistributedException e) {
            System.out.println("failed.message: " + e.getMessage());
            System.out.flush();
            System.exit(1);
        }
    }

    private static void failure(DistributedContext ctx) throws InterruptedException {
        ctx.allReduceSum(List.of(Tensor.ofFloats(new float[] {1}, Device.CPU)));
        if (ctx.rank() != 0) {
            System.out.println("busy");
            Thread.sleep(120_000);
            return;
        }
        System.out.println("entering");
        long start = System.nanoTime();
        try {
            ctx.allReduceSum(List.of(Tensor.ofFloats(new float[] {1}, Device.CPU)));
            System.out.println("unexpected: the sum completed");
        } catch (DistributedException e) {
            System.out.printf(Locale.ROOT, "failed.ms: %d%n", (System.nanoTime() - start) / 1_000_000);
            System.out.println("failed.suspects: " + e.suspects());
            System.out.println("failed.message: " + e.getMessage());
        }
    }
}
