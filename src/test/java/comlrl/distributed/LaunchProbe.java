package comlrl.distributed;

/**
 * A child of the launcher tests: prints the variables it was given, then rank
 * {@code args[0]} exits with code {@code args[1]} after a moment while the other ranks start a
 * grandchild ({@code sleep}) and wait; with {@code args[2] = stubborn} they also ignore a polite
 * stop for a minute (a shutdown hook that sleeps), so only a kill ends them.
 */
public final class LaunchProbe {
    private LaunchProbe() {
    }

    public static void main(String[] args) throws Exception {
        int rank = Integer.parseInt(System.getenv("RANK"));
        System.out.println("env: " + System.getenv("WORLD_SIZE") + " " + rank + " " + System.getenv("LOCAL_RANK") + " "
                + System.getenv("LOCAL_WORLD_SIZE") + " " + System.getenv("MASTER_ADDR") + " " + System.getenv("MASTER_PORT"));
        System.out.println("pid: " + ProcessHandle.current().pid());
        if (rank == Integer.parseInt(args[0])) {
            Thread.sleep(500);
            System.err.println("failing on purpose");
            System.exit(Integer.parseInt(args[1]));
        }
        Process sleeper = new ProcessBuilder("sleep", "120").start();
        System.out.println("grandchild: " + sleeper.pid());
        if (args.length > 2 && args[2].equals("stubborn")) {
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    Thread.sleep(60_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        System.out.print("progress 1\rprogress 2\r\n");
        Thread.sleep(120_000);
    }
}
