"""Prints what Hugging Face `datasets.load_from_disk` reads from a save_to_disk directory, as one
JSON object: {"datasets": VERSION, "dataset": VALUES} for a Dataset, or
{"datasets": VERSION, "splits": {SPLIT: VALUES, ...}} for a DatasetDict, where
VALUES = {"features": FEATURES, "columns": [NAME, ...], "rows": [{NAME: VALUE, ...}, ...]}.

Values are written as JSON the way comlrl.data holds them: strings, booleans, null, integers,
floats (NaN and infinities as the bare words NaN, Infinity, -Infinity), lists and objects; plus
  {"$bytes": BASE64}      binary values
  {"$decimal": "12.30"}   decimals, with their scale
and dates, times, timestamps and durations as their stored integers (days since 1970-01-01 for
date32, milliseconds for date64, the column's unit otherwise), which is what comlrl.data reads.

usage: disk_dataset_values.py DIR
"""
import base64
import datetime
import decimal
import json
import re
import sys

import datasets
from datasets import ClassLabel, LargeList, List, Value

EPOCH_DAY = datetime.date(1970, 1, 1)
EPOCH = datetime.datetime(1970, 1, 1)
UNITS = {"s": 1_000_000, "ms": 1000, "us": 1, "ns": None}


def micros(delta):
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds


def stored(value, dtype):
    """The integer Arrow stores for a temporal value of `dtype`."""
    if dtype == "date32":
        return (value - EPOCH_DAY).days
    if dtype == "date64":
        return (value - EPOCH_DAY).days * 86_400_000
    unit = re.search(r"\[(\w+)", dtype).group(1)
    if isinstance(value, datetime.datetime):
        us = micros(value.replace(tzinfo=None) - EPOCH)
    elif isinstance(value, datetime.time):
        us = ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
    else:
        us = micros(value)
    assert UNITS[unit] is not None, "nanosecond columns are not recorded"
    assert us % UNITS[unit] == 0, (value, dtype)
    return us // UNITS[unit]


def encode(value, feature):
    """A Python value of `feature` as the JSON described above."""
    if value is None:
        return None
    if isinstance(feature, (List, LargeList)):
        return [encode(v, feature.feature) for v in value]
    if isinstance(feature, list):
        return [encode(v, feature[0]) for v in value]
    if isinstance(feature, dict):
        return {k: encode(value[k], f) for k, f in feature.items()}
    if isinstance(feature, ClassLabel):
        return value
    assert isinstance(feature, Value), feature
    dtype = feature.dtype
    if dtype.startswith(("date", "time", "duration")):
        return stored(value, dtype)
    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    if isinstance(value, decimal.Decimal):
        return {"$decimal": str(value)}
    return value


def split_values(ds):
    features = ds.features
    rows = [{c: encode(row[c], features[c]) for c in ds.column_names} for row in ds]
    return {"features": features.to_dict(), "columns": ds.column_names, "rows": rows}


def values(loaded):
    """The JSON object above for a loaded Dataset or DatasetDict."""
    if isinstance(loaded, datasets.DatasetDict):
        return {"datasets": datasets.__version__, "splits": {name: split_values(ds) for name, ds in loaded.items()}}
    return {"datasets": datasets.__version__, "dataset": split_values(loaded)}


if __name__ == "__main__":
    json.dump(values(datasets.load_from_disk(sys.argv[1])), sys.stdout)
    sys.stdout.write("\n")
