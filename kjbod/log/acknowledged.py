"""The acknowledged end: a durable record of where the last acknowledged commit ends.

A write torn by a crash can only lie beyond what was acknowledged. Without a record of that
point, damage to the length field of the log's last batch looks exactly like a torn write (a
batch that runs past the end of the file), and recovery would cut an acknowledged commit. So
every commit, once its batches are fsynced and before it is acknowledged, records its end
offset here; reading the log treats any damage before that offset as corruption, never as a
tail to cut. Kafka keeps a recovery point per log for the same reason
(`recovery-point-offset-checkpoint`); its producers are acknowledged before any fsync, so it
writes the point now and then, while kjbod acknowledges a commit only after its fsync and so
records the point with every commit.

The file holds two slots, one per 512-byte sector, each:

    magic        4 bytes  b"KJAE"
    version      u8       1
    sequence     u64      one more with every update; the slot written is `sequence % 2`
    next_offset  u64      the offset after the last acknowledged commit
    crc          u32      CRC32C of the bytes before it

An update overwrites the older slot in place and fdatasyncs the file (one small write and one
flush per commit, no rename). A crash inside that write can damage only the slot being written,
whose commit was not yet acknowledged; the other slot still holds the previous end. A file is
created whole (written beside its place and renamed). State directories written before this file
existed have none: their log is read as before, and the first commit writes one.
"""

from __future__ import annotations

import errno
import os
import struct
from dataclasses import dataclass
from pathlib import Path

import crc32c

from kjbod.common.durable import atomic_write
from kjbod.errors import CorruptStateError

ACKNOWLEDGED_FILE = "acknowledged-end.checkpoint"
_MAGIC = b"KJAE"
_VERSION = 1
_SLOT = struct.Struct(">4sBQQ")
_SLOT_SIZE = _SLOT.size + 4
_SECTOR = 512


def _encode_slot(sequence: int, next_offset: int) -> bytes:
    body = _SLOT.pack(_MAGIC, _VERSION, sequence, next_offset)
    return body + struct.pack(">I", crc32c.crc32c(body))


def _decode_slot(data: bytes) -> tuple[int, int] | None:
    """(sequence, next_offset) of a valid slot, None for a damaged or never-written one."""
    if len(data) < _SLOT_SIZE:
        return None
    body = data[: _SLOT.size]
    (crc,) = struct.unpack_from(">I", data, _SLOT.size)
    if crc32c.crc32c(body) != crc:
        return None
    magic, version, sequence, next_offset = _SLOT.unpack(body)
    if magic != _MAGIC or version != _VERSION:
        return None
    return sequence, next_offset


def _new_file(next_offset: int) -> bytes:
    """A whole file: both slots hold `next_offset` (sequence 0), one per sector."""
    return _encode_slot(0, next_offset).ljust(_SECTOR, b"\0") * 2


@dataclass
class AcknowledgedEnd:
    """The acknowledged end of the record log in `directory`, as last read or written."""

    directory: Path
    sequence: int = -1  # -1: the file does not exist (yet)
    next_offset: int = 0

    @property
    def path(self) -> Path:
        return self.directory / ACKNOWLEDGED_FILE

    @property
    def recorded(self) -> bool:
        return self.sequence >= 0

    @classmethod
    def read(cls, directory: Path) -> AcknowledgedEnd:
        found = cls(directory)
        try:
            data = found.path.read_bytes()
        except FileNotFoundError:
            return found  # a state written before this file existed
        slots = [slot for slot in (_decode_slot(data[:_SECTOR]), _decode_slot(data[_SECTOR:])) if slot is not None]
        if not slots:
            raise CorruptStateError(
                f"the acknowledged-end checkpoint {found.path} is damaged (neither of its two copies is valid); "
                "kjbod cannot tell a torn write from a damaged commit without it, so restore the state "
                "directory from a backup"
            )
        found.sequence, found.next_offset = max(slots)
        return found

    def record(self, next_offset: int) -> None:
        """Durably record that every commit before `next_offset` is acknowledged.

        Raises RecordFailed, which says whether the file still holds the previous end.
        """
        if not self.recorded:
            try:
                atomic_write(self.path, _new_file(next_offset))
            except OSError as exc:
                # atomic_write leaves no file unless only the directory's fsync failed.
                raise RecordFailed(exc, self.path, restored=not self.path.exists()) from exc
            self.sequence, self.next_offset = 0, next_offset
            return
        sequence = self.sequence + 1
        position = (sequence % 2) * _SECTOR
        fd = os.open(self.path, os.O_RDWR)
        try:
            previous = os.pread(fd, _SLOT_SIZE, position)
            try:
                _pwrite_all(fd, _encode_slot(sequence, next_offset), position)
                os.fdatasync(fd)
            except OSError as exc:
                # Put the slot back as it was, so the file never claims a commit that the
                # caller is about to take back.
                try:
                    _pwrite_all(fd, previous, position)
                    os.fdatasync(fd)
                except OSError:
                    raise RecordFailed(exc, self.path, restored=False) from exc
                raise RecordFailed(exc, self.path, restored=True) from exc
        finally:
            os.close(fd)
        self.sequence, self.next_offset = sequence, next_offset


class RecordFailed(OSError):
    """Recording the acknowledged end failed; `restored` says whether the file still holds the
    previous end (so the commit may be taken back)."""

    def __init__(self, cause: OSError, path: Path, *, restored: bool) -> None:
        super().__init__(cause.errno or errno.EIO, cause.strerror or str(cause), str(path))
        self.restored = restored


def _pwrite_all(fd: int, data: bytes, position: int) -> None:
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, position)
        view, position = view[written:], position + written
