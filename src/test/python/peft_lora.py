"""Loads a PEFT LoRA adapter onto a base model with transformers + peft and prints its logits.

Usage: python peft_lora.py BASE_DIR ADAPTER_DIR IDS_JSON
Prints {"logits": [[...] per position], "warnings": [...]} for the one sequence IDS_JSON (a JSON list of
token ids). Used by comlrl.model.LoraPeftPythonTest (tag "python").
"""
import json
import sys

import torch
from transformers import AutoModelForCausalLM

from load_with_transformers import warnings_collected  # beside this script


def main():
    base_dir, adapter_dir, ids = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    from peft import PeftModel
    with warnings_collected() as messages:
        base = AutoModelForCausalLM.from_pretrained(base_dir, dtype=torch.float32)
        model = PeftModel.from_pretrained(base, adapter_dir)
    model.eval()
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids])).logits[0].float().tolist()
    print(json.dumps({"logits": logits, "warnings": messages}))


if __name__ == "__main__":
    main()
