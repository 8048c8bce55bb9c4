#!/usr/bin/env bash
# kjbod end-to-end demo on the embedded defaults, in a temporary folder.
set -euo pipefail
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export KJBOD_STATE="$work/state"
python3 - "$KJBOD_STATE" <<'PY'
import sys
from kjbod.state import ClusterState
ClusterState.open(sys.argv[1], write=True, create=True).close()
PY
echo "== simulated clock"
kjbod clock advance 25m
kjbod clock show
echo "== the record log"
kjbod metadata dump
kjbod metadata snapshot
kjbod metadata verify
