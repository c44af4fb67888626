#!/usr/bin/env bash
# scripts/torch2-deps.sh [VERSION]: a CUDA LibTorch 2.x for this machine, from the PyTorch wheel
# of that version (default 2.11.0, what the lent GPU machines run, built for CUDA 13), unpacked
# into the ignored cache .deps/torch-<version>/. Prints the CMake prefix on its last line:
#   cmake ... -DCMAKE_PREFIX_PATH="$(scripts/torch2-deps.sh | tail -1)"
# scripts/test-torch2.sh builds and tests against it.
#
# - `pip download --no-deps` only: nothing is installed into any Python. If VERSION has no wheel
#   for this machine's Python, the nearest version that has one is taken, and said.
# - The wheel's libraries find the NVIDIA runtime libraries through their RPATH
#   ($ORIGIN/../../nvidia/...). Those the system lacks are fetched from the runtime wheels the
#   torch wheel pins and unpacked beside it (.deps/torch-<version>/nvidia/): every one of them
#   when the wheel's CUDA major differs from the local toolkit's (nvcc), else only the missing
#   libraries (CUDA 13 toolkits carry no cuFile, cuSPARSELt or NVSHMEM).
# - Idempotent: a complete cache (its .complete stamp) is reused without any network access.
#
# Besides the benchmark references, this is the one place the project fetches from the Python
# package index; the README's two commands and CI never call it.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:-2.11.0}
python=${PYTHON:-python3}
cache=$PWD/.deps
wheels=$cache/wheels
say() { echo "torch2-deps: $*" >&2; }

done_prefix() {  # done_prefix DIR: prints DIR's CMake prefix when DIR is a complete cache
  [ -f "$1/.complete" ] && [ -f "$1/torch/share/cmake/Torch/TorchConfig.cmake" ] &&
    echo "$1/torch/share/cmake"
}
if prefix=$(done_prefix "$cache/torch-$version"); then
  say "reusing $cache/torch-$version ($(cat "$cache/torch-$version/.complete"))"
  echo "$prefix"
  exit 0
fi

mkdir -p "$wheels"
pytag=$("$python" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
# The nearest version with a wheel for this Python: VERSION itself, else the closest by
# (major, minor, patch) among those the index lists, newer on a tie.
download() {  # download VERSION: the wheel's path on stdout, or fails
  local v=$1 found
  found=$(ls "$wheels"/torch-"$v"-"$pytag"-*.whl 2>/dev/null | head -1 || true)
  if [ -z "$found" ]; then
    say "downloading torch $v ($pytag, --no-deps)"
    "$python" -m pip download --quiet --no-deps --only-binary=:all: --dest "$wheels" "torch==$v" >&2 ||
      return 1
    found=$(ls "$wheels"/torch-"$v"-"$pytag"-*.whl 2>/dev/null | head -1 || true)
  fi
  [ -n "$found" ] && echo "$found"
}
if ! wheel=$(download "$version"); then
  listed=$("$python" -m pip index versions torch 2>/dev/null | sed -n 's/^Available versions: //p' | tr -d ',')
  nearest=$("$python" - "$version" $listed <<'PY'
import sys
def key(v):
    parts = [int(p) for p in v.split("+")[0].split(".")[:3] if p.isdigit()]
    return parts + [0] * (3 - len(parts))
want = key(sys.argv[1])
cands = [v for v in sys.argv[2:] if key(v)[0] >= 2 and v != sys.argv[1]]
dist = lambda v: (abs(key(v)[0] - want[0]), abs(key(v)[1] - want[1]), abs(key(v)[2] - want[2]), [-k for k in key(v)])
print("\n".join(sorted(cands, key=dist)))
PY
)
  wheel=
  for v in $nearest; do
    if wheel=$(download "$v"); then
      say "torch $version has no wheel for $pytag here: took the nearest, $v"
      version=$v
      break
    fi
  done
  [ -n "$wheel" ] || { say "no torch 2.x wheel found for $pytag"; exit 1; }
  if prefix=$(done_prefix "$cache/torch-$version"); then
    echo "$prefix"
    exit 0
  fi
fi

dest=$cache/torch-$version
partial=$dest.partial
rm -rf "$partial"
mkdir -p "$partial"
say "unpacking $(basename "$wheel") (headers, libraries, CMake package)"
# libtorch_python is the Python extension's own library: a C++ build never links it.
"$python" - "$wheel" "$partial" <<'PY'
import sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        n = info.filename
        keep = n.startswith(("torch/include/", "torch/share/cmake/", "torch/lib/")) \
            or n == "torch/version.py" or n.endswith(".dist-info/METADATA")
        if keep and not n.endswith("libtorch_python.so"):
            z.extract(info, dest)
PY
chmod -R u+rwX "$partial"

wheel_cuda=$(sed -n "s/^cuda: .*= '\([0-9.]*\)'.*/\1/p" "$partial/torch/version.py")
[ -n "$wheel_cuda" ] || { say "$(basename "$wheel") is not a CUDA build (version.py names no CUDA)"; exit 1; }
local_cuda=$(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
[ -n "$local_cuda" ] || say "no nvcc on PATH: the CUDA build needs the CUDA toolkit to configure"
say "the wheel is built for CUDA $wheel_cuda; the local toolkit is ${local_cuda:-absent}"

# The NVIDIA runtime wheels: which libraries the torch libraries need that nothing provides.
all_runtime=0
[ "${wheel_cuda%%.*}" = "${local_cuda%%.*}" ] || all_runtime=1
missing=()
system_libs=$(ldconfig -p)
for lib in $(for so in "$partial"/torch/lib/*.so*; do readelf -d "$so" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p'; done | sort -u); do
  [ -e "$partial/torch/lib/$lib" ] && continue
  grep -q "^[[:space:]]$lib " <<<"$system_libs" && continue
  # libcuda.so.1 is the driver's: it comes with a GPU, never from a wheel.
  case $lib in libcuda.so.*) continue ;; lib*cu* | lib*nccl* | lib*nvshmem* | lib*nvrtc* | lib*nvJitLink* | lib*nvToolsExt*) missing+=("$lib") ;; esac
done
packages=$("$python" - "$partial" "$wheels" "$all_runtime" "${missing[@]}" <<'PY'
import glob, os, re, subprocess, sys, zipfile
dest, wheels, all_runtime, missing = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4:]
meta = open(glob.glob(os.path.join(dest, "*.dist-info/METADATA"))[0]).read()
pins = {}    # short name (cudnn, cufile, ...) -> requirement
for line in meta.splitlines():
    m = re.match(r'Requires-Dist: (nvidia-[a-z0-9-]+)==([^;\s]+)\s*;.*platform_system == "Linux"', line)
    if m:
        short = re.sub(r"^nvidia-|-cu\d+$", "", m.group(1))
        pins[short] = m.group(1) + "==" + m.group(2)
    m = re.match(r'Requires-Dist: cuda-toolkit\[([a-z0-9,]+)\]==([^;\s]+)', line)
    if m:  # the CUDA 13 wheels name the toolkit's parts as extras of one meta package
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--dest",
                        wheels, "cuda-toolkit==" + m.group(2)], check=True, stdout=sys.stderr)
        toolkit = glob.glob(os.path.join(wheels, "cuda_toolkit-" + m.group(2) + "-*.whl"))[0]
        with zipfile.ZipFile(toolkit) as z:
            tmeta = z.read(next(n for n in z.namelist() if n.endswith("METADATA"))).decode()
        for extra in m.group(1).split(","):
            e = re.search(r"Requires-Dist: (nvidia-[a-z0-9-]+)==([^;\s]+);.*linux.*extra == '"
                          + extra + "'", tmeta)
            if e:
                pins[extra] = e.group(1) + "==" + e.group(2).rstrip("*").rstrip(".") + ".*"
# A library's short name: libcusparseLt.so.0 -> cusparselt, libcublasLt.so.13 -> cublas.
alias = {"cudart": "cudart", "cublaslt": "cublas", "nvshmem_host": "nvshmem", "nvjitlink": "nvjitlink"}
want = set(pins) if all_runtime else set()
for lib in missing:
    short = re.sub(r"^lib|\.so.*$", "", lib).lower()
    short = alias.get(short, short)
    if short in pins:
        want.add(short)
    else:
        print("torch2-deps: no runtime wheel known for " + lib, file=sys.stderr)
print(" ".join(sorted(pins[w] for w in want)))
PY
)
if [ -n "$packages" ]; then
  say "runtime libraries: ${missing[*]:-all (CUDA majors differ)} from $packages"
  # shellcheck disable=SC2086
  "$python" -m pip download --quiet --no-deps --only-binary=:all: --dest "$wheels" $packages >&2
  for p in $packages; do
    name=${p%%==*}
    ver=${p#*==}
    w=$(ls "$wheels"/"${name//-/_}"-"${ver%.\*}"*.whl | head -1)
    "$python" -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith("nvidia/")])' "$w" "$partial"
  done
fi

# Every library the CMake build links must resolve now (through RPATH or the system).
unresolved=$(for so in "$partial"/torch/lib/libtorch*.so "$partial"/torch/lib/libc10*.so; do
  ldd "$so" | sed -n 's/^\s*\(\S*\) => not found/\1/p'
done | sort -u)
[ -z "$unresolved" ] || say "still unresolved at run time: $(echo $unresolved)"

echo "torch $version (CUDA $wheel_cuda, $pytag), unpacked $(date -u +%Y-%m-%d)" >"$partial/.complete"
rm -rf "$dest"
mv "$partial" "$dest"
say "LibTorch $version in $dest ($(du -sh "$dest" | cut -f1))"
echo "$dest/torch/share/cmake"
