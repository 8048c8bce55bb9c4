#!/usr/bin/env bash
# Runbook: plan, check and run a reassignment's waves on a live Kafka cluster.
#
# kjbod plans the broker and the log directory of every replica it moves, checks the plan against
# the imported cluster, and splits it into waves; `kjbod reassign run` then carries the waves out
# with Kafka's own kafka-reassign-partitions, one after another, as an operator would by hand:
# --list, --execute under the throttles, --verify until complete (which clears them), next wave.
# A journal beside the plan lets an interrupted run resume where it was: run step 5 again.
#   1. the cluster as kjbod imported it (KJBOD_STATE: `kjbod import cluster`, see
#      examples/import-from-controller.sh);
#   2. plan (the goal and its options are this script's arguments), in waves;
#   3. check the plan, and its waves one after another, at the throttle the run will use;
#   4. the commands the run will give Kafka's tool (--dry-run);
#   5. run the waves;
#   6. Kafka's own view afterwards: nothing reassigning, no throttle left.
#
# Usage: examples/kafka/plan-check-run.sh GOAL-OPTIONS...   e.g. --goal add-brokers --broker-list 4
# Environment:
#   KJBOD_STATE       the imported cluster state (required)
#   BOOTSTRAP_SERVER  the cluster's brokers (required)
#   KAFKA_HOME        the Kafka installation whose bin/ holds kafka-reassign-partitions.sh
#                     (or KAFKA_BIN: that bin/ directory itself)
#   WORK              where the plan, its waves, rollbacks and journal go (default: a new folder)
#   THROTTLE          bytes/s for both throttles (default 50MB)
#   MOVES_PER_BROKER  --max-concurrent-moves-per-broker (default 2)
#   POLL_INTERVAL     seconds between --verify runs (default 10)
#   KJBOD             the kjbod command (default: kjbod)
set -euo pipefail

KJBOD="${KJBOD:-kjbod}"
: "${KJBOD_STATE:?set KJBOD_STATE to the imported cluster state}"
: "${BOOTSTRAP_SERVER:?set BOOTSTRAP_SERVER to the brokers of the cluster}"
KAFKA_BIN="${KAFKA_BIN:-${KAFKA_HOME:?set KAFKA_HOME (or KAFKA_BIN)}/bin}"
THROTTLE="${THROTTLE:-50MB}"
MOVES_PER_BROKER="${MOVES_PER_BROKER:-2}"
POLL_INTERVAL="${POLL_INTERVAL:-10}"
WORK="${WORK:-$(mktemp -d)}"
export KJBOD_STATE
if [ "$#" -eq 0 ]; then
    echo "usage: $0 --goal GOAL [goal options], e.g. --goal drain-dirs --dir 3:/data/02/kafka-logs" >&2
    exit 2
fi

step() { printf '\n== %s\n' "$*"; }
run() { printf '$ kjbod %s\n' "$*"; "$KJBOD" "$@"; }
kafka() { local tool="$1"; shift; printf '$ %s %s\n' "$tool" "$*"; "$KAFKA_BIN/$tool.sh" "$@"; }

plan="$WORK/plan.json"
throttles=(--throttle "$THROTTLE" --replica-alter-log-dirs-throttle "$THROTTLE")
connection=(--bootstrap-server "$BOOTSTRAP_SERVER" --kafka-bin "$KAFKA_BIN")

step "1. The cluster as imported"
run broker list

step "2. Plan: $*"
run reassign plan "$@" --max-concurrent-moves-per-broker "$MOVES_PER_BROKER" --output-file "$plan"

step "3. Check the plan, then its waves one after another"
run reassign check --reassignment-json-file "$plan" "${throttles[@]}"
run reassign check --reassignment-json-file "$WORK/plan.wave-*.json" "${throttles[@]}"

step "4. What the run will give Kafka's tool"
run reassign run --reassignment-json-file "$plan" "${connection[@]}" "${throttles[@]}" --poll-interval "$POLL_INTERVAL" --dry-run

step "5. Run the waves (interrupted? run this step again: it resumes from $WORK/plan.journal.json)"
run reassign run --reassignment-json-file "$plan" "${connection[@]}" "${throttles[@]}" --poll-interval "$POLL_INTERVAL"

step "6. Kafka's view: nothing reassigning, no throttle left"
kafka kafka-reassign-partitions --bootstrap-server "$BOOTSTRAP_SERVER" --list
left="$("$KAFKA_BIN/kafka-configs.sh" --bootstrap-server "$BOOTSTRAP_SERVER" --describe --entity-type brokers |
    grep -E 'throttled\.rate|alter\.log\.dirs\.io\.max' || true)"
if [ -n "$left" ]; then
    echo "Throttles left on brokers:" >&2
    echo "$left" >&2
    exit 1
fi
echo "No broker throttle left."
echo "The plan, its waves, the rollback of each wave and the journal are in $WORK."
