#!/usr/bin/env python3
"""Records what transformers' generate does to next-token logits, for LogitsProcessorsParityTest.

For each case a random-weight model directory gets a generation_config.json with the case's model
settings; model.generate(...) is called with the case's call arguments, as the Python trainers call
it, and the raw logits, the processed scores and the chosen tokens of every step are written out.

  bin/comlrl init-model --arch qwen2 --preset tiny --out /tmp/proc-model
  python3 scripts/record-logits-processors.py /tmp/proc-model src/test/resources/generation/hf-logits-processors.json
"""
import json, math, shutil, sys, tempfile, os
import torch
import transformers
from transformers import AutoModelForCausalLM

CASES = [
    {"name": "model top_k and repetition penalty",
     "model": {"top_k": 20, "repetition_penalty": 1.3, "temperature": 0.2, "top_p": 0.5},
     "call": {"do_sample": True, "temperature": 0.7, "top_p": 0.9}},
    {"name": "ngram, min new tokens, suppress, top_k 0",
     "model": {"no_repeat_ngram_size": 2, "min_new_tokens": 3, "suppress_tokens": [5, 7], "begin_suppress_tokens": [9]},
     "call": {"do_sample": True, "temperature": 1.0, "top_p": 1.0, "top_k": 0}},
    {"name": "typical and min_p",
     "model": {"typical_p": 0.9, "min_p": 0.05},
     "call": {"do_sample": True, "temperature": 1.3, "top_p": 0.95}},
    {"name": "epsilon, eta, bad words, forced eos, min_length",
     "model": {"epsilon_cutoff": 0.003, "eta_cutoff": 0.002, "bad_words_ids": [[11], [6, 5]],
               "forced_eos_token_id": 512, "min_length": 12},
     "call": {"do_sample": True, "temperature": 0.9, "top_p": 1.0}},
    {"name": "greedy keeps the processors",
     "model": {"repetition_penalty": 1.5, "no_repeat_ngram_size": 3, "top_k": 3},
     "call": {"do_sample": False}},
]
PROMPT = [5, 6, 5, 6, 7, 8, 9, 5]


def f32(x):
    """A float32 value as its shortest exact decimal (9 significant digits), or None for -inf."""
    if math.isinf(x) and x < 0:
        return None
    if math.isnan(x) or math.isinf(x):
        raise ValueError(f"unexpected value {x}")
    return float("%.9g" % x)


def main(model_dir, out_path):
    out = {"transformers": transformers.__version__, "torch": torch.__version__, "prompt": PROMPT, "cases": []}
    for case in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            d = os.path.join(tmp, "m")
            shutil.copytree(model_dir, d)
            gen = {"eos_token_id": 512, "pad_token_id": 512}
            gen.update(case["model"])
            with open(os.path.join(d, "generation_config.json"), "w") as f:
                json.dump(gen, f)
            model = AutoModelForCausalLM.from_pretrained(d, dtype=torch.float32)
            torch.manual_seed(0)
            greedy = not case["call"].get("do_sample", False)
            res = model.generate(torch.tensor([PROMPT]), max_new_tokens=8, num_return_sequences=1 if greedy else 2,
                                 num_beams=1,
                                 return_dict_in_generate=True, output_scores=True, output_logits=True,
                                 **case["call"])
            steps = []
            tokens = res.sequences[:, len(PROMPT):].tolist()
            for t, (raw, proc) in enumerate(zip(res.logits, res.scores)):
                steps.append({"logits": [[f32(v) for v in row] for row in raw.tolist()],
                              "scores": [[f32(v) for v in row] for row in proc.tolist()],
                              "tokens": [row[t] for row in tokens]})
            out["cases"].append({"name": case["name"], "model": case["model"], "call": case["call"],
                                 "max_new_tokens": 8, "eos": [512], "steps": steps})
    with open(out_path, "w") as f:
        json.dump(out, f, separators=(",", ":"))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
