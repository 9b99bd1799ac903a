#!/bin/bash
# The same as run-shards.sh with GNU parallel: N shards, at most one per GPU
# at a time ({%}, parallel's job slot 1..J, picks the GPU), then the merge.
#
#   deploy/local/run-shards-parallel.sh -n 8 -j 4 -o runs/sweep -- --model m.gguf --instances 10
#
# -n N shards, -j J GPUs (concurrent shards; default N). Shard k writes
# OUT/shards/k and logs to OUT/logs/shard-k.log; OUT/logs/parallel.log (the
# --joblog) records each shard's exit status. Running the same command again
# resumes unfinished shards and skips finished ones.
# Everything after -- is given to `fragility run` in every shard (default
# --threads 1 --threads-batch 1). Environment: FRAGILITY_BIN (default: fragility on PATH).
set -euo pipefail
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
n= out= jobs=
while getopts n:o:j:h opt; do
	case $opt in n) n=$OPTARG ;; o) out=$OPTARG ;; j) jobs=$OPTARG ;; *) usage ;; esac
done
shift $((OPTIND - 1))
[[ ${1:-} == -- ]] && shift
[[ $n =~ ^[1-9][0-9]*$ && -n $out ]] || usage
command -v parallel >/dev/null || { echo "run-shards-parallel.sh: GNU parallel is not installed (use run-shards.sh)" >&2; exit 1; }
export FRAGILITY_BIN=${FRAGILITY_BIN:-fragility}
threads=()
[[ " $* " == *" --threads "* || " $* " == *" --threads="* ]] || threads+=(--threads 1)
[[ " $* " == *" --threads-batch"* ]] || threads+=(--threads-batch 1)
mkdir -p "$out/shards" "$out/logs"
# One shard: resume it when its directory exists, else start it.
shard() {
	local k=$1 n=$2 out=$3 slot=$4
	shift 4
	local dir=$out/shards/$k
	export CUDA_VISIBLE_DEVICES=$((slot - 1))
	if [[ -f $dir/manifest.json ]]; then
		grep -q '"status": "complete"' "$dir/manifest.json" && return 0
		"$FRAGILITY_BIN" run --resume "$dir" --quiet
	else
		"$FRAGILITY_BIN" run --shard "$k/$n" --out "$dir" --quiet "$@"
	fi >"$out/logs/shard-$k.log" 2>&1
}
export -f shard
parallel --will-cite --quote --jobs "${jobs:-$n}" --joblog "$out/logs/parallel.log" \
	shard {} "$n" "$out" {%} "${threads[@]}" "$@" ::: $(seq 1 "$n")
exec "$FRAGILITY_BIN" merge --force "$out/merged" "$out"/shards/*/
