#!/usr/bin/env bash
# Runbook: a rolling upgrade from Kafka 4.2 to 4.3, rehearsed on a kjbod cluster state.
#
# metadata.version 4.3-IV0 changes metadata, so finalizing it is a one-way door: once the
# cluster runs 4.3-IV0 it cannot go back to 4.2. The controller refuses to finalize a level
# that any registered broker does not support, so the order is:
#   1. every broker runs 4.2 binaries (supports metadata.version up to 4.2-IV1, level 29);
#   2. `features upgrade --release-version 4.3` is refused and names the broker that blocks it;
#   3. roll the binaries one broker at a time: controlled shutdown, restart on 4.3 binaries
#      (the broker registers again with the new supported range), heartbeat until unfenced;
#   4. `upgrade --dry-run` says it would pass; `upgrade` finalizes; `describe` confirms;
#   5. a downgrade back to 4.2 is refused (metadata changed in 4.3-IV0).
#
# Usage: examples/rolling-upgrade.sh   (runs in a temporary folder; KJBOD=... picks the binary)
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

# What each release's binaries advertise when a broker registers (kafka-features
# version-mapping gives the levels each release finalizes).
OTHERS=(--supported-feature kraft.version=0-1 --supported-feature transaction.version=0-2
        --supported-feature group.version=0-1 --supported-feature eligible.leader.replicas.version=0-1
        --supported-feature share.version=0-1 --supported-feature streams.version=0-1)
SUPPORTS_4_2=(--supported-feature metadata.version=7-29 "${OTHERS[@]}")
SUPPORTS_4_3=(--supported-feature metadata.version=7-30 "${OTHERS[@]}")
BROKERS=(1 2 3)

step "A 4.2 cluster: format the controller at metadata.version 4.2"
cat >"$work/controller.properties" <<EOF
process.roles=controller
node.id=3000
controller.quorum.voters=3000@localhost:9093
controller.listener.names=CONTROLLER
log.dirs=$work/controller/metadata
EOF
cluster_id="$("$KJBOD" meta random-uuid)"
run format --config "$work/controller.properties" --cluster-id "$cluster_id" --release-version 4.2

step "Three JBOD brokers on 4.2 binaries register and are unfenced"
declare -A dirs
for id in "${BROKERS[@]}"; do
    # Each broker keeps its two directories (and their ids) across restarts.
    dirs[$id]="--dir /data/b$id/d1=$("$KJBOD" meta random-uuid --directory-id) --dir /data/b$id/d2=$("$KJBOD" meta random-uuid --directory-id)"
    # shellcheck disable=SC2086  # the directory flags are meant to split
    run broker register --id "$id" --rack "r$id" ${dirs[$id]} "${SUPPORTS_4_2[@]}"
    run broker heartbeat --id "$id"
done
run features describe

step "What 4.3 finalizes, and why it is refused now"
run features version-mapping --release-version 4.3
refused features upgrade --release-version 4.3 --dry-run

step "Roll the binaries: one broker at a time"
for id in "${BROKERS[@]}"; do
    run broker shutdown --id "$id"
    # ... the operator installs the 4.3 binaries and restarts the broker, which registers
    # again (new incarnation, new epoch) with the ranges the new binaries support ...
    # shellcheck disable=SC2086
    run broker register --id "$id" --rack "r$id" ${dirs[$id]} "${SUPPORTS_4_3[@]}"
    run broker heartbeat --id "$id"
    if [ "$id" != "${BROKERS[-1]}" ]; then
        # Still refused: the error names the next broker on old binaries.
        refused features upgrade --release-version 4.3 --dry-run
    fi
done
run broker list

step "Finalize 4.3"
run features upgrade --release-version 4.3 --dry-run
run features upgrade --release-version 4.3
run features describe

step "There is no way back: the downgrade is refused, safe or unsafe"
refused features downgrade --release-version 4.2
refused features downgrade --metadata 4.2 --unsafe
run features describe
