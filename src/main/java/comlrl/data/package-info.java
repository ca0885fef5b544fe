/**
 * Task sets: the rows ({@link comlrl.data.TaskItem}) that trainers turn into agent prompts and pass
 * to reward functions as {@code batch_items}.
 *
 * <p>This package owns the in-memory {@link comlrl.data.Dataset} (the Java counterpart of a Hugging
 * Face {@code Dataset}: column/row construction, {@code select}, {@code shuffle(seed)},
 * {@code train_test_split(test_size, seed)}, both selecting exactly the rows {@code datasets} selects
 * for the same seed through a port of NumPy's {@code default_rng(seed).permutation}), its file
 * loaders (JSON Lines, JSON, CSV/TSV, Parquet), Hugging Face hub datasets by id
 * ({@link comlrl.data.HubDatasets}, one {@link comlrl.data.HubSplit} at a time),
 * and the streaming {@link comlrl.data.JsonlStream} and {@link comlrl.data.ParquetStream} (the
 * counterparts of an {@code IterableDataset}, Parquet read row group by row group) whose position
 * can be saved in a checkpoint and restored. Loading errors are reported as
 * {@link comlrl.data.DatasetException}s that name the file, the line or row, and how to fix it.
 * {@link comlrl.data.TaskSet#requireRows} checks, before training, that a set has rows and that they
 * hold the fields their readers need ({@link comlrl.data.RequiredFields}); the file loaders check
 * what a file declares (Arrow message and buffer sizes, Parquet chunk and page sizes, row counts,
 * data file paths) against what it holds before allocating by it.
 *
 * <p>{@link comlrl.data.Dataset#loadFromDisk} and {@link comlrl.data.Dataset#saveToDisk} read and
 * write the directories of Hugging Face's {@code save_to_disk} / {@code load_from_disk} (Arrow IPC
 * streams with {@code state.json} and {@code dataset_info.json}, and {@code DatasetDict} splits).
 *
 * <p>Nothing here depends on tensors, models or trainers; hub datasets use only the Hugging Face
 * cache of {@code comlrl.model.io} ({@code HubCache}, {@code HubRepo}), which is plain file and
 * HTTP code.
 */
package comlrl.data;
