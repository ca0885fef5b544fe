/**
 * Helpers shared by every trainer, mirroring Python's {@code comlrl.utils}: reward processors
 * ({@link comlrl.utils.RewardProcessor}, {@link comlrl.utils.RewardProcessors}), prompt formatters
 * ({@link comlrl.utils.Formatter}, {@link comlrl.utils.MultiTurnFormatter},
 * {@link comlrl.utils.Formatters}, {@link comlrl.utils.TemplateFormatter}), config enums shared by
 * several algorithm configs ({@link comlrl.utils.ParallelTraining},
 * {@link comlrl.utils.CollaborationMode}), the snake_case config-map reading used by every
 * {@code fromMap} ({@link comlrl.utils.ConfigMaps}), and the field-table config machinery of the
 * actor-critic and preference configs ({@link comlrl.utils.ConfigField},
 * {@link comlrl.utils.TrainerFields}, {@link comlrl.utils.FieldTableConfig}, and {@link comlrl.utils.PerAgent} for the
 * generation settings given per agent). Plain Java, no tensors; {@link comlrl.utils.JsonLinesProcess} runs child processes for command-backed callbacks.
 */
package comlrl.utils;
