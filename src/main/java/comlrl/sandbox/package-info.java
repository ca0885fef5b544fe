/**
 * A sandbox for model-written code: each execution is a separate interpreter process (Python 3 by default)
 * in a fresh working directory, without network, with limits on wall time, CPU time, memory, processes, open
 * files, file size and output, and nothing left running afterwards. {@link comlrl.sandbox.Sandbox} runs one
 * program and its assert tests, or many in parallel through a worker pool with a cache of identical
 * (code, tests) pairs; {@link comlrl.sandbox.ExecutionResult} says what happened.
 *
 * <p>How a run is isolated is the {@link comlrl.sandbox.Isolation} of its {@link comlrl.sandbox.SandboxConfig}:
 * {@code namespaces} (the default: new user, mount, PID, IPC and network namespaces through util-linux
 * {@code unshare}, every mount read-only except a private scratch file system) or {@code process} (a weaker
 * mode chosen explicitly where namespaces are not available: limits, process group and minimal environment
 * only). Depends on nothing else in comlrl.
 */
package comlrl.sandbox;
