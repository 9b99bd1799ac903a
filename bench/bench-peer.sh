#!/usr/bin/env bash
# bench-peer.sh: fragility against the script a researcher would write instead
# (bench/peer.py: llama-cpp-python, greedy, numpy entropy, one item at a time),
# on the same model, the same items (the prompt token ids fragility recorded)
# and the same number of generated tokens per item, back to back.
#
# Usage: bench/bench-peer.sh [FRAGILITY_BINARY]   (make bench-peer)
# Environment: PEER_MODEL (a cached model name or GGUF path; default the
# default LLM), PEER_ITEMS (12: the first PEER_ITEMS/2 built-in templates in
# base and noop), PEER_MAX_TOKENS (128), PEER_THREADS (1), PEER_BATCH (8),
# PEER_OUT (runs/bench-peer), PEER_VENV (~/.cache/fragility/bench-venv).
# The first call installs llama-cpp-python (pinned) and numpy into PEER_VENV;
# pip builds llama.cpp from the sdist, which takes minutes.
set -euo pipefail

BIN=${1:-bin/fragility}
MODEL=${PEER_MODEL:-qwen2.5-coder-0.5b}
ITEMS=${PEER_ITEMS:-12}
MAXTOK=${PEER_MAX_TOKENS:-128}
THREADS=${PEER_THREADS:-1}
BATCH=${PEER_BATCH:-8}
OUT=${PEER_OUT:-runs/bench-peer}
VENV=${PEER_VENV:-$HOME/.cache/fragility/bench-venv}
LLAMA_CPP_PYTHON=${PEER_LLAMA_CPP_PYTHON:-0.3.36}

die() { echo "bench-peer: $*" >&2; exit 1; }
[ -x "$BIN" ] || die "$BIN: no fragility binary (make build)"
[ $((ITEMS % 2)) -eq 0 ] && [ "$ITEMS" -ge 2 ] || die "PEER_ITEMS must be an even number ≥ 2, got $ITEMS"

PY=$VENV/bin/python
# The peer's llama.cpp is built like ours: for this CPU (cmake's GGML_NATIVE),
# with AMX off. On an AMX CPU (Intel Sapphire Rapids and later) a native
# llama-cpp-python build dies with a general protection fault in
# libggml-cpu.so at its first decode on this VM, and our own build leaves
# AMX out (Makefile: AMX_OFF). The flags are kept beside the venv, and a
# venv built with other flags is rebuilt.
PEER_CFLAGS=""
if echo 'int x;' | cc -march=native -mno-amx-tile -mno-amx-int8 -mno-amx-bf16 -x c -c -o /dev/null - 2>/dev/null; then
  PEER_CFLAGS="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
fi
STAMP="llama-cpp-python==$LLAMA_CPP_PYTHON CFLAGS=$PEER_CFLAGS"
if [ "$(cat "$VENV/.fragility-peer" 2>/dev/null)" != "$STAMP" ] || ! "$PY" -c 'import llama_cpp, numpy' 2>/dev/null; then
  echo "bench-peer: installing llama-cpp-python==$LLAMA_CPP_PYTHON and numpy into $VENV (builds llama.cpp from source: minutes)" >&2
  python3 -m venv "$VENV" || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
  "$VENV/bin/pip" install -q --upgrade pip
  CMAKE_ARGS="-DCMAKE_C_FLAGS='$PEER_CFLAGS' -DCMAKE_CXX_FLAGS='$PEER_CFLAGS'" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
    "$VENV/bin/pip" install -q --force-reinstall --no-cache-dir "llama-cpp-python==$LLAMA_CPP_PYTHON" numpy ||
    die "pip could not install llama-cpp-python (it needs a C++ compiler and cmake)"
  echo "$STAMP" > "$VENV/.fragility-peer"
fi
PEER_VERSION=$("$PY" -c 'import llama_cpp; print(llama_cpp.__version__)')

MODEL_PATH=$("$BIN" models path "$MODEL" 2>/dev/null || true)
[ -n "$MODEL_PATH" ] || MODEL_PATH=$MODEL
[ -f "$MODEL_PATH" ] || die "$MODEL: not a cached model name nor a GGUF file (make models)"

mkdir -p "$OUT"
TPL=$OUT/templates
rm -rf "$TPL" && mkdir -p "$TPL"
ls templates/builtin/*.yaml | sort | head -n $((ITEMS / 2)) | xargs -I{} cp {} "$TPL/"

run() { # run BATCH DIR: fragility run on the items, the DDC classifier off (the peer has none)
  "$BIN" run --model "$MODEL_PATH" --templates "$TPL" --variants base,noop --instances 1 --shots 3 \
    --max-tokens "$MAXTOK" --seed 1 --threads "$THREADS" --batch "$1" --no-ddc --no-html --quiet \
    --out "$2" --force > /dev/null
}
rate() { # rate DIR: generated tokens, and tokens/s over the manifest's wall time (model load included)
  "$PY" - "$1" <<'EOF'
import json, sys, os
d = sys.argv[1]
tok = sum(len(json.loads(l).get("tokens") or []) for l in open(os.path.join(d, "traces.jsonl")) if l.strip())
m = json.load(open(os.path.join(d, "manifest.json")))
print(tok, "%.2f" % (tok / m["wall_seconds"]), "%.1f" % m["wall_seconds"])
EOF
}

echo "bench-peer: $(basename "$MODEL_PATH"), $((ITEMS / 2)) built-in templates in base and noop (with the symbolic draw noop is paired with) × up to $MAXTOK tokens, $THREADS thread(s); back to back:" >&2
echo "bench-peer: fragility run --batch 1 ..." >&2
run 1 "$OUT/batch1"
read -r T1 R1 S1 < <(rate "$OUT/batch1")
echo "bench-peer: peer (llama-cpp-python $PEER_VERSION) on the same prompt token ids and token counts ..." >&2
PEER_JSON=$("$PY" bench/peer.py "$MODEL_PATH" "$OUT/batch1" "$THREADS")
echo "$PEER_JSON" > "$OUT/peer.json"
echo "bench-peer: fragility run --batch $BATCH ..." >&2
run "$BATCH" "$OUT/batch$BATCH"
read -r TB RB SB < <(rate "$OUT/batch$BATCH")

"$PY" - "$PEER_JSON" "$T1" "$R1" "$S1" "$TB" "$RB" "$SB" "$BATCH" "$PEER_VERSION" "$ITEMS" "$MAXTOK" "$THREADS" "$(basename "$MODEL_PATH")" <<'EOF' | tee "$OUT/table.md"
import json, sys, subprocess
p = json.loads(sys.argv[1])
t1, r1, s1, tb, rb, sb = int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], int(sys.argv[5]), float(sys.argv[6]), sys.argv[7]
batch, ver, items, maxtok, threads, model = sys.argv[8:14]
cpu = "?"
for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
    if line.startswith("Model name:"):
        cpu = line.split(":", 1)[1].strip()
nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
pr = p["tokens_per_s"]
print(f"{model}, {p['items']} items ({int(items) // 2} built-in templates in base, noop and the symbolic draw each noop item is paired with, 3 shots) × up to {maxtok} tokens, "
      f"{threads} llama.cpp thread(s) for one-token decodes and all {nproc} for prompts and batches (both tools' defaults); {cpu}, {nproc} CPUs")
print()
print("| | tokens/s | vs peer | target |")
print("|---|---|---|---|")
print(f"| peer: llama-cpp-python {ver} loop + numpy entropy ({p['tokens']} tokens, {p['seconds']:.1f} s) | {pr:.2f} | 1.00 | |")
v1, vb = r1 / pr, rb / pr
print(f"| `fragility run --batch 1` ({t1} tokens, wall {s1} s in the manifest) | {r1:.2f} | **{v1:.2f}** | ≥ 1.00 {'met' if v1 >= 1 else 'MISSED'} |")
print(f"| `fragility run --batch {batch}` ({tb} tokens, wall {sb} s) | {rb:.2f} | **{vb:.2f}** | ≥ 2.00 {'met' if vb >= 2 else 'MISSED'} |")
print()
print(f"Same greedy tokens as `--batch 1` on {p['same_tokens']} of {p['items']} items; largest per-token entropy "
      f"difference while the contexts are equal {p['max_entropy_diff_bits']:.2e} bits. The peer's time excludes its model load; "
      f"fragility's wall time includes it. Peer entropy pass: {p['entropy_ms_per_token']:.2f} ms per token.")
EOF
