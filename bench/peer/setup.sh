#!/usr/bin/env bash
# Sets up the reference side of `bench/run_perf_bench.sh --peer`: lucidrains' magvit2-pytorch
# 0.5.1 (upstream commit a00519f, the same files) on Debian's PyTorch 1.13 (python3-torch,
# python3-torchvision), in a virtual environment that sees Debian's packages
# (bench/peer/.venv, ignored by git). magvit2-pytorch and the pure-Python packages it imports come
# from the Python package index, each pinned and installed with --no-deps, so that pip never
# replaces Debian's torch, torchvision or numpy. Running it again only checks.
#
# Usage: bench/peer/setup.sh (as root, or with the Debian packages below already installed).
# TB_PEER_VENV=DIR puts the environment elsewhere.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
venv=${TB_PEER_VENV:-$here/.venv}

die() {
  echo "bench/peer/setup.sh: error: $*" >&2
  exit 1
}

debian=(python3-torch python3-torchvision python3-venv)

# The newest release of each before magvit2-pytorch 0.5.1 (2025-01-11) that imports beside torch
# 1.13, except where noted. Only what `import magvit2_pytorch.magvit2_pytorch` and the
# train-step row need: the package's trainer (Accelerate, OpenCV, pytorch-custom-utils,
# pytorch-warmup) is not imported (reference_bench.py says how).
pins=(
  magvit2-pytorch==0.5.1
  beartype==0.19.0
  einops==0.8.0
  kornia==0.7.4
  kornia-rs==0.1.8 # kornia imports it (a compiled wheel, no torch inside)
  vector-quantize-pytorch==1.21.4 # the one Tokenbench's magvit2-pytorch test fixture was made with
  einx==0.1.3 # vector-quantize-pytorch imports it; the last wheel that imports beside torch < 2 (0.2.0 is a source release only)
  frozendict==2.4.6 # einx
  gateloop-transformer==0.2.5
  taylor-series-linear-attention==0.1.12
  rotary-embedding-torch==0.8.6 # gateloop-transformer, taylor-series-linear-attention
  jaxtyping==0.2.36 # taylor-series-linear-attention
  packaging==24.2 # magvit2_pytorch.attend
  ema-pytorch==0.7.7 # train-step: the trainer's EMA
)

# 1. Debian's PyTorch.
missing=()
for p in "${debian[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" -eq 0 ] || die "missing Debian packages: ${missing[*]}; run as root, or: sudo apt-get install ${missing[*]}"
  echo "installing ${missing[*]} with apt-get" >&2
  apt-get update -q || die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" ||
    die "apt-get install ${missing[*]} failed"
fi
/usr/bin/python3 -c 'import torch, torchvision' || die "Debian's python3 cannot import torch and torchvision"

# 2. The virtual environment, on Debian's interpreter (python3 on PATH may be another one).
if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv --system-site-packages "$venv" || die "cannot make the virtual environment $venv"
fi

# 3. The pinned packages, unless every one is there at its version.
installed() {
  "$venv/bin/python" - "${pins[@]}" <<'END'
import importlib.metadata, sys
for pin in sys.argv[1:]:
    name, version = pin.split("==")
    try:
        if importlib.metadata.version(name) != version:
            sys.exit(1)
    except importlib.metadata.PackageNotFoundError:
        sys.exit(1)
END
}
if ! installed; then
  echo "installing ${#pins[@]} pinned packages into $venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --only-binary=:all: "${pins[@]}" ||
    die "pip install into $venv failed"
  installed || die "the pinned versions are not what $venv has after installing them"
fi

# 4. The reference imports and builds, on Debian's torch.
"$venv/bin/python" "$here/reference_bench.py" --check || die "the reference does not import in $venv"
echo "magvit2-pytorch 0.5.1 ready in $venv"
echo "run: $venv/bin/python $here/reference_bench.py --preset bench-small --what gen-step"
