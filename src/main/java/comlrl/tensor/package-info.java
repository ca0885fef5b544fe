/**
 * The only package that touches libtorch (through JavaCPP): tensors and their operations, native
 * memory scopes, autograd modes, seeded generators, devices and the AdamW optimizer. Everything
 * above it speaks in {@link comlrl.tensor.Tensor}.
 */
package comlrl.tensor;
