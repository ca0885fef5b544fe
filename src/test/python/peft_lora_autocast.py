"""PEFT's LoRA delta on a bfloat16 base, with and without torch.autocast, on hand-worked inputs.

Usage: python peft_lora_autocast.py
A bias-free bf16 Linear(64, 64) under a PEFT LoRA adapter r 2, lora_alpha 4 (float32, PEFT's
autocast_adapter_dtype), L = sum(output). Two cases: with zero weight (its output is the adapter's
delta), A = 1 + 2^-8, B = 2^-8, x = 3 everywhere; and "sum", with weight 2^-6 (base output 1),
A = 1 + 2^-8, B = 2^-16, x = 1 everywhere (1 + the delta lies just above a bf16 midpoint). Prints
{"float32": {...}, "autocast": {...}, "sum": {"float32": {...}, "autocast": {...}}, "merged": {...}},
each case with the output's dtype and value and dL/dA, dL/dB (their dtype and value): every element
is the same; "merged" holds the weight merge_and_unload() makes with weight 1, A = 1 + 2^-8,
B = 2^-10, by default and with safe_merge=True. Used by comlrl.model.LoraPeftPythonTest (tag "python").
"""
import copy
import json

import torch
from peft import LoraConfig, get_peft_model


class Projection(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj = torch.nn.Linear(64, 64, bias=False)

    def forward(self, x):
        return self.q_proj(x)


def run(weight, x_value, b_value):
    base = Projection().to(torch.bfloat16)
    torch.nn.init.constant_(base.q_proj.weight, weight)
    model = get_peft_model(base, LoraConfig(r=2, lora_alpha=4, target_modules=["q_proj"]))
    a = model.base_model.model.q_proj.lora_A["default"].weight
    b = model.base_model.model.q_proj.lora_B["default"].weight
    out = {}
    for name, autocast in (("float32", False), ("autocast", True)):
        with torch.no_grad():
            a.fill_(1 + 2 ** -8)
            b.fill_(b_value)
        a.grad = b.grad = None
        x = torch.full((1, 1, 64), x_value, dtype=torch.bfloat16)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            y = model(x)
        y.float().sum().backward()
        for t in (y, a.grad, b.grad):
            assert torch.all(t == t.flatten()[0]), "elements differ"
        out[name] = {"delta_dtype": str(y.dtype), "delta": y.flatten()[0].item(),
                     "grad_dtype": str(a.grad.dtype), "dA": a.grad.flatten()[0].item(), "dB": b.grad.flatten()[0].item()}
    return out


def merged():
    base = Projection().to(torch.bfloat16)
    torch.nn.init.constant_(base.q_proj.weight, 1.0)
    model = get_peft_model(base, LoraConfig(r=2, lora_alpha=4, target_modules=["q_proj"]))
    with torch.no_grad():
        model.base_model.model.q_proj.lora_A["default"].weight.fill_(1 + 2 ** -8)
        model.base_model.model.q_proj.lora_B["default"].weight.fill_(2 ** -10)
    out = {}
    for name, safe in (("default", False), ("safe", True)):
        w = copy.deepcopy(model).merge_and_unload(safe_merge=safe).q_proj.weight
        assert torch.all(w == w.flatten()[0]), "elements differ"
        out[name] = {"dtype": str(w.dtype), "value": w.flatten()[0].item()}
    return out


def main():
    out = run(0.0, 3.0, 2 ** -8)
    out["sum"] = run(2 ** -6, 1.0, 2 ** -16)
    out["merged"] = merged()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
