#!/usr/bin/env python3
"""Plain-PyTorch baseline for `bin/comlrl bench`: one MAGRPO step on a Qwen2/Llama model directory.

What a user would otherwise run: current PyTorch 2.x eager mode on the CPU, written the way Hugging
Face transformers runs these models (F.scaled_dot_product_attention with grouped-query attention, a
KV cache grown with torch.cat as transformers' DynamicCache does, softmax + multinomial sampling,
torch.optim.AdamW with its defaults). Per agent (N agents, each its own copy of the weights and its
own AdamW), one step is:
  1. generation: a random prompt of P ids repeated G times, prefilled in one batch forward, then
     decoded with the KV cache until exactly T tokens are sampled (EOS ignored), drawn as --sampling
     says: plain (temperature 1, no filter) or transformers' processors in transformers' order
     (repetition penalty over the prompt and the tokens so far, temperature, top-k, top-p);
  2. scoring:    forward of [G, P+T] with grad, loss = -(1/G) * sum_g A_g * sum_t log pi(y_{g,t}),
                 backward;
  3. optimizer:  AdamW(lr=1e-6, weight_decay=0.01).step(), zero_grad(): the for-loop implementation
                 (--adamw plain, torch's default on the CPU) or fused=True (--adamw fused, what
                 transformers' Trainer and so TRL use by default).
bfloat16 (--dtype bfloat16) either as bf16 weights with float32 master copies and moments (--bf16
weights, as the Java side keeps them; the masters rounded back into the weights after each step) or
as float32 weights under torch.autocast("cpu", bfloat16) for every forward (--bf16 autocast, what
transformers' Trainer does with bf16=True; AdamW on the float32 weights).
Warm-up steps are not measured; the figures are medians over the measured steps. The result names
the torch version, its BLAS, oneDNN and the thread count. Needs torch >= 2.0 and numpy (bash
bench/setup.sh makes bench/.venv from the package index); safetensors is parsed by hand.

Shape letters: G generations, P prompt length, T new tokens, S total length, V vocab, H query heads,
K KV heads, D head dim, E hidden size.
"""
import argparse
import contextlib
import json
import os
import resource
import statistics
import struct
import sys
import time

try:
    import numpy as np
    import torch
except ImportError:
    print("pytorch_step: torch/numpy not found; make bench/.venv with: bash bench/setup.sh", file=sys.stderr)
    sys.exit(2)
if int(torch.__version__.split(".")[0]) < 2:
    print(f"pytorch_step: torch {torch.__version__} is too old: the baseline is PyTorch 2.x "
          "(scaled_dot_product_attention); make bench/.venv with: bash bench/setup.sh", file=sys.stderr)
    sys.exit(2)
import torch.nn as nn
import torch.nn.functional as F

SUPPORTED_MODEL_TYPES = ("qwen2", "llama")
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


class BenchError(Exception):
    """A usage error: reported on stderr, exit status 2."""


# ---------------------------------------------------------------------------------------------
# Loading: config.json and model.safetensors (parsed by hand; no safetensors package here)
# ---------------------------------------------------------------------------------------------

def load_safetensors(path):
    """{name: tensor} from a safetensors file: u64 LE header length, JSON header, raw LE data."""
    with open(path, "rb") as f:
        blob = f.read()
    (header_len,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + header_len])
    base = 8 + header_len
    tensors = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, end = meta["data_offsets"]
        raw = blob[base + start:base + end]
        shape = meta["shape"]
        dtype = meta["dtype"]
        if dtype == "F32":
            t = torch.from_numpy(np.frombuffer(raw, dtype="<f4").reshape(shape).copy())
        elif dtype == "F16":
            t = torch.from_numpy(np.frombuffer(raw, dtype="<f2").reshape(shape).copy())
        elif dtype == "BF16":
            # bf16 is the top half of an f32: widen the uint16 bits, shift them up, reinterpret
            bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            t = torch.from_numpy(bits.view(np.float32).reshape(shape).copy()).to(torch.bfloat16)
        else:
            raise BenchError(f"{path}: tensor {name} has dtype {dtype}; supported: F32, BF16, F16")
        tensors[name] = t
    return tensors


def load_config(model_dir):
    config_path = os.path.join(model_dir, "config.json")
    weights_path = os.path.join(model_dir, "model.safetensors")
    if not os.path.isdir(model_dir):
        raise BenchError(f"model directory not found: {model_dir}")
    for path in (config_path, weights_path):
        if not os.path.isfile(path):
            raise BenchError(f"missing {os.path.basename(path)} in {model_dir} "
                             "(make one with: bin/comlrl init-model --out DIR)")
    with open(config_path) as f:
        cfg = json.load(f)
    model_type = cfg.get("model_type")
    if model_type not in SUPPORTED_MODEL_TYPES:
        raise BenchError(f"model_type {model_type!r} is not supported; supported: "
                         + ", ".join(SUPPORTED_MODEL_TYPES))
    return cfg, weights_path


# ---------------------------------------------------------------------------------------------
# The model: the same math as Hugging Face Qwen2/Llama (eager attention)
# ---------------------------------------------------------------------------------------------

class RmsNorm(nn.Module):
    def __init__(self, size, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))
        self.eps = eps

    def forward(self, x):
        h = x.float()                                            # normalised in float32
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * h.to(x.dtype)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Attention(nn.Module):
    def __init__(self, cfg, qkv_bias, o_bias):
        super().__init__()
        e = cfg["hidden_size"]
        self.h = cfg["num_attention_heads"]
        self.k = cfg.get("num_key_value_heads", self.h)
        self.d = e // self.h
        self.q_proj = nn.Linear(e, self.h * self.d, bias=qkv_bias)
        self.k_proj = nn.Linear(e, self.k * self.d, bias=qkv_bias)
        self.v_proj = nn.Linear(e, self.k * self.d, bias=qkv_bias)
        self.o_proj = nn.Linear(self.h * self.d, e, bias=o_bias)

    def forward(self, x, cos, sin, cache, pos):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.h, self.d).transpose(1, 2)   # [B, H, S, D]
        k = self.k_proj(x).view(b, s, self.k, self.d).transpose(1, 2)   # [B, K, S, D]
        v = self.v_proj(x).view(b, s, self.k, self.d).transpose(1, 2)   # [B, K, S, D]
        cos, sin = cos.to(q.dtype), sin.to(q.dtype)                    # bf16 under autocast (as transformers)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if cache is not None:
            # transformers' DynamicCache: the layer's keys and values grow by torch.cat
            if cache[0] is not None:
                k = torch.cat((cache[0], k), dim=2)                          # [B, K, pos+S, D]
                v = torch.cat((cache[1], v), dim=2)
            cache[0], cache[1] = k, v
        out = F.scaled_dot_product_attention(q, k, v, is_causal=s > 1 and pos == 0, enable_gqa=self.h != self.k)
        return self.o_proj(out.transpose(1, 2).reshape(b, s, self.h * self.d))  # [B, S, E]


class Mlp(nn.Module):
    def __init__(self, cfg, bias):
        super().__init__()
        e, inter = cfg["hidden_size"], cfg["intermediate_size"]
        self.gate_proj = nn.Linear(e, inter, bias=bias)
        self.up_proj = nn.Linear(e, inter, bias=bias)
        self.down_proj = nn.Linear(inter, e, bias=bias)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Layer(nn.Module):
    def __init__(self, cfg, qkv_bias, o_bias, mlp_bias):
        super().__init__()
        eps = cfg.get("rms_norm_eps", 1e-6)
        self.input_layernorm = RmsNorm(cfg["hidden_size"], eps)
        self.self_attn = Attention(cfg, qkv_bias, o_bias)
        self.post_attention_layernorm = RmsNorm(cfg["hidden_size"], eps)
        self.mlp = Mlp(cfg, mlp_bias)

    def forward(self, x, cos, sin, cache, pos):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, cache, pos)
        return x + self.mlp(self.post_attention_layernorm(x))


class Backbone(nn.Module):
    """Named like HF's `model.*` so the safetensors names load with load_state_dict."""

    def __init__(self, cfg, qkv_bias, o_bias, mlp_bias):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg["vocab_size"], cfg["hidden_size"])
        self.layers = nn.ModuleList(Layer(cfg, qkv_bias, o_bias, mlp_bias)
                                    for _ in range(cfg["num_hidden_layers"]))
        self.norm = RmsNorm(cfg["hidden_size"], cfg.get("rms_norm_eps", 1e-6))


class DecoderLm(nn.Module):
    def __init__(self, cfg, weights, dtype):
        super().__init__()
        llama = cfg["model_type"] == "llama"
        attention_bias = bool(cfg.get("attention_bias", False))
        qkv_bias = attention_bias if llama else True           # Qwen2 always has q/k/v biases
        o_bias = attention_bias if llama else False
        mlp_bias = bool(cfg.get("mlp_bias", False)) if llama else False
        self.model = Backbone(cfg, qkv_bias, o_bias, mlp_bias)
        self.tied = bool(cfg.get("tie_word_embeddings", False))
        if not self.tied:
            self.lm_head = nn.Linear(cfg["hidden_size"], cfg["vocab_size"], bias=False)
        state = {name: w for name, w in weights.items() if not (self.tied and name == "lm_head.weight")}
        missing, unexpected = self.load_state_dict(state, strict=False)
        if missing or unexpected:
            raise BenchError(f"weights do not match config.json: missing {missing}, unexpected {unexpected}")
        self.to(dtype)
        self.dtype = dtype
        self.num_kv_heads = cfg.get("num_key_value_heads", cfg["num_attention_heads"])
        self.head_dim = cfg["hidden_size"] // cfg["num_attention_heads"]
        d = self.head_dim
        theta = float(cfg.get("rope_theta", 10000.0))
        self.inv_freq = 1.0 / theta ** (torch.arange(0, d, 2, dtype=torch.float32) / d)  # [D/2]

    def new_cache(self):
        """An empty KV cache: per layer [keys, values], grown by torch.cat (transformers' DynamicCache)."""
        return [[None, None] for _ in self.model.layers]

    def forward(self, ids, cache=None, pos=0, logits_from=0):
        """ids [B, S] at absolute positions pos..pos+S-1 -> logits [B, S - logits_from, V]."""
        s = ids.shape[1]
        freqs = torch.arange(pos, pos + s, dtype=torch.float32).view(-1, 1) * self.inv_freq  # [S, D/2]
        emb = torch.cat((freqs, freqs), dim=-1)                                             # [S, D]
        cos, sin = emb.cos().to(self.dtype), emb.sin().to(self.dtype)
        x = self.model.embed_tokens(ids)                                                    # [B, S, E]
        for i, layer in enumerate(self.model.layers):
            x = layer(x, cos, sin, None if cache is None else cache[i], pos)
        hidden = self.model.norm(x[:, logits_from:])
        head = self.model.embed_tokens.weight if self.tied else self.lm_head.weight
        return F.linear(hidden, head)                                                       # [B, S', V]


# ---------------------------------------------------------------------------------------------
# One MAGRPO step
# ---------------------------------------------------------------------------------------------

SAMPLING_KEYS = ("temperature", "top_k", "top_p", "repetition_penalty")
SAMPLING_PRESETS = {"plain": {}, "qwen2.5": {"temperature": 0.7, "top_k": 20, "top_p": 0.8, "repetition_penalty": 1.05}}


def parse_sampling(spec):
    """--sampling: plain, qwen2.5 (Qwen2.5-Instruct's generation_config.json) or KEY=VALUE,... of SAMPLING_KEYS."""
    if spec in SAMPLING_PRESETS:
        return dict(SAMPLING_PRESETS[spec])
    out = {}
    for item in spec.split(","):
        key, _, value = item.partition("=")
        if key.strip() not in SAMPLING_KEYS or not value.strip():
            raise argparse.ArgumentTypeError(f"plain, qwen2.5 or KEY=VALUE,... of {', '.join(SAMPLING_KEYS)}; got {spec!r}")
        out[key.strip()] = int(value) if key.strip() == "top_k" else float(value)
    return out


def warped(scores, seen, sampling):
    """scores [G, V] float32 after transformers' processors for `sampling`, in its order; seen [G, S]: the ids so far."""
    theta = sampling.get("repetition_penalty", 1.0)
    if theta != 1.0:                                                                  # RepetitionPenaltyLogitsProcessor
        old = scores.gather(1, seen)
        scores = scores.scatter(1, seen, torch.where(old < 0, old * theta, old / theta))
    if sampling.get("temperature", 1.0) != 1.0:                                       # TemperatureLogitsWarper
        scores = scores / sampling["temperature"]
    k = min(sampling.get("top_k", 0), scores.shape[-1])
    if k > 0:                                                                         # TopKLogitsWarper
        scores = scores.masked_fill(scores < torch.topk(scores, k)[0][..., -1, None], float("-inf"))
    top_p = sampling.get("top_p", 1.0)
    if top_p < 1.0:                                                                   # TopPLogitsWarper
        ascending, order = torch.sort(scores, descending=False)
        remove = ascending.softmax(dim=-1).cumsum(dim=-1) <= 1 - top_p
        remove[..., -1:] = False                                                      # keeps the most likely token
        scores = scores.masked_fill(remove.scatter(1, order, remove), float("-inf"))
    return scores


@torch.inference_mode()
def generate(model, prompt, new_tokens, rng=None, greedy=False, sampling=None):
    """prompt [G, P] -> (completion [G, T], prefill seconds); always exactly T tokens (EOS ignored)."""
    g, p = prompt.shape
    sampling = sampling or {}
    cache = model.new_cache()
    start = time.perf_counter()
    logits = model(prompt, cache, 0, logits_from=p - 1)[:, -1]                     # [G, V]
    prefill_s = time.perf_counter() - start
    tokens = []
    for t in range(new_tokens):
        if greedy:
            token = logits.float().argmax(-1, keepdim=True)                          # [G, 1]
        else:
            seen = torch.cat([prompt] + tokens, dim=1) if sampling.get("repetition_penalty", 1.0) != 1.0 else None
            probs = torch.softmax(warped(logits.float(), seen, sampling), dim=-1)
            token = torch.multinomial(probs, 1, generator=rng)                        # [G, 1]
        tokens.append(token)
        if t + 1 < new_tokens:
            logits = model(token, cache, p + t)[:, -1]
    return torch.cat(tokens, dim=1), prefill_s


def sample_completions(model, prompt, new_tokens, rng, sampling=None):
    completion, prefill_s = generate(model, prompt, new_tokens, rng, sampling=sampling)
    return completion.clone(), prefill_s  # a normal tensor: inference tensors cannot enter autograd


def score(model, prompt, completion, advantages):
    """loss = -(1/G) * sum_g A_g * sum_t log pi(y_{g,t} | x, y_{g,<t}); forward + backward."""
    p = prompt.shape[1]
    t = completion.shape[1]
    sequence = torch.cat((prompt, completion), dim=1)                                  # [G, P+T]
    logits = model(sequence, logits_from=p - 1)[:, :t].float()                         # positions P-1..P+T-2: [G, T, V]
    token_logp = torch.log_softmax(logits, dim=-1).gather(-1, completion.unsqueeze(-1)).squeeze(-1)  # [G, T]
    seq_logp = token_logp.sum(dim=1)                                                   # [G]
    loss = -(advantages * seq_logp).sum() / completion.shape[0]
    loss.backward()
    return loss.item()


def run_bench(args):
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    autocast = args.dtype == "bfloat16" and args.bf16 == "autocast"
    dtype = torch.float32 if autocast else DTYPES[args.dtype]
    cfg, weights_path = load_config(args.model_dir)
    weights = load_safetensors(weights_path)
    agents = [DecoderLm(cfg, weights, dtype) for _ in range(args.agents)]
    # bf16: what the Java side does too, float32 master weights and moments updated from the bf16
    # gradients and rounded back into the bf16 weights after each step
    masters = [[p.detach().float().clone() for p in m.parameters()] if dtype != torch.float32 else None
               for m in agents]
    fused = {"fused": True, "plain": None}[args.adamw]
    optimizers = [torch.optim.AdamW(ms if ms is not None else m.parameters(), lr=1e-6, weight_decay=0.01,
                                    fused=fused) for m, ms in zip(agents, masters)]
    # every forward (generation and scoring) in bf16 under autocast; a no-op context otherwise
    precision = (lambda: torch.autocast("cpu", dtype=torch.bfloat16)) if autocast else contextlib.nullcontext
    del weights

    greedy_ids = None
    if args.check_greedy:
        ids = torch.tensor([args.check_greedy], dtype=torch.long)
        with precision():
            greedy_ids = generate(agents[0], ids, 8, greedy=True)[0][0].tolist()

    rng = torch.Generator().manual_seed(args.seed)
    prompt = torch.randint(0, cfg["vocab_size"], (1, args.prompt_len), generator=rng).expand(args.generations, -1)
    advantages = torch.linspace(-1.0, 1.0, args.generations)                           # fixed A_g, [G]
    tokens_per_agent = args.generations * args.new_tokens
    samples = {"gen_tokens_per_s": [], "prefill_ms": [], "score_ms": [], "optim_ms": [], "step_ms": []}
    for step in range(args.warmup + args.steps):
        measured = step >= args.warmup
        step_start = time.perf_counter()
        for model, optimizer, master in zip(agents, optimizers, masters):
            start = time.perf_counter()
            with precision():
                completion, prefill_s = sample_completions(model, prompt, args.new_tokens, rng, args.sampling)
            gen_s = time.perf_counter() - start
            start = time.perf_counter()
            with precision():
                score(model, prompt, completion, advantages)
            score_s = time.perf_counter() - start
            start = time.perf_counter()
            if master is not None:
                for p, mp in zip(model.parameters(), master):
                    mp.grad = p.grad.float()
                    p.grad = None
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            if master is not None:
                with torch.no_grad():
                    for p, mp in zip(model.parameters(), master):
                        p.copy_(mp)
            optim_s = time.perf_counter() - start
            if measured:
                samples["gen_tokens_per_s"].append(tokens_per_agent / gen_s)
                samples["prefill_ms"].append(prefill_s * 1e3)
                samples["score_ms"].append(score_s * 1e3)
                samples["optim_ms"].append(optim_s * 1e3)
        if measured:
            samples["step_ms"].append((time.perf_counter() - step_start) * 1e3)

    result = {
        "impl": "pytorch",
        "torch_version": torch.__version__,
        "blas": blas_info(),
        "onednn": torch.backends.mkldnn.is_available(),
        "threads": args.threads,
        "dtype": args.dtype,
        "bf16": (args.bf16 if args.dtype == "bfloat16" else None),
        "adamw": "fused" if optimizers[0].defaults.get("fused") else "for-loop",  # what the optimizer runs
        "agents": args.agents,
        "generations": args.generations,
        "prompt_len": args.prompt_len,
        "new_tokens": args.new_tokens,
        "sampling": args.sampling,
    }
    for key, values in samples.items():  # per-agent medians; step_ms: median over whole steps
        result[key] = round(statistics.median(values), 3)
    result["peak_rss_mib"] = round(peak_rss_kib() / 1024.0, 1)
    return result, greedy_ids


def blas_info():
    """The BLAS torch was built with (BLAS_INFO in torch.__config__.show(), e.g. mkl)."""
    import re
    found = re.search(r"BLAS_INFO=([^,\s]+)", torch.__config__.show())
    return found.group(1) if found else "unknown"


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model-dir", required=True, help="HF-layout dir with config.json + model.safetensors")
    parser.add_argument("--agents", type=positive_int, default=2, help="N agents, each its own model copy and AdamW")
    parser.add_argument("--generations", type=positive_int, default=4, help="G completions per prompt")
    parser.add_argument("--prompt-len", type=positive_int, default=64, help="P prompt tokens")
    parser.add_argument("--new-tokens", type=positive_int, default=64, help="T sampled tokens (always exactly T)")
    parser.add_argument("--threads", type=positive_int, default=1, help="torch.set_num_threads (set OMP_NUM_THREADS too)")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="float32")
    parser.add_argument("--bf16", choices=["weights", "autocast"], default="weights",
                        help="with --dtype bfloat16: bf16 weights on float32 masters (default), or float32 "
                             "weights under torch.autocast")
    parser.add_argument("--adamw", choices=["plain", "fused"], default="plain",
                        help="AdamW's for-loop implementation (default, torch's CPU default) or fused=True")
    parser.add_argument("--warmup", type=int, default=1, help="unmeasured steps first (default 1)")
    parser.add_argument("--steps", type=positive_int, default=5, help="measured steps (default 5)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sampling", type=parse_sampling, default="plain",
                        help="plain, qwen2.5 or KEY=VALUE,... of temperature, top_k, top_p, repetition_penalty")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument("--check-greedy", metavar="IDS", default=None,
                        type=lambda s: [int(x) for x in s.split(",") if x.strip()],
                        help="also print the greedy 8-token continuation of these comma-separated ids")
    args = parser.parse_args(argv)
    if args.warmup < 0:
        parser.error("--warmup must be >= 0")
    return args


def peak_rss_kib():
    """This process's own resident high-water mark (VmHWM). Not ru_maxrss: when a JVM starts this
    script, ru_maxrss carries the parent's peak across fork/exec."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main(argv=None):
    args = parse_args(argv)
    try:
        result, greedy_ids = run_bench(args)
    except BenchError as e:
        print(f"pytorch_step: {e}", file=sys.stderr)
        return 2
    if greedy_ids is not None:
        print("greedy_ids: " + ",".join(map(str, greedy_ids)), file=sys.stderr if args.json else sys.stdout)
    if args.json:
        print(json.dumps(result))
    else:
        width = max(len(k) for k in result)
        for key, value in result.items():
            print(f"{key:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
