/**
 * Several processes training together: {@link comlrl.distributed.DistributedContext} (rank, world
 * size, collectives over libtorch's c10d: all-reduce, broadcast, all-gather of bytes, barrier),
 * {@link comlrl.distributed.Launcher} (starts one process per rank with torchrun's variables, as
 * {@code bin/comlrl launch} does), the wire of values between processes ({@link comlrl.distributed.Codec},
 * {@link comlrl.distributed.Codecs}, {@link comlrl.distributed.Exchange}) and the optimizer state
 * sharded over them ({@link comlrl.distributed.ShardedAdamW}, ZeRO stage 1). What one process does in
 * such a run ({@link comlrl.distributed.RankWork}: the rows or agents it owns, the exchanges that keep
 * every process on the one-process computation), the per-agent values it holds
 * ({@link comlrl.distributed.HeldAgents}) and the per-agent threads of {@code parallel_training: mp}
 * ({@link comlrl.distributed.AgentExecutor}). The trainers stand on these; nothing here depends on the trainers.
 */
package comlrl.distributed;
