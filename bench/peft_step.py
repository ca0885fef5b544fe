#!/usr/bin/env python3
"""PyTorch + peft baseline for `bin/comlrl bench --lora R --compare-pytorch`: one MAGRPO step of a team
of N LoRA agents on one shared base, the way a Hugging Face user runs it.

The base is loaded with transformers (AutoModelForCausalLM, SDPA attention, the dtype asked); peft puts
N LoRA adapters on it (r R, lora_alpha 2R, no dropout, the target modules asked; peft keeps the adapter
weights in float32 on a bfloat16 base). One step is:
  1. generation: the team's N*G rows (a random prompt of P ids repeated) in ONE batch through
     model.generate with peft's mixed-adapter batches (adapter_names: row r uses agent r // G's adapter),
     sampling as --sampling says (plain: temperature 1, top_k 0, top_p 1), exactly T new tokens
     (min_new_tokens = T);
  2. scoring, per agent: set_adapter(agent), forward of [G, P+T] with grad,
     loss = -(1/G) * sum_g A_g * sum_t log pi(y_{g,t} | x, y_{g,<t}), backward (only that adapter trains);
     With --autocast (a bfloat16 base) generation and scoring run under torch.autocast("cpu", bfloat16), as
     transformers' Trainer runs them with bf16=True: the float32 adapters' products in bfloat16.
  3. optimizer, per agent: its adapter's AdamW(lr=1e-6, weight_decay=0.01).step(), zero_grad(): the
     for-loop implementation (--adamw plain) or fused=True (--adamw fused, transformers' Trainer default).
Warm-up steps are not measured; figures are medians over the measured steps; gen_tokens_per_s is the
team's (N*G*T tokens over the generation call), score_ms and optim_ms are per agent. Needs torch >= 2,
transformers and peft (bench/setup.sh installs them).
"""
import argparse
import contextlib
import json
import statistics
import sys
import time

try:
    import torch
    import transformers
    import peft
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM
except ImportError as e:
    print(f"peft_step: {e}; make bench/.venv with: bash bench/setup.sh", file=sys.stderr)
    sys.exit(2)

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from pytorch_step import blas_info, parse_sampling, peak_rss_kib, positive_int  # noqa: E402  (one copy of the helpers)

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}
ALL_LINEAR = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def adapter_parameters(model, name):
    """The trainable tensors of adapter `name` (its lora_A and lora_B of every targeted projection)."""
    return [p for n, p in model.named_parameters() if f".{name}." in n and "lora_" in n]


def score(model, prompt, completion, advantages):
    """loss = -(1/G) * sum_g A_g * sum_t log pi(y_{g,t} | x, y_{g,<t}); forward + backward."""
    p = prompt.shape[1]
    t = completion.shape[1]
    sequence = torch.cat((prompt, completion), dim=1)                                  # [G, P+T]
    logits = model(input_ids=sequence).logits[:, p - 1:p - 1 + t].float()              # [G, T, V]
    token_logp = torch.log_softmax(logits, dim=-1).gather(-1, completion.unsqueeze(-1)).squeeze(-1)
    loss = -(advantages * token_logp.sum(dim=1)).sum() / completion.shape[0]
    loss.backward()
    return loss.item()


def run_bench(args):
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    base = AutoModelForCausalLM.from_pretrained(args.model_dir, dtype=DTYPES[args.dtype],
                                                attn_implementation="sdpa")
    targets = ALL_LINEAR if args.lora_targets == ["all-linear"] else args.lora_targets
    settings = LoraConfig(r=args.lora, lora_alpha=2 * args.lora, lora_dropout=0.0, target_modules=targets)
    names = [f"agent_{i}" for i in range(args.agents)]
    model = get_peft_model(base, settings, adapter_name=names[0])
    for name in names[1:]:
        model.add_adapter(name, settings)
    fused = {"fused": True, "plain": None}[args.adamw]
    optimizers = {}
    for name in names:
        params = adapter_parameters(model, name)
        for p in params:
            p.requires_grad_(True)
        optimizers[name] = torch.optim.AdamW(params, lr=1e-6, weight_decay=0.01, fused=fused)
    trainable = sum(p.numel() for p in adapter_parameters(model, names[0]))
    vocab = model.config.vocab_size

    rng = torch.Generator().manual_seed(args.seed)
    prompt = torch.randint(0, vocab, (1, args.prompt_len), generator=rng).expand(args.generations, -1)
    team_prompt = prompt.repeat(args.agents, 1)                                        # [N*G, P]
    row_adapters = [name for name in names for _ in range(args.generations)]
    advantages = torch.linspace(-1.0, 1.0, args.generations)
    g, t = args.generations, args.new_tokens
    autocast = args.autocast and args.dtype == "bfloat16"
    precision = (lambda: torch.autocast("cpu", dtype=torch.bfloat16)) if autocast else contextlib.nullcontext
    samples = {"gen_tokens_per_s": [], "score_ms": [], "optim_ms": [], "step_ms": []}
    for step in range(args.warmup + args.steps):
        measured = step >= args.warmup
        step_start = time.perf_counter()
        model.eval()
        with torch.inference_mode(), precision():
            out = model.generate(input_ids=team_prompt, attention_mask=torch.ones_like(team_prompt),
                                 adapter_names=row_adapters, do_sample=True,
                                 temperature=args.sampling.get("temperature", 1.0), top_k=args.sampling.get("top_k", 0),
                                 top_p=args.sampling.get("top_p", 1.0),
                                 repetition_penalty=args.sampling.get("repetition_penalty", 1.0),
                                 max_new_tokens=t, min_new_tokens=t, pad_token_id=0)
        gen_s = time.perf_counter() - step_start
        completions = out[:, args.prompt_len:].clone()                                 # [N*G, T]
        model.train()
        score_s = optim_s = 0.0
        for i, name in enumerate(names):
            model.set_adapter(name)
            start = time.perf_counter()
            with precision():
                score(model, prompt, completions[i * g:(i + 1) * g], advantages)
            mid = time.perf_counter()
            optimizers[name].step()
            optimizers[name].zero_grad(set_to_none=True)
            score_s += mid - start
            optim_s += time.perf_counter() - mid
        if measured:
            samples["gen_tokens_per_s"].append(args.agents * g * t / gen_s)
            samples["score_ms"].append(score_s * 1e3 / args.agents)
            samples["optim_ms"].append(optim_s * 1e3 / args.agents)
            samples["step_ms"].append((time.perf_counter() - step_start) * 1e3)

    result = {
        "impl": "pytorch+peft",
        "torch_version": torch.__version__,
        "transformers_version": transformers.__version__,
        "peft_version": peft.__version__,
        "blas": blas_info(),
        "threads": args.threads,
        "dtype": args.dtype,
        "adamw": "fused" if optimizers[names[0]].defaults.get("fused") else "for-loop",  # what the optimizer runs
        "agents": args.agents,
        "generations": g,
        "prompt_len": args.prompt_len,
        "new_tokens": t,
        "sampling": args.sampling,
        "lora_r": args.lora,
        "lora_targets": targets,
        "autocast": autocast,
        "team_generation": "one batch, peft adapter_names",
        "trainable_parameters": trainable,
    }
    for key, values in samples.items():
        result[key] = round(statistics.median(values), 3)
    result["peak_rss_mib"] = round(peak_rss_kib() / 1024.0, 1)
    return result


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model-dir", required=True, help="HF model dir (config.json + model.safetensors)")
    parser.add_argument("--agents", type=positive_int, default=3, help="N adapters on the one base")
    parser.add_argument("--lora", type=positive_int, default=16, help="LoRA rank R (alpha 2R)")
    parser.add_argument("--lora-targets", default="all-linear",
                        type=lambda s: [x.strip() for x in s.split(",") if x.strip()],
                        help="comma-separated projections, or all-linear (default)")
    parser.add_argument("--generations", type=positive_int, default=4, help="G completions per agent")
    parser.add_argument("--prompt-len", type=positive_int, default=64, help="P prompt tokens")
    parser.add_argument("--new-tokens", type=positive_int, default=64, help="T sampled tokens (exactly T)")
    parser.add_argument("--threads", type=positive_int, default=1)
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="float32", help="the base's dtype")
    parser.add_argument("--adamw", choices=["plain", "fused"], default="fused")
    parser.add_argument("--autocast", action="store_true",
                        help="with --dtype bfloat16: generation and scoring under torch.autocast (the adapters' products in bf16)")
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--steps", type=positive_int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sampling", type=parse_sampling, default="plain",
                        help="plain, qwen2.5 or KEY=VALUE,... of temperature, top_k, top_p, repetition_penalty")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    result = run_bench(args)
    if args.json:
        print(json.dumps(result))
    else:
        width = max(len(k) for k in result)
        for key, value in result.items():
            print(f"{key:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
