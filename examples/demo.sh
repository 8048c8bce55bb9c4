#!/usr/bin/env bash
# kjbod end to end, on the embedded defaults, in a temporary folder that is removed on exit.
#
# Three JBOD brokers are formatted and registered in racks; topics get sizes; a disk fails and
# is replaced; a fourth broker joins; the Spark planner rebalances the cluster; the plan is
# checked, executed under a throttle, and the simulated clock runs until the copies are done.
# Needs `kjbod` on PATH and a Java runtime for Spark (local mode). KJBOD_DEMO_KEEP=1 keeps the
# folder (and its cluster state) for a look around afterwards.
set -euo pipefail
work="$(mktemp -d)"
if [ -n "${KJBOD_DEMO_KEEP:-}" ]; then
  trap 'echo "Kept the demo folder: $work"' EXIT  # to look around afterwards
else
  trap 'rm -rf "$work"' EXIT
fi
cd "$work"
export KJBOD_STATE="$work/state"

# server.properties of broker N in RACK with DIRS log directories and the given process.roles.
broker_config() {
  local id=$1 rack=$2 dirs=$3 roles=$4 paths
  paths="$(seq -s, -f "$work/broker$id/disk%g" 1 "$dirs")"
  cat >"broker$id.properties" <<EOF
process.roles=$roles
node.id=$id
broker.rack=$rack
controller.quorum.voters=1@localhost:9093
controller.listener.names=CONTROLLER
listeners=PLAINTEXT://:9092,CONTROLLER://:9093
log.dirs=$paths
EOF
}

# --capacity PATH=SIZE for each of broker N's log directories: the disks' sizes, which
# registration does not learn from server.properties (the planner and the usage figures need them).
capacities() {
  local id=$1 size=$2 dir
  for dir in "$work/broker$id"/disk*; do
    printf -- '--capacity %s=%s ' "$dir" "$size"
  done
}

# What each log directory holds: a table per broker (BYTES used of CAPACITY).
directory_usage() {
  for id in "$@"; do
    kjbod broker describe --id "$id" | grep -v '^Supported features'
  done
}

echo "== 1. Format three brokers' JBOD directories (broker 1 is also the controller: it bootstraps the cluster state)"
cluster_id="$(kjbod meta random-uuid)"
broker_config 1 rack-a 3 broker,controller
broker_config 2 rack-b 2 broker
broker_config 3 rack-c 3 broker
for id in 1 2 3; do
  kjbod format --config "broker$id.properties" --cluster-id "$cluster_id"
done
kjbod meta info --config broker3.properties

echo "== 2. Register the brokers in their racks; a heartbeat unfences each"
for id in 1 2 3; do
  # shellcheck disable=SC2046  # one word per option
  kjbod broker register --config "broker$id.properties" $(capacities "$id" 60GB)
  kjbod broker heartbeat --id "$id"
done
kjbod broker list

echo "== 3. Create topics with sizes; each broker places its new replicas in a log directory"
kjbod topic create orders --partitions 12 --replication-factor 2 --seed 1
kjbod topic create clicks --partitions 6 --replication-factor 3 --seed 2
kjbod topic set-size orders --bytes 2000000000
kjbod topic set-size clicks --bytes 5000000000
for id in 1 2 3; do
  kjbod assign-dirs --broker "$id" --auto | tail -n 1
done

echo "== 4. A disk of broker 3 fails: its replicas leave the ISR, leadership moves"
kjbod broker fail-dir --id 3 --dir "$work/broker3/disk2"
echo "-- the partitions with a replica offline (topic describe):"
kjbod topic describe | grep -v 'Offline: $' | grep 'Partition:'
echo "-- broker 3's directories:"
directory_usage 3

echo "== 5. Replace the disk: format the new empty directory, check the ids, restart broker 3"
rm -rf "$work/broker3/disk2"
mkdir "$work/broker3/disk2"
kjbod format --config broker3.properties --cluster-id "$cluster_id" --ignore-formatted
kjbod meta ensure-ids --config broker3.properties
kjbod broker shutdown --id 3 | sed -n 1p
# shellcheck disable=SC2046
kjbod broker register --config broker3.properties $(capacities 3 60GB)
kjbod broker heartbeat --id 3
kjbod assign-dirs --broker 3 --auto | tail -n 1
kjbod broker heartbeat --id 3 | sed -n 1p
echo "-- the new disk refills by replication as the simulated clock runs:"
kjbod clock advance --until-idle

echo "== 6. A fourth broker joins rack-b next to broker 2: it is empty, so the cluster is out of balance"
broker_config 4 rack-b 2 broker
kjbod format --config broker4.properties --cluster-id "$cluster_id"
# shellcheck disable=SC2046
kjbod broker register --config broker4.properties $(capacities 4 60GB)
kjbod broker heartbeat --id 4
kjbod broker list
echo "-- directory usage before the rebalance:"
directory_usage 1 2 3 4

echo "== 7. Plan a rebalance with the Spark planner (Spark in local mode; it takes a few seconds to start)"
# --explain: why each replica moves (the goal it serves, why its broker and directory), one JSON
# line per moved replica; the report sums them up.
kjbod reassign plan --goal balance --engine spark --output-file plan.json --explain why.jsonl

echo "== 8. Check the plan against the cluster state and the default policy"
kjbod reassign check --reassignment-json-file plan.json --throttle 50000000

echo "== 9. Execute it under a 50 MB/s throttle"
kjbod reassign execute --reassignment-json-file plan.json --throttle 50000000
kjbod clock show

echo "== 10. Advance the simulated clock until the copies are done, then verify (clears the throttles)"
kjbod clock advance --until-idle
kjbod reassign verify --reassignment-json-file plan.json
echo "-- leadership back to the preferred replicas, as the plan's report suggests:"
kjbod elect --election-type PREFERRED --all-topic-partitions

echo "== 11. After: replicas, leaders and directory usage"
kjbod broker list
directory_usage 1 2 3 4
kjbod metadata verify | tail -n 1
echo "== Done: the whole story is in the record log (kjbod metadata dump)."
