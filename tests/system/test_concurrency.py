"""Several processes writing through the CLI at once are serialized by the lock."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kjbod.state.cluster_state import read_image
from kjbod.state.inspect import iter_records

WRITERS = 4
WRITES_EACH = 8


def writer(state: Path) -> list[int]:
    codes = []
    for _ in range(WRITES_EACH):
        result = subprocess.run(
            [sys.executable, "-m", "kjbod", "--state", str(state), "clock", "advance", "1s"], capture_output=True, text=True
        )
        codes.append(result.returncode)
    return codes


def test_concurrent_cli_writers_lose_no_update(state_dir: Path) -> None:
    with ThreadPoolExecutor(WRITERS) as pool:
        codes = [code for codes in pool.map(writer, [state_dir] * WRITERS) for code in codes]
    assert codes == [0] * (WRITERS * WRITES_EACH)
    records = [record.time_ms for _, record in iter_records(state_dir)]
    # Every write read the clock that the previous one committed: no lost update.
    assert records == [1000 * (i + 1) for i in range(WRITERS * WRITES_EACH)]
    assert read_image(state_dir).time_ms == 1000 * WRITERS * WRITES_EACH
