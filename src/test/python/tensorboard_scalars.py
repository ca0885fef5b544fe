"""Loads a directory of TensorBoard event files with TensorBoard's Python readers and prints the scalars.

Usage: python tensorboard_scalars.py DIR
Prints {"file_version": ..., "event_accumulator": SCALARS, "plugin_event_accumulator": SCALARS}, where
SCALARS is {tag: [[wall_time, step, value], ...]} (NaN and infinities as JSON's NaN / Infinity / -Infinity):
what EventAccumulator gives, and what the TensorBoard server's Python loader (--load_fast=false) gives.
Used by comlrl.logging.TensorBoardPythonTest (tag "python").
"""
import json
import sys

from tensorboard.backend.event_processing import event_accumulator
from tensorboard.backend.event_processing import plugin_event_accumulator
from tensorboard.util import tensor_util


def main():
    directory = sys.argv[1]
    plain = event_accumulator.EventAccumulator(directory, size_guidance={event_accumulator.SCALARS: 0})
    plain.Reload()
    scalars = {tag: [[e.wall_time, e.step, e.value] for e in plain.Scalars(tag)]
               for tag in plain.Tags()[event_accumulator.SCALARS]}
    plugin = plugin_event_accumulator.EventAccumulator(directory, size_guidance={plugin_event_accumulator.TENSORS: 0})
    plugin.Reload()
    tensors = {tag: [[e.wall_time, e.step, float(tensor_util.make_ndarray(e.tensor_proto).item())]
                     for e in plugin.Tensors(tag)]
               for tag in plugin.Tags()[plugin_event_accumulator.TENSORS]}
    print(json.dumps({"file_version": plain.file_version, "event_accumulator": scalars,
                      "plugin_event_accumulator": tensors}))


if __name__ == "__main__":
    main()
