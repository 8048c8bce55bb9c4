"""Kafka's Uuid and the KIP-858 directory ids, exactly as Kafka defines them.

A Uuid is two signed 64-bit halves; its text form is the URL-safe base64 of the 16 big-endian
bytes without padding (22 characters). Ordering is *signed* (msb, then lsb), which decides how
broker directories sort (an id whose first character is in the upper half of the alphabet has
its top bit set and sorts first). Parsing follows Java's URL-safe decoder, error texts included.

Records keep uuids in their canonical text form (see `is_canonical`), which is cheap to store,
compare for equality and hash; `Uuid` gives the numeric semantics where they matter.
"""

from __future__ import annotations

import base64
import os
import random as _random
import re
from collections.abc import Iterable
from functools import cache, total_ordering

_MASK64 = (1 << 64) - 1
# The 22nd character of a 16-byte URL-safe base64 text carries 2 data bits and 4 zero bits,
# so only these four characters can end the canonical form.
_CANONICAL = re.compile(r"[A-Za-z0-9_-]{21}[AQgw]")
_URL_SAFE_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_DECODE = {ord(c): i for i, c in enumerate(_URL_SAFE_ALPHABET)}
_PAD = ord("=")


def _signed64(value: int) -> int:
    value &= _MASK64
    return value - (1 << 64) if value >= 1 << 63 else value


def _java_url_b64decode(text: str) -> bytes:
    """Java's `Base64.getUrlDecoder().decode(String)`, including its exception messages."""
    # Java encodes the String as ISO-8859-1 first; characters outside it become '?'.
    src = bytes(ord(c) if ord(c) < 256 else 0x3F for c in text)
    if len(src) == 1:
        raise ValueError("Input byte[] should at least have 2 bytes for base64 bytes")
    out = bytearray()
    bits, shift, pos = 0, 18, 0
    while pos < len(src):
        byte = src[pos]
        pos += 1
        value = _DECODE.get(byte)
        if value is None:
            if byte == _PAD:
                # "=" with nothing dangling is wrong; so is "xx=" without a second "=".
                if shift == 18:
                    raise ValueError("Input byte array has wrong 4-byte ending unit")
                if shift == 6:
                    if pos == len(src) or src[pos] != _PAD:
                        raise ValueError("Input byte array has wrong 4-byte ending unit")
                    pos += 1
                break
            signed = byte - 256 if byte > 127 else byte
            raise ValueError(f"Illegal base64 character {format(signed, 'x')}")
        bits |= value << shift
        shift -= 6
        if shift < 0:
            out += bytes(((bits >> 16) & 0xFF, (bits >> 8) & 0xFF, bits & 0xFF))
            bits, shift = 0, 18
    if shift == 6:
        out.append((bits >> 16) & 0xFF)
    elif shift == 0:
        out += bytes(((bits >> 16) & 0xFF, (bits >> 8) & 0xFF))
    elif shift == 12:
        raise ValueError("Last unit does not have enough valid bits")
    if pos < len(src):
        raise ValueError(f"Input byte array has incorrect ending byte at {pos}")
    return bytes(out)


@total_ordering
class Uuid:
    """Kafka's `org.apache.kafka.common.Uuid`: two signed 64-bit halves."""

    __slots__ = ("msb", "lsb")

    def __init__(self, msb: int, lsb: int) -> None:
        self.msb = _signed64(msb)
        self.lsb = _signed64(lsb)

    @classmethod
    def from_string(cls, text: str) -> Uuid:
        """Parse the 22-character form; raises ValueError with Kafka's message."""
        if len(text) > 24:
            raise ValueError(
                f"Input string with prefix `{text[:24]}` is too long to be decoded as a base64 UUID"
            )
        raw = _java_url_b64decode(text)
        if len(raw) != 16:
            raise ValueError(
                f"Input string `{text}` decoded as {len(raw)} bytes, which is not equal to the "
                "expected 16 bytes of a base64-encoded UUID"
            )
        return cls(int.from_bytes(raw[:8], "big"), int.from_bytes(raw[8:], "big"))

    @classmethod
    def random(cls, rng: _random.Random | None = None) -> Uuid:
        """`Uuid.randomUuid()`: a version-4 UUID that is not ZERO/ONE and does not print with '-' first."""
        while True:
            raw = bytearray(rng.randbytes(16) if rng else os.urandom(16))
            raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
            raw[8] = (raw[8] & 0x3F) | 0x80  # IETF variant
            candidate = cls(int.from_bytes(raw[:8], "big"), int.from_bytes(raw[8:], "big"))
            if candidate not in _RESERVED_UUIDS and not str(candidate).startswith("-"):
                return candidate

    def __str__(self) -> str:
        raw = (self.msb & _MASK64).to_bytes(8, "big") + (self.lsb & _MASK64).to_bytes(8, "big")
        return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")

    def __repr__(self) -> str:
        return f"Uuid({self})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Uuid) and self.msb == other.msb and self.lsb == other.lsb

    def __lt__(self, other: Uuid) -> bool:
        return (self.msb, self.lsb) < (other.msb, other.lsb)

    def __hash__(self) -> int:
        return hash((self.msb, self.lsb))


ZERO_UUID = Uuid(0, 0)
ONE_UUID = Uuid(0, 1)
_RESERVED_UUIDS = (ZERO_UUID, ONE_UUID)


def is_canonical(text: str) -> bool:
    """True if `text` is the exact form Kafka prints for some Uuid."""
    return _CANONICAL.fullmatch(text) is not None


def canonical(text: str) -> str:
    """Parse user input as Kafka does and return the canonical text (raises ValueError)."""
    return str(Uuid.from_string(text))


def uuid_sort_key(text: str) -> tuple[int, int]:
    """Kafka's signed (msb, lsb) order for a canonical uuid text."""
    if _CANONICAL.fullmatch(text):
        # The canonical form decodes as standard URL-safe base64 (Java's decoder accepts it and
        # gives the same bytes); a broker's dozen directory ids sort on every load.
        raw = base64.urlsafe_b64decode(text + "==")
        return (int.from_bytes(raw[:8], "big", signed=True), int.from_bytes(raw[8:], "big", signed=True))
    uuid = Uuid.from_string(text)
    return (uuid.msb, uuid.lsb)


# Canonical texts, each followed by a space (which no text holds, so each is matched whole).
_CANONICAL_LIST = re.compile(r"(?:[A-Za-z0-9_-]{21}[AQgw] )*")


def sorted_uuids(texts: Iterable[str]) -> list[str]:
    """The texts in Kafka's signed (msb, lsb) order, as `sorted(texts, key=uuid_sort_key)`; a
    list of canonical texts is checked and decoded in one call each (a state opens by sorting
    every broker's dozen directory ids: 31,200 of them on 2,600 brokers)."""
    texts = list(texts)
    if len(texts) < 2 or not _CANONICAL_LIST.fullmatch(" ".join(texts) + " "):
        return sorted(texts, key=uuid_sort_key)
    # Each canonical text ends in 4 zero bits, so with "AA" after it, it is 24 characters that
    # decode to its 16 bytes and 2 zero bytes: the whole list decodes at once. Flipping the top
    # bit of each half makes the bytes sort in the signed order.
    raw = base64.urlsafe_b64decode("AA".join(texts) + "AA")
    flipped = (int.from_bytes(raw, "big") ^ _sign_bits(len(texts))).to_bytes(len(raw), "big")
    keys = [flipped[start : start + 16] for start in range(0, len(raw), 18)]
    return [text for _, text in sorted(zip(keys, texts))]


@cache
def _sign_bits(count: int) -> int:
    """The top bit of bytes 0 and 8 of each of `count` 18-byte pieces, as one big-endian number."""
    piece = (0x80 << (17 * 8)) | (0x80 << (9 * 8))
    return sum(piece << (144 * i) for i in range(count))


def uuid_hash(text: str) -> int:
    """`Uuid.hashCode`: the two halves xor-ed, folded to an int (Uuid.java:120-123)."""
    uuid = Uuid.from_string(text)
    xor = (uuid.msb ^ uuid.lsb) & 0xFFFFFFFFFFFFFFFF
    folded = ((xor >> 32) ^ xor) & 0xFFFFFFFF
    return folded - (1 << 32) if folded >= 1 << 31 else folded


class DirectoryId:
    """KIP-858 directory ids: three reserved values and the reserved range (DirectoryId.java).

    Kafka's source wins over the KIP here: MIGRATING is (0,0), UNASSIGNED (0,1), LOST (0,2).
    """

    MIGRATING = "AAAAAAAAAAAAAAAAAAAAAA"
    UNASSIGNED = "AAAAAAAAAAAAAAAAAAAAAQ"
    LOST = "AAAAAAAAAAAAAAAAAAAAAg"

    @staticmethod
    def reserved(directory_id: str) -> bool:
        """msb == 0 and lsb < 100, compared signed: every (0, negative) value is reserved too."""
        return DirectoryId.reserved_uuid(Uuid.from_string(directory_id))

    @staticmethod
    def reserved_uuid(uuid: Uuid) -> bool:
        """`reserved` of a Uuid already parsed (or made)."""
        return uuid.msb == 0 and uuid.lsb < 100

    @staticmethod
    def random(rng: _random.Random | None = None) -> str:
        """A fresh directory id that is never reserved."""
        while True:
            candidate = Uuid.random(rng)
            if not DirectoryId.reserved_uuid(candidate):
                return str(candidate)

    @staticmethod
    def is_online(directory_id: str, online_dirs: frozenset[str] | set[str] | tuple[str, ...]) -> bool:
        """`DirectoryId.isOnline`: UNASSIGNED/MIGRATING are online, LOST is not, and a broker
        with no directory list (registered before 3.7-IV2) has every directory online."""
        if directory_id == DirectoryId.UNASSIGNED or directory_id == DirectoryId.MIGRATING:
            return True
        if directory_id == DirectoryId.LOST:
            return False
        if not online_dirs:
            return True
        return directory_id in online_dirs

    @staticmethod
    def describe(directory_id: str) -> str | None:
        """The reserved name of a directory id, or None for a real directory."""
        return _RESERVED_NAMES.get(directory_id)


_RESERVED_NAMES = {
    DirectoryId.MIGRATING: "MIGRATING",
    DirectoryId.UNASSIGNED: "UNASSIGNED",
    DirectoryId.LOST: "LOST",
}
