#!/bin/bash
# Start a sharded fragility run on Kubernetes and merge it when every shard
# has succeeded: the volume (fragility-pvc.yaml), the Indexed Job of shards
# (fragility-shards.yaml), then, once that Job is Complete, the merge Job
# (fragility-merge.yaml), whose log (the narrative) it prints.
#
#   deploy/kubernetes/submit.sh [-n NAMESPACE]
#
# Edit the image, SHARDS/completions, RUN and the run flags in the YAML files
# first. It stops with exit 1 if the shards' Job fails; fix the cause and run
# it again: finished shards are kept, unfinished ones resume.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ns=()
while getopts n:h opt; do
	case $opt in n) ns=(--namespace "$OPTARG") ;; *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;; esac
done
k() { kubectl "${ns[@]}" "$@"; }
k apply -f "$here/fragility-pvc.yaml"
# A Job's pod template cannot change: start a new one (finished shards stay on the volume).
k delete job fragility-shards fragility-merge --ignore-not-found
k apply -f "$here/fragility-shards.yaml"
echo "waiting for job/fragility-shards (kubectl get pods -l app.kubernetes.io/component=shard)"
while :; do
	state=$(k get job fragility-shards -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type} {end}')
	case " $state " in
	*" Complete "*) break ;;
	*" Failed "*) echo "job/fragility-shards failed: kubectl describe job fragility-shards" >&2; exit 1 ;;
	esac
	sleep 30
done
k apply -f "$here/fragility-merge.yaml"
k wait --for=condition=complete --timeout=6h job/fragility-merge
k logs job/fragility-merge
