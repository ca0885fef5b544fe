"""Loads a model directory we saved with Hugging Face transformers and reports what it said.

Usage: python load_with_transformers.py MODEL_DIR IDS_COMMA_SEPARATED
Prints one JSON object: {"warnings": [every warning or log record of level WARNING and above
emitted while loading the config, model, tokenizer and generation config], "logits": [[...]]
(float32 logits of the ids, one row per position), "vocab": len(tokenizer)}.
Used by comlrl.model.TransformersCompatibilityTest (tag "python").
"""
import contextlib
import json
import logging
import sys
import warnings

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, GenerationConfig


class Collect(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(f"{record.name}: {record.getMessage()}")


@contextlib.contextmanager
def warnings_collected():
    """Yields a list that, on exit, holds every transformers log record of level WARNING and above
    and every Python warning emitted inside the block."""
    transformers.logging.set_verbosity_warning()
    transformers.logging.disable_progress_bar()
    collect = Collect()
    logging.getLogger("transformers").addHandler(collect)
    messages = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield messages
    finally:
        logging.getLogger("transformers").removeHandler(collect)
    messages.extend(collect.messages + [f"{w.category.__name__}: {w.message}" for w in caught])


def main():
    model_dir, ids = sys.argv[1], [int(x) for x in sys.argv[2].split(",")]
    with warnings_collected() as messages:
        AutoConfig.from_pretrained(model_dir)
        model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        GenerationConfig.from_pretrained(model_dir)
    model.eval()
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0].float().tolist()
    print(json.dumps({"warnings": messages, "logits": logits, "vocab": len(tokenizer)}))


if __name__ == "__main__":
    main()
