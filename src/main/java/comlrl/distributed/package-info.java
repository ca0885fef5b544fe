/**
 * Several processes training together: {@link comlrl.distributed.DistributedContext} (rank, world
 * size, collectives over libtorch's c10d: all-reduce, broadcast, all-gather of bytes, barrier),
 * {@link comlrl.distributed.Launcher} (starts one process per rank with torchrun's variables, as
 * {@code bin/comlrl launch} does), the wire of values between processes ({@link comlrl.distributed.Codec},
 * {@link comlrl.distributed.Codecs}, {@link comlrl.distributed.Exchange}) and the optimizer state
 * sharded over them ({@link comlrl.distributed.ShardedAdamW}, ZeRO stage 1). The trainers reach these
 * through {@code comlrl.distributed.RankWork}; nothing here depends on the trainers.
 */
package comlrl.distributed;
