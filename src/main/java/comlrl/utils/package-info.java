/**
 * Helpers shared by every trainer, mirroring Python's {@code comlrl.utils}: reward processors
 * ({@link comlrl.utils.RewardProcessor}, {@link comlrl.utils.RewardProcessors}), prompt formatters
 * ({@link comlrl.utils.Formatter}, {@link comlrl.utils.MultiTurnFormatter},
 * {@link comlrl.utils.Formatters}, {@link comlrl.utils.TemplateFormatter}), config enums shared by
 * several algorithm configs ({@link comlrl.utils.ParallelTraining},
 * {@link comlrl.utils.CollaborationMode}) and the snake_case config-map reading used by every
 * {@code fromMap} ({@link comlrl.utils.ConfigMaps}). Plain Java, no tensors; {@link comlrl.utils.JsonLinesProcess} runs child processes for command-backed callbacks.
 */
package comlrl.utils;
