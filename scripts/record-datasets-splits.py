#!/usr/bin/env python3
"""Records what Hugging Face `datasets` and NumPy select for a seed, as golden values for
comlrl.data (NumpyPermutationGoldenTest, DatasetSplitGoldenTest).

Writes src/test/resources/datasets-splits/:
  bitgen.json       per seed: SeedSequence(seed).pool, generate_state(4, uint64), the PCG64
                    state and increment after seeding, the first random_raw() values and the first
                    next_uint32 values of a fresh generator (PCG64 + SeedSequence on their own)
  permutation.json  np.random.default_rng(seed).permutation(n) per seed and n, plus head, tail and
                    checksum sum(i * perm[i]) for a few large n
  shuffle.json      Dataset.from_dict({"i": range(n)}).shuffle(seed=seed)["i"]
  split.json        Dataset.from_dict({"i": range(n)}).train_test_split(test_size, seed=seed):
                    the train and test "i" lists, or the ValueError message when datasets refuses

Usage (needs datasets and numpy; the Java tests never run Python):
  /tmp/pyref/bin/python scripts/record-datasets-splits.py      # from the repository root
Recorded with datasets 5.0.1 and numpy 2.4.6 (the versions are written into every file).
"""
import json
import os
import sys

import datasets
import numpy as np
from datasets import Dataset

SEEDS = [0, 1, 42, 1234, 2**32 + 7, 2**63 - 1]
SIZES = [0, 1, 2, 3, 5, 10, 11, 50, 100, 1000]
# (value, is_int): Python's int/float distinction decides how datasets reads test_size
TEST_SIZES = [(0.2, False), (0.25, False), (3, True), (0.5, False), (1, True), (0.07, False), (0.999, False)]
LARGE = [(65536, 42), (65537, 7), (1_000_003, 42)]

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "test", "resources", "datasets-splits")


def versions():
    return {"datasets": datasets.__version__, "numpy": np.__version__, "python": sys.version.split()[0]}


def write(name, records):
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, name)
    with open(path, "w") as f:
        json.dump({"recorded_with": versions(), "records": records}, f, separators=(",", ":"))
        f.write("\n")
    print("wrote", os.path.relpath(path), len(records), "records")


def bitgen_record(seed):
    seq = np.random.SeedSequence(seed)
    state = np.random.PCG64(seed).state["state"]
    raw = np.random.PCG64(seed).random_raw(8)
    c = np.random.PCG64(seed).ctypes
    next32 = [int(c.next_uint32(c.state)) for _ in range(8)]
    return {
        "seed": seed,
        "pool": [int(w) for w in seq.pool],
        "generate_state_u64": [int(w) for w in seq.generate_state(4, np.uint64)],
        "pcg_state": int(state["state"]),
        "pcg_inc": int(state["inc"]),
        "random_raw": [int(w) for w in raw],
        "next_uint32": next32,
    }


def column(ds):
    return [int(v) for v in ds["i"]]


def split_record(n, seed, test_size):
    ds = Dataset.from_dict({"i": list(range(n))})
    record = {"n": n, "seed": seed, "test_size": test_size[0], "test_size_is_int": test_size[1]}
    try:
        parts = ds.train_test_split(test_size=test_size[0], seed=seed)
    except ValueError as error:
        record["error"] = str(error)
        return record
    record["train"] = column(parts["train"])
    record["test"] = column(parts["test"])
    return record


def main():
    assert isinstance(TEST_SIZES[2][0], int)
    write("bitgen.json", [bitgen_record(s) for s in SEEDS])

    perms = []
    for s in SEEDS:
        for n in SIZES:
            perms.append({"n": n, "seed": s, "permutation": [int(v) for v in np.random.default_rng(s).permutation(n)]})
    for n, s in LARGE:
        p = np.random.default_rng(s).permutation(n)
        perms.append({"n": n, "seed": s, "head": [int(v) for v in p[:16]], "tail": [int(v) for v in p[-16:]],
                      "weighted_sum": int(np.dot(np.arange(n, dtype=np.int64), p))})
    write("permutation.json", perms)

    shuffles = []
    for s in SEEDS:
        for n in SIZES:
            shuffles.append({"n": n, "seed": s, "order": column(Dataset.from_dict({"i": list(range(n))}).shuffle(seed=s))})
    write("shuffle.json", shuffles)

    splits = [split_record(n, s, t) for s in SEEDS for n in SIZES for t in TEST_SIZES]
    write("split.json", splits)


if __name__ == "__main__":
    main()
