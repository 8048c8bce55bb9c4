"""The runbooks in examples/ run end to end (each in its own temporary folder)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
# The demo exercises Spark and is measured on its own (bench/ and the README).
RUNBOOKS = sorted(p for p in EXAMPLES.glob("*.sh") if p.name != "demo.sh")


@pytest.mark.parametrize("script", RUNBOOKS, ids=lambda p: p.name)
def test_runbook(script: Path) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
