/**
 * Model files on disk: reading and writing Hugging Face model directories (safetensors weights,
 * validated as the format requires; configs), saving them atomically ({@link comlrl.model.io.ModelDirs})
 * after a free-space check ({@link comlrl.model.io.DiskSpace}), the temporary names every writer uses
 * and the removal of those killed writers left ({@link comlrl.model.io.StaleTemps}), PyTorch {@code torch.save} state dicts
 * ({@link comlrl.model.io.TorchSave}), and resolving model ids such as
 * {@code Qwen/Qwen2.5-0.5B} to a local directory through the standard Hugging Face cache
 * ({@link comlrl.model.io.HubCache}), downloading missing files unless {@code HF_HUB_OFFLINE} is set.
 * The same cache serves dataset repositories ({@link comlrl.model.io.HubCache#datasetRepo}, file
 * lists from the hub's API) to {@code comlrl.data}; that part uses no tensors.
 */
package comlrl.model.io;
