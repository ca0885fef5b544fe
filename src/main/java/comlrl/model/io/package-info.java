/**
 * Model files on disk: reading and writing Hugging Face model directories (safetensors weights,
 * configs) and resolving model ids such as {@code Qwen/Qwen2.5-0.5B} to a local directory through
 * the standard Hugging Face cache ({@link comlrl.model.io.HubCache}), downloading missing files
 * unless {@code HF_HUB_OFFLINE} is set.
 */
package comlrl.model.io;
