"""Reads a W&B run's transaction log (run-<id>.wandb) with the protobuf classes that ship in the SDK
and prints what it holds as one JSON object: the run's id, name, project and tags, its config, every
history row (step and values) and the summary.

The file is a LevelDB-style log: a 7-byte header (":W&B", magic, version), then 32 KiB blocks of
records  checksum:u32 | length:u16 | type:u8 | data  (type 1 full, 2 first, 3 middle, 4 last), where
the data of a full record (or of first..last joined) is one wandb_internal_pb2.Record.

usage: wandb_records.py RUN_DIR_OR_WANDB_FILE...
"""
import glob
import json
import os
import struct
import sys

from wandb.proto import wandb_internal_pb2

BLOCK = 32768
HEADER = 7


def records(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:4] == b":W&B", "not a W&B transaction log: %s" % path
    pos = HEADER
    pending = b""
    while pos + HEADER <= len(data):
        left = BLOCK - pos % BLOCK
        if left < HEADER:  # block trailer
            pos += left
            continue
        _checksum, length, kind = struct.unpack("<IHB", data[pos:pos + HEADER])
        pos += HEADER
        chunk = data[pos:pos + length]
        pos += length
        if kind == 0 and length == 0:
            continue
        if kind == 1:
            yield chunk
        elif kind == 2:
            pending = chunk
        elif kind == 3:
            pending += chunk
        elif kind == 4:
            yield pending + chunk
            pending = b""


def value(item):
    return json.loads(item.value_json)


def key(item):
    return "/".join(item.nested_key) if item.nested_key else item.key


def read(path):
    out = {"history": [], "config": {}, "summary": {}, "tags": [], "id": None, "name": None, "project": None,
           "exit_code": None}
    for raw in records(path):
        r = wandb_internal_pb2.Record()
        r.ParseFromString(raw)
        kind = r.WhichOneof("record_type")
        if kind == "run":
            out["id"] = r.run.run_id
            out["name"] = r.run.display_name
            out["project"] = r.run.project
            out["tags"] = list(r.run.tags)
            for item in r.run.config.update:
                out["config"][key(item)] = value(item)
        elif kind == "config":
            for item in r.config.update:
                out["config"][key(item)] = value(item)
        elif kind == "history":
            row = {key(item): value(item) for item in r.history.item}
            out["history"].append({"step": r.history.step.num, "values": row})
        elif kind == "summary":
            for item in r.summary.update:
                out["summary"][key(item)] = value(item)
        elif kind == "exit":
            out["exit_code"] = r.exit.exit_code
    return out


def main():
    runs = []
    for arg in sys.argv[1:]:
        files = [arg] if arg.endswith(".wandb") else glob.glob(os.path.join(arg, "**", "*.wandb"), recursive=True)
        # latest-run is a link to the newest run directory: each file once, in run order
        unique = sorted({os.path.realpath(f) for f in files})
        runs.extend(read(f) for f in unique)
    print(json.dumps(runs))


if __name__ == "__main__":
    main()
