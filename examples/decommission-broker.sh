#!/usr/bin/env bash
# Runbook: decommission a broker (operator story 5), rehearsed on a kjbod cluster state.
#
# Kafka never moves data by itself: a broker is drained by a reassignment whose target replica
# lists leave it out, executed under a throttle and verified until complete (verify also
# removes the throttles). Only then is the broker stopped (controlled shutdown) and its
# registration removed. Stopping it first would just be a failure: every partition it held
# would lose a replica.
#   1. see what the broker holds;
#   2. plan the drain (only what is on the broker moves, to a directory of another broker) and
#      execute it with a throttle;
#   3. let time pass (kjbod's simulated clock) and verify until done;
#   4. check that the broker holds nothing, then shut it down and unregister it.
#
# Usage: examples/decommission-broker.sh   (runs in a temporary folder; KJBOD=... picks the binary)
set -euo pipefail

KJBOD="${KJBOD:-kjbod}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export KJBOD_STATE="$work/state"

step() { printf '\n== %s\n' "$*"; }
run() { printf '$ kjbod %s\n' "$*"; "$KJBOD" "$@"; }

step "A cluster: a controller, four JBOD brokers in three racks, two topics"
cat >"$work/controller.properties" <<EOF
process.roles=controller
node.id=3000
controller.quorum.voters=3000@localhost:9093
controller.listener.names=CONTROLLER
log.dirs=$work/controller/metadata
EOF
run format --config "$work/controller.properties" --cluster-id "$("$KJBOD" meta random-uuid)"
racks=(none r1 r2 r3 r1)
for id in 1 2 3 4; do
    run broker register --id "$id" --rack "${racks[$id]}" \
        --dir "/data/b$id/d1=$("$KJBOD" meta random-uuid --directory-id)" \
        --dir "/data/b$id/d2=$("$KJBOD" meta random-uuid --directory-id)"
    run broker heartbeat --id "$id"
done
run topic create orders --partitions 6 --replication-factor 3 --seed 11
run topic create payments --partitions 3 --replication-factor 3 --seed 12
for id in 1 2 3 4; do
    # Each broker places its replicas in a directory (what a JBOD broker does on its own).
    run assign-dirs --broker "$id" --auto
done
run topic set-size orders --bytes 21474836480      # 20 GiB per partition
run topic set-size payments --bytes 5368709120     # 5 GiB per partition

step "1. What broker 4 holds"
run broker describe --id 4

step "2. Plan the drain of broker 4 and execute it under a 100 MB/s throttle"
# remove-brokers moves only the replicas broker 4 holds (kafka-reassign-partitions --generate
# would reshuffle every partition of the topics), each to a broker and a log directory that keep
# the rack rule and the disks within their capacity.
run reassign plan --goal remove-brokers --brokers 4 --output-file "$work/drain.json"
run reassign check --reassignment-json-file "$work/drain.json" --throttle 100MB
# The first block execute prints is the assignment to keep for a rollback.
run reassign execute --reassignment-json-file "$work/drain.json" --throttle 100MB | tee "$work/execute.out"
run reassign list

step "3. Let the copies run; verify until the reassignment is done"
for round in $(seq 1 100); do
    run clock advance 10m
    out="$("$KJBOD" reassign verify --reassignment-json-file "$work/drain.json")"
    printf '$ kjbod reassign verify --reassignment-json-file %s\n%s\n' "$work/drain.json" "$out"
    # -o json says it in one field: no need to read the lines.
    done_="$("$KJBOD" -o json reassign verify --reassignment-json-file "$work/drain.json" | python3 -c 'import json, sys; print(json.load(sys.stdin)["done"])')"
    if [ "$done_" = True ]; then
        break
    fi
    if [ "$round" = 100 ]; then
        echo "runbook: the drain did not complete" >&2
        exit 1
    fi
done
# verify removed the throttles once nothing was in progress.
grep -q "Clearing broker-level throttles" <<<"$out"
run reassign list

step "4. Broker 4 holds nothing: stop it (controlled shutdown), then unregister it"
held="$("$KJBOD" -o json broker describe --id 4 | python3 -c 'import json, sys; d = json.load(sys.stdin); print(sum(x["replicas"] for x in d["directories"]))')"
if [ "$held" != 0 ]; then
    echo "runbook: broker 4 still holds $held replicas" >&2
    exit 1
fi
run broker shutdown --id 4
run broker unregister --id 4
run broker list
run topic describe
