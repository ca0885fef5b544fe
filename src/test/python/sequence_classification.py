"""Scores batches with Hugging Face transformers' AutoModelForSequenceClassification.

Usage: python sequence_classification.py MODEL_DIR REQUEST_JSON
REQUEST_JSON holds {"batches": [{"input_ids": [[...], ...], "attention_mask": [[...], ...]}, ...],
"texts": [...], "max_length": N, "padding_side": "right"|"left"}.
Prints one JSON object: {"warnings": [every warning or log record of level WARNING and above emitted
while loading the model and tokenizer], "architectures": [...], "num_labels": C,
"batch_logits": [[[C logits] per row] per batch] (float32, model(input_ids, attention_mask).logits),
"text_logits": [[C logits] per text] (the texts tokenized together by the model's own tokenizer with
padding=True, truncation=True, max_length, on the given padding side), "text_ids": [[ids] per text,
unpadded]}. Used by comlrl.model.SequenceClassifierPythonTest (tag "python").
"""
import json
import sys

import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from load_with_transformers import warnings_collected  # beside this script


def main():
    model_dir = sys.argv[1]
    with open(sys.argv[2]) as f:
        request = json.load(f)
    with warnings_collected() as messages:
        model = AutoModelForSequenceClassification.from_pretrained(model_dir, dtype=torch.float32)
        tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model.eval()
    out = {"warnings": messages, "architectures": model.config.architectures,
           "num_labels": model.config.num_labels, "batch_logits": [], "text_logits": [], "text_ids": []}
    with torch.no_grad():
        for batch in request.get("batches", []):
            logits = model(input_ids=torch.tensor(batch["input_ids"]),
                           attention_mask=torch.tensor(batch["attention_mask"])).logits
            out["batch_logits"].append(logits.float().tolist())
        texts = request.get("texts", [])
        if texts:
            tokenizer.padding_side = request.get("padding_side", "right")
            enc = tokenizer(texts, return_tensors="pt", padding=True, truncation=True,
                            max_length=request["max_length"])
            out["text_logits"] = model(**enc).logits.float().tolist()
            out["text_ids"] = [[int(t) for t, m in zip(ids, mask) if m]
                               for ids, mask in zip(enc["input_ids"].tolist(), enc["attention_mask"].tolist())]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
