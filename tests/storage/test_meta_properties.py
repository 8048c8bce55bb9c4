"""meta.properties: Kafka's parser messages and its exact file layout (storage reference §1.6, §2)."""

from __future__ import annotations

from datetime import UTC, datetime, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjbod.storage.meta_properties import (
    MetaProperties,
    MetaPropertiesError,
    read_meta_properties,
    render_meta_properties,
    write_meta_properties,
)
from kjbod.storage.properties import parse_properties

DATE = datetime(2024, 10, 25, 3, 33, 1, tzinfo=UTC)
CLUSTER = "XcZZOzUqS4yHOjhMQB6JLQ"
DIRECTORY = "ZNJ-ywU0nnQwRv5eRRU9ow"

# Files as Kafka wrote them (layouts from the reference: JDK 17 keeps ConcurrentHashMap order,
# JDK 18+ sorts; ZooKeeper-era brokers wrote v0 with broker.id).
KAFKA_V1_JAVA21 = (
    b"#\n#Fri Oct 25 03:33:01 UTC 2024\n"
    b"cluster.id=XcZZOzUqS4yHOjhMQB6JLQ\ndirectory.id=ZNJ-ywU0nnQwRv5eRRU9ow\nnode.id=1\nversion=1\n"
)
KAFKA_V1_JAVA17 = (
    b"#\n#Fri Oct 25 03:33:01 UTC 2024\n"
    b"node.id=1\ndirectory.id=ZNJ-ywU0nnQwRv5eRRU9ow\nversion=1\ncluster.id=XcZZOzUqS4yHOjhMQB6JLQ\n"
)
KAFKA_V1_WITHOUT_DIRECTORY_ID = b"#\n#Thu Jan 12 09:15:00 UTC 2023\nnode.id=1\nversion=1\ncluster.id=XcZZOzUqS4yHOjhMQB6JLQ\n"
KAFKA_V0_WITHOUT_DIRECTORY_ID = b"#\n#Tue Mar 14 10:00:00 UTC 2023\nversion=0\nbroker.id=1\ncluster.id=XcZZOzUqS4yHOjhMQB6JLQ\n"
KAFKA_V0_JAVA17 = (
    b"#\n#Fri Oct 25 03:33:01 UTC 2024\n"
    b"broker.id=1\ndirectory.id=ZNJ-ywU0nnQwRv5eRRU9ow\nversion=0\ncluster.id=XcZZOzUqS4yHOjhMQB6JLQ\n"
)


def parse(data: bytes) -> MetaProperties:
    return MetaProperties.from_properties(parse_properties(data, Path("meta.properties")))


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (KAFKA_V1_JAVA21, MetaProperties(1, CLUSTER, 1, DIRECTORY)),
        (KAFKA_V1_JAVA17, MetaProperties(1, CLUSTER, 1, DIRECTORY)),
        (KAFKA_V1_WITHOUT_DIRECTORY_ID, MetaProperties(1, CLUSTER, 1, None)),
        (KAFKA_V0_WITHOUT_DIRECTORY_ID, MetaProperties(0, CLUSTER, 1, None)),
        (KAFKA_V0_JAVA17, MetaProperties(0, CLUSTER, 1, DIRECTORY)),
    ],
)
def test_real_kafka_files_round_trip(data: bytes, expected: MetaProperties, tmp_path: Path) -> None:
    parsed = parse(data)
    assert parsed == expected
    write_meta_properties(tmp_path, parsed.to_properties(), DATE)
    assert read_meta_properties(tmp_path) == (parsed.to_properties(), parsed)


def test_a_new_v1_file_is_byte_identical_to_kafka_on_java_21() -> None:
    props = MetaProperties(1, CLUSTER, 1, DIRECTORY).to_properties()
    assert render_meta_properties(props, DATE) == KAFKA_V1_JAVA21


def test_a_v0_file_keeps_broker_id_in_sorted_order() -> None:
    props = MetaProperties(0, CLUSTER, 7, DIRECTORY).to_properties()
    assert render_meta_properties(props, DATE) == (
        b"#\n#Fri Oct 25 03:33:01 UTC 2024\n"
        b"broker.id=7\ncluster.id=XcZZOzUqS4yHOjhMQB6JLQ\ndirectory.id=ZNJ-ywU0nnQwRv5eRRU9ow\nversion=0\n"
    )


def test_the_date_line_is_javas_date_to_string_in_the_given_zone() -> None:
    from datetime import timedelta

    cet = timezone(timedelta(hours=1), "CET")
    rendered = render_meta_properties({"version": "1"}, datetime(2025, 1, 5, 7, 8, 9, tzinfo=cet))
    assert rendered.splitlines()[1] == b"#Sun Jan 05 07:08:09 CET 2025"


def test_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    write_meta_properties(tmp_path, {"version": "1", "cluster.id": CLUSTER, "node.id": "1"}, DATE)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["meta.properties"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("version=x\n", "Invalid meta.properties version string 'x'"),
        ("version=2\n", "Unknown meta.properties version number 2"),
        ("version=1\ncluster.id=c\n", "Failed to find node.id"),
        ("version=1\ncluster.id=c\nnode.id=1 \n", "Unable to read node.id as a base-10 number."),
        ("version=1\ncluster.id=c\nnode.id=99999999999\n", "Unable to read node.id as a base-10 number."),
        ("version=1\nnode.id=1\n", "cluster.id was not found."),
        ("version=0\nbroker.id=b\n", "Unable to read broker.id as a base-10 number."),
        (
            "version=1\ncluster.id=c\nnode.id=1\ndirectory.id=+AAAAAAAAAAAAAAAAAAAAA\n",
            "Unable to read directory.id as a Uuid: Illegal base64 character 2b",
        ),
        (
            "version=1\ncluster.id=c\nnode.id=1\ndirectory.id=abc\n",
            (
                "Unable to read directory.id as a Uuid: Input string `abc` decoded as 2 bytes, which is not equal "
                "to the expected 16 bytes of a base64-encoded UUID"
            ),
        ),
    ],
)
def test_parse_errors_use_kafkas_messages(text: str, message: str) -> None:
    with pytest.raises(MetaPropertiesError) as caught:
        parse(text.encode())
    assert caught.value.message == message


def test_parse_details() -> None:
    # The version is trimmed (Java trim) and may carry a sign; a missing version means v0.
    assert parse(b"version= +1 \ncluster.id=c\nnode.id=-3\n") == MetaProperties(1, "c", -3)
    assert parse(b"") == MetaProperties(0)
    assert parse(b"broker.id=4\n") == MetaProperties(0, None, 4)
    # Unknown keys are ignored; a non-canonical directory id is read as Kafka reads it.
    assert parse(b"version=1\ncluster.id=c\nnode.id=1\nfoo=bar\ndirectory.id=AAAAAAAAAAAAAAAAAAAAAB\n").directory_id == (
        "AAAAAAAAAAAAAAAAAAAAAA"
    )


def test_to_string_is_kafkas() -> None:
    assert str(MetaProperties(1, CLUSTER, 1, DIRECTORY)) == (
        f"MetaProperties(version=1, clusterId={CLUSTER}, nodeId=1, directoryId={DIRECTORY})"
    )
    assert str(MetaProperties(0)) == "MetaProperties(version=0)"


KEYS = st.sampled_from(["version", "cluster.id", "node.id", "broker.id", "directory.id", "other"])
VALUES = st.one_of(
    st.text(max_size=30),
    st.integers(-(2**40), 2**40).map(str),
    st.sampled_from(["0", "1", " 1 ", "+1", "AAAAAAAAAAAAAAAAAAAAAA", "ZNJ-ywU0nnQwRv5eRRU9ow", "ZNJ-ywU0nnQwRv5eRRU9ow=="]),
)


@given(st.dictionaries(KEYS, VALUES, max_size=6))
@settings(max_examples=500)
def test_any_properties_parse_or_fail_with_kafkas_error_type(props: dict[str, str]) -> None:
    try:
        meta = MetaProperties.from_properties(props)
    except MetaPropertiesError:
        return
    # Whatever parses, writes back to the same model.
    assert MetaProperties.from_properties(parse_properties(render_meta_properties(meta.to_properties(), DATE), Path("m"))) == meta
