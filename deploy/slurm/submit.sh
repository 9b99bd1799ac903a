#!/bin/bash
# Submit a fragility run to Slurm as a job array of N shards (one GPU each by
# default) and its merge as a job that depends on the whole array
# (--dependency=afterok), in one command:
#
#   deploy/slurm/submit.sh -n 8 -o runs/sweep -- --model /models/a-Q4_K_M.gguf \
#       --variants base,symbolic,noop --instances 10 --seed 7
#
# The merged run directory is OUT/merged; shard i (0-based task index) is
# OUT/shards/i; job logs are in OUT/logs. Everything after -- is given to
# `fragility run` in every shard.
#
# Options:
#   -n N      number of shards = array tasks (required)
#   -o OUT    output directory on a file system every node sees (required)
#   -g G      GPUs per shard (--gres=gpu:G; default 1; 0 for CPU-only shards)
#   -c C      CPU cores per shard (default 4; --threads and --threads-batch
#             default to C)
#   -t TIME   time limit per shard (default 24:00:00)
#   -p PART   partition
#   -A ACCT   account
#   -w        wait: submit the array with sbatch --wait, the merge with
#             sbatch --wait too, and exit with the worse of their statuses
# Environment: FRAGILITY_BIN, the fragility binary (default: fragility on PATH).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
n= out= gpus=1 cpus=4 limit=24:00:00 part= acct= wait=
while getopts n:o:g:c:t:p:A:wh opt; do
	case $opt in
	n) n=$OPTARG ;; o) out=$OPTARG ;; g) gpus=$OPTARG ;; c) cpus=$OPTARG ;;
	t) limit=$OPTARG ;; p) part=$OPTARG ;; A) acct=$OPTARG ;; w) wait=1 ;; *) usage ;;
	esac
done
shift $((OPTIND - 1))
[[ ${1:-} == -- ]] && shift
[[ $n =~ ^[1-9][0-9]*$ && -n $out ]] || usage

export FRAGILITY_OUT
FRAGILITY_OUT=$(realpath -m "$out")
export FRAGILITY_BIN=${FRAGILITY_BIN:-$(command -v fragility || echo fragility)}
mkdir -p "$FRAGILITY_OUT/logs"
common=()
[[ -n $part ]] && common+=(--partition="$part")
[[ -n $acct ]] && common+=(--account="$acct")
shard=(--array="0-$((n - 1))" --cpus-per-task="$cpus" --time="$limit" --output="$FRAGILITY_OUT/logs/shard-%A_%a.out")
((gpus > 0)) && shard+=(--gres="gpu:$gpus")
merge=(--kill-on-invalid-dep=yes --output="$FRAGILITY_OUT/logs/merge-%j.out")

if [[ -z $wait ]]; then
	jid=$(sbatch --parsable "${common[@]}" "${shard[@]}" "$here/fragility-shard.sbatch" "$@")
	jid=${jid%%;*}
	mid=$(sbatch --parsable "${common[@]}" "${merge[@]}" --dependency="afterok:$jid" "$here/fragility-merge.sbatch")
	echo "submitted: shards = array job $jid ($n tasks), merge = job ${mid%%;*} after all of them succeed"
	echo "merged run: $FRAGILITY_OUT/merged (logs: $FRAGILITY_OUT/logs)"
	exit 0
fi

# --wait: sbatch prints the array's job ID at once, then waits for its end.
exec {array}< <(sbatch --parsable --wait "${common[@]}" "${shard[@]}" "$here/fragility-shard.sbatch" "$@"; echo "exit=$?")
read -r jid <&"$array"
if [[ ! $jid =~ ^[0-9] ]]; then
	echo "submit.sh: the array was not submitted (${jid})" >&2
	exit 1
fi
jid=${jid%%;*}
echo "submitted: shards = array job $jid ($n tasks); waiting for them and the merge"
mrc=0
sbatch --parsable --wait "${common[@]}" "${merge[@]}" --dependency="afterok:$jid" "$here/fragility-merge.sbatch" >/dev/null || mrc=$?
arc=1
while read -r line <&"$array"; do
	[[ $line == exit=* ]] && arc=${line#exit=}
done
echo "shards: exit $arc; merge: exit $mrc; merged run: $FRAGILITY_OUT/merged (logs: $FRAGILITY_OUT/logs)"
((arc == 0 && mrc == 0))
