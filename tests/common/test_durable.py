"""Durable writes of several files: all of them, or none."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from kjbod.common import durable
from kjbod.common.durable import atomic_write_all


def test_every_file_is_written_and_the_stale_ones_removed(tmp_path: Path) -> None:
    (tmp_path / "plan.json").write_bytes(b"old")
    stale = tmp_path / "plan.wave-003.json"
    stale.write_bytes(b"old wave")
    files = {tmp_path / "plan.json": b"new", tmp_path / "plan.wave-001.json": b"w1", tmp_path / "plan.wave-002.json": b"w2"}
    atomic_write_all(files, temp_suffix=".kjbod-tmp", remove=[stale])
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == {p.name: data for p, data in files.items()}


def test_a_failed_write_leaves_every_file_as_it_was_and_no_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "plan.json").write_bytes(b"old")
    stale = tmp_path / "plan.wave-002.json"
    stale.write_bytes(b"old wave")
    written = []

    def write_then_fail(fd: int, data: bytes) -> None:
        if written:
            raise OSError(28, "No space left on device")
        written.append(data)
        os.write(fd, data)

    monkeypatch.setattr(durable, "write_all", write_then_fail)
    with pytest.raises(OSError, match="No space left"):
        atomic_write_all({tmp_path / "plan.json": b"new", tmp_path / "plan.wave-001.json": b"w1"}, temp_suffix=".kjbod-tmp", remove=[stale])
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == {"plan.json": b"old", "plan.wave-002.json": b"old wave"}


def test_a_file_can_be_streamed_in_chunks_and_a_failing_stream_leaves_nothing(tmp_path: Path) -> None:
    atomic_write_all({tmp_path / "why.jsonl": (f"{i}\n".encode() for i in range(3)), tmp_path / "plan.json": b"p"})
    assert (tmp_path / "why.jsonl").read_bytes() == b"0\n1\n2\n"

    def failing() -> Iterator[bytes]:
        yield b"first\n"
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        atomic_write_all({tmp_path / "plan.json": b"new", tmp_path / "why.jsonl": failing()}, temp_suffix=".kjbod-tmp")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == {"plan.json": b"p", "why.jsonl": b"0\n1\n2\n"}
