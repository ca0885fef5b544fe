/**
 * Several processes training together: {@link comlrl.distributed.DistributedContext} (rank, world
 * size, collectives over libtorch's c10d: all-reduce, broadcast, all-gather of bytes, barrier) and
 * {@link comlrl.distributed.Launcher} (starts one process per rank with torchrun's variables, as
 * {@code bin/comlrl launch} does). The trainers do not use them yet.
 */
package comlrl.distributed;
