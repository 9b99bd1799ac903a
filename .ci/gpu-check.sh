#!/usr/bin/env bash
# GPU check: on a machine with an NVIDIA GPU, the CUDA toolkit (nvcc), cmake
# and (preferably) ninja, but no Go and no network. It needs the bundle that
# `make gpu-bundle` stages in .gpu-bundle/ on a machine with Go: the pinned
# ggml sources, a portable bin/fragility and the tiny model. It
#   1. builds ggml's CUDA backend from those sources for the local GPU's
#      architecture (nvidia-smi; override with CUDA_ARCH=90),
#   2. runs the carried binary on the tiny model on the GPU (all layers
#      offloaded) and on the CPU (no backend loaded), greedy, same prompt,
#   3. prints the maximum absolute per-token entropy difference, the first
#      position where the chosen tokens differ (if any) and the tokens/s of each,
#   4. runs `fragility bench` on the 0.5B instruct model with all layers on the
#      device, when that model is on the machine (BENCH_MODEL=PATH, or the
#      fragility cache), and prints its b/a (generation with the exact entropy
#      pass in the pass pool, beside the next decode, over bare decodes) and
#      the entropy pass per token; otherwise it says it skipped this step and
#      why (the model, ~400 MB, does not travel in the bundle).
# Exit status: 0 when both runs finished and the GPU run really used the GPU;
# 1 on a missing tool or a failed step. The numbers are reported, not judged:
# GPU and CPU kernels differ in summation order, so small differences are
# expected. Rerunning is cheap: the build directory (.cuda/gpu-check) is kept
# and reused while the carried sources are unchanged.
#
#   .ci/gpu-check.sh                   # CUDA_ARCH, MAX_TOKENS, BUNDLE, JOBS may be set
#   FRAGILITY_BACKEND=cpu GGML_SRC=<module>/ml/backend/ggml/ggml .ci/gpu-check.sh
#       # CUDA-free rehearsal: a loadable CPU backend instead of CUDA
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
bundle=${BUNDLE:-.gpu-bundle}
max_tokens=${MAX_TOKENS:-128}
backend=${FRAGILITY_BACKEND:-cuda}
ggml=${GGML_SRC:-$bundle/ggml}  # the rehearsal needs the full module sources (ggml-cpu is not bundled)
work=$root/.cuda/gpu-check
t_start=$(date +%s)

say() { printf 'gpu-check: %s\n' "$*"; }
die() { printf 'gpu-check: FAILED: %s\n' "$*" >&2; exit 1; }

for f in "$bundle/bin/fragility" "$bundle/tiny.gguf" "$ggml/src/CMakeLists.txt"; do
  [[ -e $f ]] || die "$f missing: run \`make gpu-bundle\` on a machine with Go and carry $bundle"
done
command -v cmake >/dev/null 2>&1 || die "cmake not found"
if [[ $backend == cuda ]]; then
  command -v nvcc >/dev/null 2>&1 || [[ -x /usr/local/cuda/bin/nvcc || -n ${CUDACXX:-} ]] ||
    die "CUDA toolkit (nvcc) not found: install it or put it on PATH (or set CUDACXX)"
  command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,memory.total,compute_cap,driver_version --format=csv,noheader | sed 's/^/gpu-check: GPU: /'
fi
say "bundle: $(cat "$bundle/VERSION" 2>/dev/null || echo "no VERSION file")"
say "host: $(uname -m), $(nproc) cores, cmake $(cmake --version | sed -n '1s/.* //p'), ninja $(ninja --version 2>/dev/null || echo absent)"

# The carried sources may arrive with new timestamps on every call: build
# from a copy that is replaced only when the content changed, so a rerun does
# not recompile.
mkdir -p "$work"
sum=$(cd "$ggml" && find -L . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
if [[ $(cat "$work/src.sum" 2>/dev/null) != "$sum-$backend" ]]; then
  rm -rf "$work/ggml" "$work/build-$backend"
  cp -rL "$ggml" "$work/ggml" && chmod -R u+w "$work/ggml"
  echo "$sum-$backend" >"$work/src.sum"
fi
lib=$work/lib-$backend
rm -rf "$lib"
t0=$(date +%s)
# ninja's progress lines are thinned to every 20th, with the elapsed time.
third_party/ggml-cuda/build.sh "$work/ggml" "$work/build-$backend" "$lib" "${CUDA_ARCH:-}" 2>&1 |
  awk -v t0="$t0" '!/^\[[0-9]+\/[0-9]+\] / || ++n % 20 == 0 { if (/^\[/) { "date +%s" | getline now; close("date +%s"); $0 = "(" now - t0 " s) " $0 } print; fflush() }' || true
[[ -f $lib/libggml-$backend.so ]] || die "the $backend backend was not built (see above)"
say "backend build: $(( $(date +%s) - t0 )) s"

bin=$bundle/bin/fragility
model=$bundle/tiny.gguf
out=$work/out
mkdir -p "$out"
prompt="Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. How many clips did Natalia sell altogether in April and May?"

# Where the model runs, as the binary reports it.
"$bin" inspect --backend-dir "$lib" --json "$model" >"$out/inspect-gpu.json" 2>"$out/inspect-gpu.err" ||
  { cat "$out/inspect-gpu.err" >&2; die "fragility inspect with the $backend backend failed"; }
gpu_backend=$(sed -n 's/^  "backend": "\(.*\)",$/\1/p' "$out/inspect-gpu.json")
say "device run on: $gpu_backend"
awk '/^  "devices": \[/{d=1} d&&/"(name|description|type|memory_total_bytes|compute_major|compute_minor)"/{gsub(/^ +|,$/,""); printf "%s ", $0} d&&/^    }/{print ""} d&&/^  \]/{d=0}' "$out/inspect-gpu.json" |
  sed 's/^/gpu-check:   device: /'

gen() { # gen NAME ARGS...: one greedy generation, JSON on disk
  local name=$1; shift
  "$bin" generate --model "$model" --prompt "$prompt" --max-tokens "$max_tokens" --json "$@" \
    >"$out/$name.json" 2>"$out/$name.err" || { cat "$out/$name.err" >&2; die "$name run failed"; }
}
gen device --backend-dir "$lib" --gpu-layers -1
gen cpu --backend-dir "$work/no-backends" --gpu-layers 0

# Pull the per-token ids and entropies and the decode time out of the JSON
# (one field per line, as fragility writes it) without jq or Python.
fields() { # fields FILE: "id entropy" per generated token
  awk '/"tokens": \[/{t=1} t&&/"id": /{gsub(/[",]/,"");id=$2} t&&/"entropy_bits": /{gsub(/,/,"");print id, $2} t&&/^  \]/{t=0}' "$1"
}
rate() { # rate FILE: generated tokens per second of llama_decode time
  awk '/"entropy_bits": /{n++} /"decode_seconds": /{gsub(/,/,"");d=$2} END{if(d>0)printf "%.1f tokens/s (%d tokens in %.4f s of decode)", n/d, n, d; else print "n/a"}' "$1"
}
fields "$out/device.json" >"$out/device.tsv"
fields "$out/cpu.json" >"$out/cpu.tsv"
n_dev=$(wc -l <"$out/device.tsv")
n_cpu=$(wc -l <"$out/cpu.tsv")
[[ $n_dev -gt 0 && $n_cpu -gt 0 ]] || die "no generated tokens found in the JSON output ($n_dev device, $n_cpu CPU)"

say "prompt tokens: $(sed -n 's/^  "prompt_tokens": \([0-9]*\),$/\1/p' "$out/cpu.json"), generated: $n_dev ($backend) / $n_cpu (CPU)"
paste -d' ' "$out/device.tsv" "$out/cpu.tsv" | awk '
  { d = $2 - $4; if (d < 0) d = -d
    if ($1 == $3 && !div) { n++; if (d > max) { max = d; at = NR - 1 } }
    else if (!div) { div = NR } }
  END {
    printf "gpu-check: max |H_device - H_cpu| = %.3e bits over %d tokens with identical ids (at token %d)\n", max, n, at
    if (div) printf "gpu-check: chosen tokens first differ at token %d (entropies after that are not compared)\n", div - 1
    else print "gpu-check: chosen tokens identical at every position"
  }'
say "tokens/s $backend: $(rate "$out/device.json")"
say "tokens/s CPU:  $(rate "$out/cpu.json")"

if [[ $backend == cuda && $gpu_backend != CUDA* ]]; then
  die "the device run did not use a CUDA device (backend: $gpu_backend); llama.cpp log: FRAGILITY_LLAMA_LOG=1 $bin inspect --backend-dir $lib $model"
fi
bench_model=${BENCH_MODEL:-$("$bin" models path qwen2.5-coder-0.5b 2>/dev/null || true)}
if [[ -n $bench_model && -f $bench_model ]]; then
  say "fragility bench on $(basename "$bench_model"), all layers on the device (${BENCH_REPS:-5} repeats):"
  "$bin" bench --model "$bench_model" --backend-dir "$lib" --gpu-layers -1 --reps "${BENCH_REPS:-5}" --no-ddc \
    >"$out/bench.md" 2>"$out/bench.err" || { cat "$out/bench.err" >&2; die "fragility bench on the device failed"; }
  sed 's/^/gpu-check:   /' "$out/bench.md"
  row() { sed -n "s/^| $1[^|]*| *\([^|]*[^ |]\) *|\$/\1/p" "$out/bench.md"; }
  say "b/a with the entropy pass pool on the device: $(row 'ratio b\/a'); entropy pass $(row '(b) entropy pass') ms per token; $(sed -n 's/^entropy *//p' "$out/bench.md")"
  say "answer scoring: $(row '(c) answer scoring, share') of generation, 95% CI $(row '(c) answer scoring share, 95'); ms per token (a) decode | (b) decode + step + wait: $(row '  ms\/token')"
  say "(the every-core series of b/a is for CPU decoding: with all layers on the device the bench skips it)"
else
  say "fragility bench on the 0.5B model: SKIPPED (no qwen2.5-coder-0.5b here: set BENCH_MODEL=PATH to its GGUF file)"
fi
say "done in $(( $(date +%s) - t_start )) s; outputs in ${out#"$root"/}"
