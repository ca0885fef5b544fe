#!/usr/bin/env bash
# Installs what bench/pytorch_step.py needs, from Debian (no PyPI here):
#   python3-torch (1.13), python3-numpy, and libopenblas0-openmp. Debian's torch calls the system
#   BLAS; without OpenBLAS that is the reference netlib BLAS, about 10x slower on matmuls, which
#   would make the baseline unfairly slow. The OpenMP build shares torch's libgomp, so
#   torch.set_num_threads / OMP_NUM_THREADS govern both.
# They land in Debian's interpreter, /usr/bin/python3 (a pyenv `python3` earlier on PATH does not
# see them; pytorch_step.py re-executes itself under /usr/bin/python3 when torch is missing).
# Idempotent: does nothing when all is there. Needs root (apt-get).
set -euo pipefail

PY=/usr/bin/python3
PACKAGES=(python3 python3-torch python3-numpy libopenblas0-openmp)

installed() {
  [ -x "$PY" ] && "$PY" -c 'import torch, numpy' >/dev/null 2>&1 \
    && dpkg-query -W -f='${Status}' libopenblas0-openmp 2>/dev/null | grep -q 'ok installed'
}

if installed; then
  echo "bench/setup.sh: torch $("$PY" -c 'import torch; print(torch.__version__)') and OpenBLAS already installed"
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${PACKAGES[@]}"

"$PY" -c 'import torch; print("bench/setup.sh: torch", torch.__version__, "installed")'
