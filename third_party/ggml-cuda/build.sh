#!/usr/bin/env bash
# Builds ggml's CUDA backend (libggml-cuda.so + libggml-base.so.0) with cmake
# from pinned ggml sources and copies it into a directory the fragility binary
# loads backends from (bin/lib, next to the binary). Used by `make cuda` and
# .ci/gpu-check.sh; needs bash, cmake >= 3.21, a C/C++ compiler and, for
# cuda, the CUDA toolkit (nvcc); uses ninja when present. No Go, no network.
#
#   build.sh GGML_SRC BUILD_DIR OUT_DIR [ARCHS]
#
# ARCHS is CMAKE_CUDA_ARCHITECTURES ("90", "86;89", "native"); empty means the
# compute capabilities nvidia-smi reports, else "native". FRAGILITY_BACKEND=cpu
# builds a loadable CPU backend instead (a check of the loading path that
# needs no CUDA). JOBS overrides the parallelism.
set -euo pipefail

if [[ $# -lt 3 ]]; then
  echo "usage: $0 GGML_SRC BUILD_DIR OUT_DIR [CUDA_ARCHITECTURES]" >&2
  exit 2
fi
src=$1 build=$2 out=$3 archs=${4:-}
backend=${FRAGILITY_BACKEND:-cuda}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [[ ! -f $src/src/CMakeLists.txt ]]; then
  echo "ggml sources not found: $src/src/CMakeLists.txt is missing" >&2
  exit 1
fi

args=(-S "$here" -B "$build" -DGGML_SRC="$(cd "$src" && pwd)" -DFRAGILITY_BACKEND="$backend" -DCMAKE_BUILD_TYPE=Release)
target=ggml-$backend
if [[ $backend == cuda ]]; then
  nvcc=${CUDACXX:-}
  if [[ -z $nvcc ]]; then
    nvcc=$(command -v nvcc 2>/dev/null || true)
  fi
  if [[ -z $nvcc && -x /usr/local/cuda/bin/nvcc ]]; then
    nvcc=/usr/local/cuda/bin/nvcc
  fi
  if [[ -z $nvcc ]]; then
    echo "CUDA toolkit (nvcc) not found: install the CUDA toolkit and put nvcc on PATH (or set CUDACXX); CPU builds need nothing of this" >&2
    exit 1
  fi
  if [[ -z $archs ]] && command -v nvidia-smi >/dev/null 2>&1; then
    # "9.0" -> "90"; several GPUs give a ;-list without repeats.
    archs=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d ' .' | grep -E '^[0-9]+$' | sort -u | paste -sd ';' || true)
  fi
  command -v cmake >/dev/null 2>&1 || { echo "cmake not found: install cmake >= 3.21 to build the $backend backend" >&2; exit 1; }
  archs=${archs:-native}
  echo "cuda: nvcc $nvcc ($("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')), CUDA architectures $archs"
  args+=(-DCMAKE_CUDA_COMPILER="$nvcc" -DCUDAToolkit_ROOT="$(cd "$(dirname "$nvcc")/.." && pwd)" -DCMAKE_CUDA_ARCHITECTURES="$archs")
else
  command -v cmake >/dev/null 2>&1 || { echo "cmake not found: install cmake >= 3.21 to build the $backend backend" >&2; exit 1; }
fi
if command -v ninja >/dev/null 2>&1 && [[ ! -f $build/CMakeCache.txt || -f $build/build.ninja ]]; then
  args+=(-G Ninja)
fi

mkdir -p "$build"
log=$build/fragility-configure.log
cmake "${args[@]}" >"$log" 2>&1 || { tail -n 30 "$log" >&2; echo "$backend: cmake configure failed (full log: $log)" >&2; exit 1; }
cmake --build "$build" --target "$target" --parallel "${JOBS:-$(nproc 2>/dev/null || echo 4)}"

mkdir -p "$out"
lib=$build/lib
if [[ $backend == cpu ]]; then
  mod=$lib/libggml-cpu.so
else
  mod=$lib/libggml-cuda.so
fi
[[ -f $mod ]] || { echo "$backend: build finished but $mod is missing" >&2; exit 1; }
base=$(ls "$lib"/libggml-base.so.0 2>/dev/null || true)
[[ -n $base ]] || { echo "$backend: $lib/libggml-base.so.0 is missing" >&2; exit 1; }
# -L: copy the files the SONAME links point to, under the SONAME.
cp -fL "$mod" "$out/"
cp -fL "$base" "$out/libggml-base.so.0"
echo "$backend: $(basename "$mod") and libggml-base.so.0 in $out"
