"""Kafka's Uuid and DirectoryId semantics (storage reference §3, controller reference §1.2-1.3)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kjbod.common.kafka_uuid import DirectoryId, Uuid, canonical, is_canonical, sorted_uuids, uuid_sort_key

SIGNED64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)


def test_reserved_directory_ids_follow_kafkas_source_not_the_kip() -> None:
    assert (Uuid.from_string(DirectoryId.MIGRATING).msb, Uuid.from_string(DirectoryId.MIGRATING).lsb) == (0, 0)
    assert Uuid.from_string(DirectoryId.UNASSIGNED).lsb == 1
    assert Uuid.from_string(DirectoryId.LOST).lsb == 2


@pytest.mark.parametrize(
    ("text", "reserved"),
    [
        ("AAAAAAAAAAAAAAAAAAAAYw", True),  # (0, 99)
        ("AAAAAAAAAAAAAAAAAAAAZA", False),  # (0, 100)
        (str(Uuid(0, -5)), True),  # every (0, negative) value is reserved too
        (str(Uuid(1, 0)), False),
    ],
)
def test_reserved_range_uses_a_signed_comparison(text: str, reserved: bool) -> None:
    assert DirectoryId.reserved(text) is reserved


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a", "Input byte[] should at least have 2 bytes for base64 bytes"),
        ("+AAAAAAAAAAAAAAAAAAAAA", "Illegal base64 character 2b"),
        ("A" * 25, "Input string with prefix `AAAAAAAAAAAAAAAAAAAAAAAA` is too long to be decoded as a base64 UUID"),
        ("AAAAA", "Last unit does not have enough valid bits"),
        ("AAAAAAAAAAAAAAAAAAAAAA=", "Input byte array has wrong 4-byte ending unit"),
        ("AAAA", "Input string `AAAA` decoded as 3 bytes, which is not equal to the expected 16 bytes of a base64-encoded UUID"),
    ],
)
def test_parse_errors_carry_javas_messages(text: str, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        Uuid.from_string(text)
    assert str(raised.value) == message


def test_non_canonical_text_parses_to_the_same_value() -> None:
    # The decoder does not check the trailing unused bits, as Java's does not.
    assert Uuid.from_string("AAAAAAAAAAAAAAAAAAAAAB") == Uuid(0, 0)
    assert canonical("AAAAAAAAAAAAAAAAAAAAAB") == DirectoryId.MIGRATING
    assert not is_canonical("AAAAAAAAAAAAAAAAAAAAAB")


def test_ordering_is_signed_so_a_top_bit_sorts_first() -> None:
    # "3..." and "z..." have their top bit set: negative msb, so they sort before "A...".
    ids = ["AAAAAAAAAAAAAAAAAAAABA", "3AAAAAAAAAAAAAAAAAAAAA", "zzzzzzzzzzzzzzzzzzzzzw"]
    assert sorted(ids, key=uuid_sort_key) == ["zzzzzzzzzzzzzzzzzzzzzw", "3AAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAABA"]


@given(st.lists(st.tuples(SIGNED64, SIGNED64).map(lambda halves: str(Uuid(*halves))), max_size=14), st.booleans())
def test_sorted_uuids_is_the_signed_order(texts: list[str], non_canonical: bool) -> None:
    # Canonical lists are decoded in one call; one non-canonical text sends the list the slow way.
    if non_canonical:
        texts = [*texts, "AAAAAAAAAAAAAAAAAAAAAB"]
    assert sorted_uuids(texts) == sorted(texts, key=uuid_sort_key)
    assert sorted_uuids(texts[:1]) == texts[:1]


def test_is_online_rules() -> None:
    online = ("AAAAAAAAAAAAAAAAAAAAZA",)
    assert DirectoryId.is_online(DirectoryId.UNASSIGNED, online)
    assert DirectoryId.is_online(DirectoryId.MIGRATING, online)
    assert not DirectoryId.is_online(DirectoryId.LOST, online)
    assert not DirectoryId.is_online("AAAAAAAAAAAAAAAAAAAAZQ", online)  # a real id the broker lacks
    assert DirectoryId.is_online("AAAAAAAAAAAAAAAAAAAAZQ", ())  # a broker from before 3.7-IV2


@given(SIGNED64, SIGNED64)
def test_text_form_round_trips_and_is_canonical(msb: int, lsb: int) -> None:
    uuid = Uuid(msb, lsb)
    text = str(uuid)
    assert len(text) == 22 and is_canonical(text)
    assert Uuid.from_string(text) == uuid
    assert uuid_sort_key(text) == (msb, lsb)


def test_random_ids_are_version_4_and_never_reserved_or_dash_first() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        uuid = Uuid.random(rng)
        text = str(uuid)
        assert not text.startswith("-")
        assert (uuid.msb >> 12) & 0xF == 4
        assert not DirectoryId.reserved(DirectoryId.random(rng))
