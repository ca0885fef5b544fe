#!/usr/bin/env python3
"""Records value_head.pt files as the reference writes them, for ValueHeadFilesTest.

Each file is torch.save(head.state_dict(), path) of the reference ValueHead (an OrderedDict with
_metadata, memoised pickle), its values set by fill_pattern: element k of the i-th tensor is k/8 - i.

  /tmp/pyref/bin/python scripts/record-value-head-fixtures.py src/test/resources/value-head
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src", "test", "python"))
from reference_value_head import ValueHead, fill_pattern  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for name, hidden, dtype in [("no-hidden-f32.pt", None, torch.float32),
                            ("hidden-3-f32.pt", 3, torch.float32),
                            ("hidden-3-bf16.pt", 3, torch.bfloat16)]:
    head = ValueHead(4, hidden)
    fill_pattern(head)
    torch.save(head.to(dtype).state_dict(), os.path.join(out, name))
    print(name, {k: tuple(v.shape) for k, v in head.state_dict().items()})
