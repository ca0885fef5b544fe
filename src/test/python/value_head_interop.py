"""Opens a value head saved by ValueHead.save the way the reference restores one, and saves one as the
reference does, for ValueHeadPythonTest.

  python value_head_interop.py JAVA_DIR PY_DIR INPUT_DIM HIDDEN_DIM HIDDEN_JSON

JAVA_DIR holds value_head.pt and value_head.safetensors written by Java; HIDDEN_JSON a nested list
[B][S][E] of hidden states. Prints one JSON object: what torch.load(weights_only=True) found (keys,
shapes, values; also with mmap=True), the values of the reference ValueHead after load_state_dict on
those hidden states, what safetensors found, and a state dict the reference saved into PY_DIR with the
values it computes from it.
"""
import json
import os
import sys

import torch
from safetensors.torch import load_file

sys.path.insert(0, os.path.dirname(__file__))
from reference_value_head import ValueHead  # noqa: E402

java_dir, py_dir, input_dim, hidden_dim, hidden_json = sys.argv[1:6]
input_dim = int(input_dim)
hidden_dim = int(hidden_dim) or None
with open(hidden_json) as f:
    hidden = torch.tensor(json.load(f), dtype=torch.float32)


def describe(state):
    return {"keys": list(state.keys()),
            "shapes": {k: list(v.shape) for k, v in state.items()},
            "values": {k: v.float().flatten().tolist() for k, v in state.items()}}


out = {}
state = torch.load(os.path.join(java_dir, "value_head.pt"), weights_only=True)
out["torch_load"] = describe(state)
mapped = torch.load(os.path.join(java_dir, "value_head.pt"), weights_only=True, mmap=True)
out["mmap_equal"] = all(torch.equal(mapped[k], state[k]) for k in state)
head = ValueHead(input_dim, hidden_dim)
head.load_state_dict(state)  # strict: exactly the reference's keys and shapes
with torch.no_grad():
    out["values_with_java_weights"] = head(hidden).squeeze(-1).flatten().tolist()
st = load_file(os.path.join(java_dir, "value_head.safetensors"))
out["safetensors_keys"] = list(st.keys())
out["safetensors_equal"] = sorted(st.keys()) == sorted(state.keys()) and all(torch.equal(st[k], state[k]) for k in st)

torch.manual_seed(1234)
reference = ValueHead(input_dim, hidden_dim)
os.makedirs(py_dir, exist_ok=True)
torch.save(reference.state_dict(), os.path.join(py_dir, "value_head.pt"))
out["python_saved"] = describe(reference.state_dict())
with torch.no_grad():
    out["values_with_python_weights"] = reference(hidden).squeeze(-1).flatten().tolist()
print(json.dumps(out))
