#!/usr/bin/env bash
# Runbook: replace a failed disk of a JBOD broker (operator story 3).
#
# The broker keeps its cluster id and node id; the new, empty disk gets a new directory.id
# (KIP-858). Run on the broker host, with the broker stopped, after the new disk is mounted at
# the failed directory's path. Here everything happens in a temporary folder.
set -euo pipefail
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
config="$work/server.properties"
cat >"$config" <<EOF
process.roles=broker
node.id=4
controller.quorum.voters=3000@controller-1:9093
controller.listener.names=CONTROLLER
log.dirs=$work/disk1/kafka,$work/disk2/kafka,$work/disk3/kafka
EOF

echo "== the broker as it was: three formatted directories"
cluster_id="$(kjbod meta random-uuid)"
kjbod format --config "$config" --cluster-id "$cluster_id"
kjbod meta ensure-ids --config "$config"

echo "== disk2 failed and was replaced by an empty disk"
rm -rf "$work/disk2"
mkdir -p "$work/disk2"
kjbod meta info --config "$config" || echo "(meta info exits 1 while a directory is not formatted)"

echo "== 1. read the broker's cluster id from a surviving directory"
cluster_id="$(kjbod -o json meta show "$work/disk1/kafka" | python3 -c 'import json, sys; print(json.load(sys.stdin)["directories"][0]["clusterId"])')"
echo "cluster id: $cluster_id"

echo "== 2. format only the new directory (the others are left exactly as they are)"
kjbod format --config "$config" --cluster-id "$cluster_id" --ignore-formatted --dry-run
kjbod format --config "$config" --cluster-id "$cluster_id" --ignore-formatted

echo "== 3. what the broker checks at start-up: unique directory ids, every directory has one"
kjbod meta ensure-ids --config "$config"
kjbod meta info --config "$config"
echo "== the new directory id of disk2"
kjbod -o json meta show "$work/disk2/kafka" | python3 -c 'import json, sys; print(json.load(sys.stdin)["directories"][0]["directoryId"])'
