#!/usr/bin/env bash
# Makes bench/.venv, the Python environment of the PyTorch baselines (bench/pytorch_step.py, and
# bench/peft_step.py for --lora): a current PyTorch 2.x CPU build, numpy, transformers and peft from the
# package index pip is configured for.
# `bin/comlrl bench --compare-pytorch` uses bench/.venv/bin/python when it exists.
# Idempotent: does nothing when the environment already imports torch >= 2.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/bench/.venv"
python="${PYTHON:-python3}"

if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import torch, numpy, transformers, peft, sys; sys.exit(int(torch.__version__.split(".")[0]) < 2)' 2>/dev/null; then
  echo "bench/setup.sh: $("$venv/bin/python" -c 'import torch; print("torch", torch.__version__)') already in bench/.venv"
  exit 0
fi

"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --upgrade pip >/dev/null 2>&1 || true
# the CPU build: on the PyTorch index the default Linux wheel carries CUDA libraries
"$venv/bin/pip" install --quiet torch numpy transformers peft
"$venv/bin/python" -c 'import torch; print("bench/setup.sh: torch", torch.__version__, "in bench/.venv")'
