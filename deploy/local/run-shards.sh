#!/bin/bash
# Run a fragility plan as N shards side by side on one machine, one GPU per
# shard (CUDA_VISIBLE_DEVICES), then merge them: plain shell, no scheduler.
#
#   deploy/local/run-shards.sh -n 4 -o runs/sweep -- --model m.gguf --instances 10
#
# Shard k (1..N) sees GPU number k-1 of GPUS (default: 0,1,...,N-1; set e.g.
# GPUS=2,3 to use GPUs 2 and 3, or GPUS=none for CPU-only shards) and writes
# OUT/shards/k; its log is OUT/logs/shard-k.log; the merge is OUT/merged.
# Everything after -- is given to `fragility run` in every shard; give
# --threads and --threads-batch so that all shards share one plan (default
# here: 1 and 1 per shard).
# Re-running the command resumes unfinished shards and skips finished ones.
# Environment: FRAGILITY_BIN (default: fragility on PATH).
set -euo pipefail
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
n= out=
while getopts n:o:h opt; do
	case $opt in n) n=$OPTARG ;; o) out=$OPTARG ;; *) usage ;; esac
done
shift $((OPTIND - 1))
[[ ${1:-} == -- ]] && shift
[[ $n =~ ^[1-9][0-9]*$ && -n $out ]] || usage
bin=${FRAGILITY_BIN:-fragility}
IFS=, read -r -a gpus <<<"${GPUS:-$(seq -s, 0 $((n - 1)))}"
threads=()
[[ " $* " == *" --threads "* || " $* " == *" --threads="* ]] || threads+=(--threads 1)
[[ " $* " == *" --threads-batch"* ]] || threads+=(--threads-batch 1)
mkdir -p "$out/shards" "$out/logs"

pids=()
for k in $(seq 1 "$n"); do
	dir=$out/shards/$k
	gpu=${gpus[$(((k - 1) % ${#gpus[@]}))]}
	[[ $gpu == none ]] && gpu=
	if [[ -f $dir/manifest.json ]] && grep -q '"status": "complete"' "$dir/manifest.json"; then
		continue
	elif [[ -f $dir/manifest.json ]]; then
		args=(run --resume "$dir" --quiet)
	else
		args=(run --shard "$k/$n" --out "$dir" --quiet "${threads[@]}" "$@")
	fi
	CUDA_VISIBLE_DEVICES=$gpu "$bin" "${args[@]}" >"$out/logs/shard-$k.log" 2>&1 &
	pids+=($!)
done
failed=0
for p in "${pids[@]}"; do
	wait "$p" || failed=$((failed + 1))
done
if ((failed > 0)); then
	echo "run-shards.sh: $failed shard(s) failed: see $out/logs; run the same command again to resume them" >&2
	exit 1
fi
exec "$bin" merge --force "$out/merged" "$out"/shards/*/
