#!/usr/bin/env python3
"""Writes save_to_disk directories with Hugging Face `datasets`, and what `datasets.load_from_disk`
reads back from them, as fixtures for comlrl.data (DiskDatasetTest).

Writes src/test/resources/disk-datasets/:
  tasks/           Dataset.save_to_disk of 4 rows with a column of every type a task item holds:
                   string, large_string, int8..int64, uint8..uint64, float16/32/64 (NaN, infinity),
                   bool, ClassLabel, null, date32, timestamp[ms], decimal128, binary, lists
                   (list, large_list, fixed-size, list of lists), a struct with a list and a struct
                   inside, a list of structs; nulls in every column
  dict/            DatasetDict.save_to_disk with splits train (3 rows, 2 data files) and test (2 rows)
  selected/        a Dataset after shuffle(seed=1).select([0, 2, 4]), saved (datasets writes the
                   selected rows in order, without an indices mapping)
  legacy-indices/  the layout datasets 1.x wrote for a dataset with an indices mapping, built with
                   pyarrow: dataset.arrow (6 rows in two record batches), indices.arrow (an
                   "indices" uint64 column) and state.json listing both
  expected.json    {NAME: what load_from_disk gives} as src/test/python/disk_dataset_values.py
                   writes it; for legacy-indices, load_from_disk(...).select(indices), which is what
                   datasets 1.x gave (newer versions ignore the mapping)

Usage (needs datasets; the Java tests never run Python):
  /tmp/dsvenv/bin/python scripts/record-disk-datasets.py      # from the repository root
"""
import datetime
import decimal
import json
import os
import shutil
import sys

import datasets
import pyarrow as pa
from datasets import ClassLabel, Dataset, DatasetDict, Features, LargeList, List, Value
from datasets.table import InMemoryTable

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.path.join(ROOT, "src", "test", "resources", "disk-datasets")
sys.path.insert(0, os.path.join(ROOT, "src", "test", "python"))
from disk_dataset_values import values  # noqa: E402

TASK_FEATURES = Features({
    "prompt": Value("string"),
    "notes": Value("large_string"),
    "i8": Value("int8"),
    "i16": Value("int16"),
    "i32": Value("int32"),
    "i64": Value("int64"),
    "u8": Value("uint8"),
    "u16": Value("uint16"),
    "u32": Value("uint32"),
    "u64": Value("uint64"),
    "f16": Value("float16"),
    "f32": Value("float32"),
    "f64": Value("float64"),
    "ok": Value("bool"),
    "label": ClassLabel(names=["neg", "pos"]),
    "nothing": Value("null"),
    "day": Value("date32"),
    "at": Value("timestamp[ms]"),
    "price": Value("decimal128(10, 2)"),
    "blob": Value("binary"),
    "tags": List(Value("string")),
    "counts": LargeList(Value("int32")),
    "vec": List(Value("float32"), length=3),
    "grid": List(List(Value("int64"))),
    "meta": {"source": Value("string"), "scores": List(Value("int64")),
             "inner": {"flag": Value("bool"), "weight": Value("float32")}},
    "tests": List({"input": Value("string"), "expected": Value("int64")}),
})

TASK_ROWS = {
    "prompt": ["Write a haiku.", "Zähle bis drei: 一二三", "", None],
    "notes": ["large string", None, "x" * 40, "tab\tand\nnewline"],
    "i8": [-128, 127, 0, None],
    "i16": [-32768, 32767, -1, None],
    "i32": [-2**31, 2**31 - 1, 7, None],
    "i64": [-2**63, 2**63 - 1, 42, None],
    "u8": [0, 255, 1, None],
    "u16": [0, 65535, 2, None],
    "u32": [0, 2**32 - 1, 3, None],
    "u64": [0, 2**64 - 1, 2**63, None],
    "f16": [1.5, -0.0999755859375, 65504.0, None],
    "f32": [0.1, -3.4028234663852886e38, float("inf"), None],
    "f64": [0.1, float("nan"), -float("inf"), None],
    "ok": [True, False, None, True],
    "label": [0, 1, None, 1],
    "nothing": [None, None, None, None],
    "day": [datetime.date(2024, 1, 2), datetime.date(1969, 12, 31), None, datetime.date(1970, 1, 1)],
    "at": [datetime.datetime(2024, 1, 2, 3, 4, 5, 123000), None, datetime.datetime(1960, 6, 1),
           datetime.datetime(1970, 1, 1)],
    "price": [decimal.Decimal("12.30"), decimal.Decimal("-0.01"), None, decimal.Decimal("99999999.99")],
    "blob": [b"\x00\x01\xff", b"", None, b"abc"],
    "tags": [["a", "b"], [], None, ["c", None]],
    "counts": [[1, 2, 3], None, [], [-1]],
    "vec": [[0.5, 1.0, -2.25], None, [0.0, 0.1, 0.2], [1.0, 2.0, 3.0]],
    "grid": [[[1, 2], [3]], [[]], None, [[4], None, [5, 6]]],
    "meta": [
        {"source": "gsm8k", "scores": [1, 2], "inner": {"flag": True, "weight": 0.25}},
        {"source": None, "scores": [], "inner": {"flag": None, "weight": None}},
        None,
        {"source": "mbpp", "scores": None, "inner": None},
    ],
    "tests": [
        [{"input": "1 2", "expected": 3}, {"input": "2 2", "expected": 4}],
        [],
        None,
        [{"input": None, "expected": None}],
    ],
}


def dict_splits():
    features = Features({"prompt": Value("string"), "target": Value("int64"),
                         "tests": List({"input": Value("string"), "expected": Value("int64")})})
    train = Dataset.from_dict({
        "prompt": ["add 1 and 2", "add 2 and 2", "add 5 and -1"],
        "target": [3, 4, 4],
        "tests": [[{"input": "1 2", "expected": 3}], [], None],
    }, features=features, split="train")
    test = Dataset.from_dict({
        "prompt": ["add 0 and 0", None],
        "target": [0, None],
        "tests": [[{"input": "0 0", "expected": 0}], [{"input": "9 9", "expected": 18}]],
    }, features=features, split="test")
    return DatasetDict({"train": train, "test": test})


def write_legacy_indices(path):
    """datasets 1.x: dataset.arrow, indices.arrow and state.json naming both (stream format)."""
    os.makedirs(path)
    table = pa.table({"i": pa.array(range(6), pa.int64()), "s": pa.array([f"row {i}" for i in range(6)])})
    with pa.OSFile(os.path.join(path, "dataset.arrow"), "wb") as sink:
        with pa.ipc.new_stream(sink, table.schema) as writer:
            for batch in table.to_batches(max_chunksize=4):
                writer.write_batch(batch)
    indices = pa.table({"indices": pa.array([5, 0, 3, 3], pa.uint64())})
    with pa.OSFile(os.path.join(path, "indices.arrow"), "wb") as sink:
        with pa.ipc.new_stream(sink, indices.schema) as writer:
            writer.write_table(indices)
    state = {"_data_files": [{"filename": "dataset.arrow"}], "_indices_data_files": [{"filename": "indices.arrow"}],
             "_fingerprint": "legacy0000000000", "_format_columns": None, "_format_kwargs": {},
             "_format_type": None, "_output_all_columns": False, "_split": None}
    with open(os.path.join(path, "state.json"), "w") as f:
        json.dump(state, f, indent=2, sort_keys=True)
    info = {"citation": "", "description": "", "features": {"i": {"dtype": "int64", "_type": "Value"},
                                                            "s": {"dtype": "string", "_type": "Value"}},
            "homepage": "", "license": ""}
    with open(os.path.join(path, "dataset_info.json"), "w") as f:
        json.dump(info, f, indent=2)
    return [5, 0, 3, 3]


def main():
    if os.path.exists(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    expected = {}

    # through pyarrow with the features' schema: Dataset.from_dict infers int64 before it casts,
    # which cannot hold 2**64 - 1
    tasks = Dataset(InMemoryTable.from_pydict(TASK_ROWS, schema=TASK_FEATURES.arrow_schema))
    tasks.save_to_disk(os.path.join(OUT, "tasks"))
    expected["tasks"] = values(datasets.load_from_disk(os.path.join(OUT, "tasks")))

    dict_splits().save_to_disk(os.path.join(OUT, "dict"), num_shards={"train": 2, "test": 1})
    expected["dict"] = values(datasets.load_from_disk(os.path.join(OUT, "dict")))

    selected = Dataset.from_dict({"i": list(range(6)), "s": [f"row {i}" for i in range(6)]})
    selected.shuffle(seed=1).select([0, 2, 4]).save_to_disk(os.path.join(OUT, "selected"))
    expected["selected"] = values(datasets.load_from_disk(os.path.join(OUT, "selected")))

    legacy = os.path.join(OUT, "legacy-indices")
    indices = write_legacy_indices(legacy)
    expected["legacy-indices"] = values(datasets.load_from_disk(legacy).select(indices))

    recorded = {"datasets": datasets.__version__, "pyarrow": pa.__version__, "python": sys.version.split()[0]}
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump({"recorded_with": recorded, "expected": expected}, f, indent=1)
        f.write("\n")
    for name in sorted(os.listdir(OUT)):
        print("wrote", os.path.relpath(os.path.join(OUT, name)))


if __name__ == "__main__":
    main()
