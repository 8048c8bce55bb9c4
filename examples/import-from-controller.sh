#!/usr/bin/env bash
# Runbook: rehearse on the real cluster from a KRaft controller's own metadata.
#
# A controller keeps the exact cluster state on its disk, in Kafka's binary format: snapshots
# (__cluster_metadata-0/<offset>-<epoch>.checkpoint) and the log segments after them. kjbod
# imports them as they are (directory ids, ISR, epochs, configs, features...), and saved
# `kafka-log-dirs --describe` output adds the paths and sizes. Then a plan is made and checked
# against that exact state, before anything touches production.
#   1. copy the controller's latest snapshot, the log after it, and a kafka-log-dirs output;
#   2. look into the copied files;
#   3. import them into a new cluster state;
#   4. see what came in;
#   5. plan a rebalance onto the two new brokers, and check the plan.
#
# examples/controller-metadata/ stands for the controller host: its files were written by
# Kafka's own code (see its README). Usage: examples/import-from-controller.sh (runs in a
# temporary folder; KJBOD=... picks the binary)
set -euo pipefail

KJBOD="${KJBOD:-kjbod}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export KJBOD_STATE="$work/state"

step() { printf '\n== %s\n' "$*"; }
run() { printf '$ kjbod %s\n' "$*"; "$KJBOD" "$@"; }

controller="$here/controller-metadata/__cluster_metadata-0"   # on the controller: <metadata dir>/__cluster_metadata-0

step "1. Copy the latest snapshot, the log segments after it, and a kafka-log-dirs output"
# On the controller host (with the controller running: snapshots are immutable once renamed):
#   ls <metadata dir>/__cluster_metadata-0/*.checkpoint | sort | tail -1
# and on any host: kafka-log-dirs --bootstrap-server ... --describe > log-dirs.txt
copy="$work/copy/__cluster_metadata-0"
mkdir -p "$copy"
latest="$(ls "$controller"/*.checkpoint | sort | tail -1)"
cp "$latest" "$controller"/*.log "$copy/"
cp "$here/controller-metadata/log-dirs.txt" "$work/copy/"
ls "$copy"

step "2. What the files hold: the records committed after the snapshot"
run metadata dump --kafka-file "$copy/00000000000000000812.log"

step "3. Import the controller's state, and the paths and sizes kafka-log-dirs reported"
run import cluster --metadata-snapshot "$copy/$(basename "$latest")" --metadata-log "$copy" \
    --log-dirs "$work/copy/log-dirs.txt" | tee "$work/import.out"
grep -q "Joined 18 of 18 log directories" "$work/import.out"

step "4. What came in: brokers, a topic created after the snapshot, directories by path"
run broker list
run topic describe audit
run broker describe --id 6

step "5. Plan moving replicas onto the new brokers 5 and 6, and check the plan"
run reassign plan --goal add-brokers --brokers 5,6 --engine local --output-file "$work/plan.json"
run reassign check --reassignment-json-file "$work/plan.json" --throttle 50000000 \
    --replica-alter-log-dirs-throttle 100000000
echo
echo "The plan is Kafka's reassignment JSON: kafka-reassign-partitions --execute --reassignment-json-file plan.json"
