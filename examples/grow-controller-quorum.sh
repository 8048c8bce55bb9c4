#!/usr/bin/env bash
# Runbook: grow a 1-controller KRaft quorum to 3, then replace a failed controller (KIP-853),
# rehearsed on a kjbod cluster state.
#
# The rules this rehearses, with Kafka's own errors when they are broken:
#   - reconfiguration needs kraft.version 1 (a --standalone/--initial-controllers format has it);
#   - a new controller must run and have caught up with the leader before it is added;
#   - one voter change at a time: a change commits once a majority of the new voter set has
#     fetched it (here: when the simulated clock moves), and the next one waits for that;
#   - keep the voter count odd: 2 voters survive no more failures than 1;
#   - a failed controller that comes back on a new disk has a new directory id: remove the old
#     voter (same node id, old directory id), then add the new one.
#
# Usage: examples/grow-controller-quorum.sh   (runs in a temporary folder; KJBOD=... picks the binary)
set -euo pipefail

KJBOD="${KJBOD:-kjbod}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export KJBOD_STATE="$work/state"

step() { printf '\n== %s\n' "$*"; }
run() { printf '$ kjbod %s\n' "$*"; "$KJBOD" "$@"; }
# A step that must be refused (exit 1): the runbook stops if it is not.
refused() {
    printf '$ kjbod %s   # expected to be refused\n' "$*"
    local code=0
    "$KJBOD" "$@" || code=$?
    if [ "$code" -ne 1 ]; then
        echo "runbook: expected exit 1 from 'kjbod $*', got $code" >&2
        exit 1
    fi
}
# The directory id in a controller's formatted metadata directory.
directory_id() {
    "$KJBOD" -o json meta show "$work/controller-$1/metadata" | python3 -c 'import json, sys; print(json.load(sys.stdin)["directories"][0]["directoryId"])'
}
# How many voters `quorum describe` reports.
voter_count() {
    "$KJBOD" -o json quorum describe --status | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["voters"]))'
}

for id in 1 2 3; do
    cat >"$work/controller-$id.properties" <<EOF
process.roles=controller
node.id=$id
controller.listener.names=CONTROLLER
listeners=CONTROLLER://controller-$id:9093
controller.quorum.bootstrap.servers=controller-1:9093
log.dirs=$work/controller-$id/metadata
EOF
done
cluster_id="$("$KJBOD" meta random-uuid)"

step "1. Controller 1 alone: format it with --standalone (kraft.version 1, voter set {1})"
run format --config "$work/controller-1.properties" --cluster-id "$cluster_id" --standalone
run quorum describe --status

step "2. Format controllers 2 and 3 to join an existing quorum: --no-initial-controllers"
run format --config "$work/controller-2.properties" --cluster-id "$cluster_id" --no-initial-controllers
run format --config "$work/controller-3.properties" --cluster-id "$cluster_id" --no-initial-controllers

step "3. Controller 2 must run and catch up before it can be added"
refused quorum add-controller --config "$work/controller-2.properties"
run quorum start-controller --config "$work/controller-2.properties"
refused quorum add-controller --config "$work/controller-2.properties"
run clock advance 5s
run quorum describe --replication

step "4. Add controller 2; a second change before the first commits is refused"
run quorum start-controller --config "$work/controller-3.properties"
run clock advance 5s
run quorum add-controller --config "$work/controller-2.properties"
refused quorum add-controller --config "$work/controller-3.properties"
run quorum describe --replication
run clock advance 1s

step "5. Add controller 3 once the first change committed: three voters, one failure tolerated"
run quorum add-controller --config "$work/controller-3.properties"
run clock advance 1s
run quorum describe --status
[ "$(voter_count)" = 3 ] || { echo "runbook: expected 3 voters" >&2; exit 1; }

step "6. Controller 3's disk fails; the quorum runs on with 2 of 3"
old_dir="$(directory_id 3)"
run quorum stop-controller --controller-id 3
run clock advance 30s
run quorum describe --replication

step "7. Remove the failed voter (node 3 with its old directory id) and wait for the commit"
run quorum remove-controller --controller-id 3 --controller-directory-id "$old_dir"
run clock advance 1s

step "8. Format the new disk (a new directory id), start controller 3, add it back"
rm -rf "$work/controller-3"
run format --config "$work/controller-3.properties" --cluster-id "$cluster_id" --no-initial-controllers
echo "directory id: $old_dir -> $(directory_id 3)"
run quorum start-controller --config "$work/controller-3.properties"
run clock advance 5s
run quorum add-controller --config "$work/controller-3.properties"
run clock advance 1s
run quorum describe --status
run quorum describe --replication
[ "$(voter_count)" = 3 ] || { echo "runbook: expected 3 voters" >&2; exit 1; }
