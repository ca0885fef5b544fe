package comlrl.distributed;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Where one process stands in a multi-process run: its global {@code rank} among
 * {@code worldSize} processes, its {@code localRank} on its machine (which GPU it takes), and the
 * address of the rendezvous store that rank 0 serves.
 *
 * <p>Read from the variables torchrun sets ({@code WORLD_SIZE}, {@code RANK}, {@code LOCAL_RANK},
 * {@code MASTER_ADDR}, {@code MASTER_PORT}) and {@code bin/comlrl launch} sets the same way; under
 * Slurm ({@code srun}), {@code SLURM_NTASKS}, {@code SLURM_PROCID} and {@code SLURM_LOCALID} stand
 * in when torchrun's are absent, with {@code MASTER_ADDR}/{@code MASTER_PORT} exported by the job script.
 *
 * @param rank 0 .. worldSize-1; rank 0 is the main process and serves the store
 * @param worldSize number of processes, at least 1
 * @param localRank rank among the processes on this machine, at least 0
 * @param masterAddr host name or address of rank 0's machine
 * @param masterPort TCP port of the store on {@code masterAddr}, 1..65535
 */
public record RankInfo(int rank, int worldSize, int localRank, String masterAddr, int masterPort) {
    public static final String WORLD_SIZE = "WORLD_SIZE";
    public static final String RANK = "RANK";
    public static final String LOCAL_RANK = "LOCAL_RANK";
    public static final String MASTER_ADDR = "MASTER_ADDR";
    public static final String MASTER_PORT = "MASTER_PORT";

    public RankInfo {
        if (worldSize < 1) {
            throw new IllegalArgumentException("worldSize must be at least 1, got " + worldSize);
        }
        if (rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException("rank must be in [0, " + worldSize + "), got " + rank);
        }
        if (localRank < 0) {
            throw new IllegalArgumentException("localRank must be at least 0, got " + localRank);
        }
        if (masterAddr == null || masterAddr.isBlank()) {
            throw new IllegalArgumentException("masterAddr must name rank 0's host (e.g. 127.0.0.1)");
        }
        if (masterPort < 1 || masterPort > 65535) {
            throw new IllegalArgumentException("masterPort must be in 1..65535, got " + masterPort);
        }
    }

    public boolean isMain() {
        return rank == 0;
    }

    /**
     * The placement the environment describes, or empty for a single process (no variables, or a
     * world size of 1). Fails naming what is missing when the variables describe several
     * processes only in part.
     */
    public static Optional<RankInfo> fromEnvironment(Map<String, String> env) {
        if (env.containsKey(WORLD_SIZE)) {
            int world = intVar(env, WORLD_SIZE);
            if (world <= 1) {
                return Optional.empty();
            }
            requireAll(env, "WORLD_SIZE=" + world, RANK, LOCAL_RANK, MASTER_ADDR, MASTER_PORT);
            return Optional.of(new RankInfo(intVar(env, RANK), world, intVar(env, LOCAL_RANK),
                    env.get(MASTER_ADDR).trim(), intVar(env, MASTER_PORT)));
        }
        if (env.containsKey("SLURM_NTASKS") && env.containsKey("SLURM_PROCID")) {
            int world = intVar(env, "SLURM_NTASKS");
            if (world <= 1) {
                return Optional.empty();
            }
            requireAll(env, "SLURM_NTASKS=" + world + " (a Slurm job step of several tasks)",
                    "SLURM_LOCALID", MASTER_ADDR, MASTER_PORT);
            return Optional.of(new RankInfo(intVar(env, "SLURM_PROCID"), world, intVar(env, "SLURM_LOCALID"),
                    env.get(MASTER_ADDR).trim(), intVar(env, MASTER_PORT)));
        }
        return Optional.empty();
    }

    /** torchrun's variables for this placement (what {@link #fromEnvironment} reads back). */
    public Map<String, String> toEnvironment() {
        Map<String, String> env = new LinkedHashMap<>();
        env.put(WORLD_SIZE, Integer.toString(worldSize));
        env.put(RANK, Integer.toString(rank));
        env.put(LOCAL_RANK, Integer.toString(localRank));
        env.put(MASTER_ADDR, masterAddr);
        env.put(MASTER_PORT, Integer.toString(masterPort));
        return env;
    }

    private static void requireAll(Map<String, String> env, String context, String... names) {
        List<String> missing = new ArrayList<>();
        for (String n : names) {
            if (env.get(n) == null || env.get(n).isBlank()) {
                missing.add(n);
            }
        }
        if (!missing.isEmpty()) {
            throw new IllegalArgumentException(context + " says this is one of several processes, but "
                    + String.join(", ", missing) + (missing.size() == 1 ? " is" : " are") + " not set: start the "
                    + "processes with bin/comlrl launch or torchrun (which set them all), export MASTER_ADDR and "
                    + "MASTER_PORT in a Slurm job script, or run a single process");
        }
    }

    private static int intVar(Map<String, String> env, String name) {
        String v = env.get(name);
        try {
            return Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be an integer, got '" + v + "'", e);
        }
    }
}
