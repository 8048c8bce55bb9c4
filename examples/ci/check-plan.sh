#!/usr/bin/env bash
# CI gate for reassignment plans: run `kjbod reassign check` on every plan file given and fail
# the build (exit 1) when any plan violates the policy. One JUnit report per plan goes to
# $REPORT_DIR so the CI system shows every check as a test case; a failing plan's full text
# report is printed into the build log.
#
# Usage: examples/ci/check-plan.sh PLAN.json [PLAN.json ...]
# Environment:
#   KJBOD_STATE   the cluster state to check against (e.g. made by `kjbod import cluster`)
#   POLICY        the team's policy file (default: kjbod's built-in policy)
#   THROTTLE      the --throttle (bytes/s) execute will get
#   LOG_DIRS_THROTTLE  the --replica-alter-log-dirs-throttle (bytes/s) execute will get
#   REPORT_DIR    where the JUnit reports go (default: reassign-check-reports)
#   KJBOD         the kjbod command (default: kjbod)
# Exit status: 0 every plan passed; 1 a plan failed its checks (or could not be read);
# 2 or 3 a usage or cluster-state problem (the first one met is returned at once).
set -uo pipefail

KJBOD="${KJBOD:-kjbod}"
REPORT_DIR="${REPORT_DIR:-reassign-check-reports}"
if [ "$#" -eq 0 ]; then
    echo "usage: $0 PLAN.json [PLAN.json ...]" >&2
    exit 2
fi
mkdir -p "$REPORT_DIR"

options=()
[ -n "${POLICY:-}" ] && options+=(--policy "$POLICY")
[ -n "${THROTTLE:-}" ] && options+=(--throttle "$THROTTLE")
[ -n "${LOG_DIRS_THROTTLE:-}" ] && options+=(--replica-alter-log-dirs-throttle "$LOG_DIRS_THROTTLE")

failed=0
for plan in "$@"; do
    name="$(basename "$plan" .json)"
    echo "== $plan"
    "$KJBOD" reassign check --reassignment-json-file "$plan" ${options[@]+"${options[@]}"} \
        --report junit --report-file "$REPORT_DIR/$name.xml"
    status=$?
    case "$status" in
        0) ;;
        1)
            failed=1
            # The readable report, for the build log (the JUnit file is for the CI's test view).
            "$KJBOD" reassign check --reassignment-json-file "$plan" ${options[@]+"${options[@]}"} --report text || true
            ;;
        *) exit "$status" ;;
    esac
done
if [ "$failed" -ne 0 ]; then
    echo "At least one reassignment plan failed its checks; see the reports in $REPORT_DIR." >&2
fi
exit "$failed"
