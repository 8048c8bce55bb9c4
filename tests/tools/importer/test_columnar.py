"""`import cluster` from files read as columns (kjbod.tools.importer.columnar): for the usual
input it gives exactly the records, summary and image of the per-entry path; for any other
input it steps aside, so that the problems are the per-entry path's, word for word."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kjbod.common import json_chunks
from kjbod.common.problems import ValidationFailed
from kjbod.image import EMPTY_IMAGE, replay_all
from kjbod.records.codec import batch_entries, encode_entries
from kjbod.tools.importer.from_files import ImportPlan, ImportRequest, plan_import
from tests.synthetic import load_synthetic
from tests.tools.importer.test_from_files import ASSIGNMENT, BROKERS, LOG_DIRS, write


def payloads(plan: ImportPlan) -> list[bytes]:
    return [encode_entries(batch)[0] for batch in batch_entries(plan.entries, 50)]


def both(request: ImportRequest) -> tuple[ImportPlan, ImportPlan]:
    """The plan of the columnar path (when it takes the input) and of the per-entry path."""
    return plan_import(request), plan_import(request, columnar=False)


def assert_same(request: ImportRequest, *, columnar: bool = True) -> ImportPlan:
    fast, slow = both(request)
    assert (fast.image is not None) == columnar
    assert payloads(fast) == payloads(slow)
    assert fast.summary == slow.summary
    if fast.image is not None:
        replayed = replay_all(EMPTY_IMAGE, slow.entries)
        assert fast.image.offset == replayed.offset
        assert fast.image.cluster == replayed.cluster and fast.image.features == replayed.features
        assert fast.image.topics.table.by_topic_id().same_as(replayed.topics.table.by_topic_id())
    return fast


def files(tmp_path: Path, brokers: Any = BROKERS, assignment: Any = ASSIGNMENT, log_dirs: Any = LOG_DIRS, **options: Any) -> ImportRequest:
    output = tmp_path / "log-dirs.txt"
    output.write_text(
        "Querying brokers for log directories information\nReceived log directory information from brokers 1,2\n"
        + json.dumps(log_dirs, separators=(",", ":")) + "\n"
    )
    return ImportRequest(write(tmp_path / "brokers.json", brokers), write(tmp_path / "assignment.json", assignment), [output], **options)


def test_the_usual_input_is_read_as_columns_with_the_same_records(tmp_path: Path) -> None:
    # Lagging and future replicas, a failed directory, "any" and missing log_dirs, a leader.
    assert_same(files(tmp_path))


@pytest.mark.parametrize("chunk", [40, 200, 1 << 20])
@pytest.mark.parametrize("per_broker", [False, True])
def test_a_generated_cluster_in_chunks_of_any_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int, per_broker: bool) -> None:
    monkeypatch.setattr(json_chunks, "CHUNK_BYTES", chunk)
    synthetic = load_synthetic()
    cluster = synthetic.generate(
        synthetic.SyntheticSpec(brokers=9, dirs_per_broker=3, partitions=300, failed_dirs=2, lagging_fraction=0.1, future_fraction=0.05, seed=3)
    )
    paths = synthetic.write_files(cluster, tmp_path, per_broker=per_broker)
    fast = assert_same(ImportRequest(paths["brokers"], paths["assignment"], paths["log_dirs"]))
    assert fast.summary.offline_replicas and fast.summary.future_replicas and fast.summary.replica_logs


def test_replicas_in_a_failed_directory_leave_the_isr_and_the_leadership(tmp_path: Path) -> None:
    assignment = copy.deepcopy(ASSIGNMENT)
    assignment["partitions"] += [
        # Its leader's directory failed; and one whose every replica is there (leaderless).
        {"topic": "down", "partition": 0, "replicas": [2, 1], "log_dirs": ["/data/b2/d1", "/data/b1/d1"]},
        {"topic": "down", "partition": 1, "replicas": [2], "log_dirs": ["/data/b2/d1"]},
    ]
    fast = assert_same(files(tmp_path, assignment=assignment))
    assert fast.summary.offline_replicas == 2


@pytest.mark.parametrize(
    "layout",
    [
        lambda doc: json.dumps(doc, indent=2),  # not the compact layout: read whole
        lambda doc: json.dumps({"partitions": doc["partitions"], "version": 1}, separators=(",", ":")),
        lambda doc: json.dumps({"partitions": doc["partitions"]}, separators=(",", ":")),
    ],
)
def test_other_layouts_of_the_assignment(tmp_path: Path, layout: Any) -> None:
    request = files(tmp_path)
    request.assignment_file.write_text(layout(ASSIGNMENT))
    assert_same(request)


def test_no_partitions(tmp_path: Path) -> None:
    request = files(tmp_path, assignment={"version": 1, "partitions": []})
    request.log_dirs_files = []
    assert assert_same(request).summary.partitions == 0


def test_a_pretty_printed_log_dirs_output_and_several_files(tmp_path: Path) -> None:
    request = files(tmp_path)
    first, second = ({"brokers": [broker], "version": 1} for broker in LOG_DIRS["brokers"])
    request.log_dirs_files[0].write_text(json.dumps(first, indent=1))
    request.log_dirs_files.append(write(tmp_path / "more.txt", second, header=True))
    assert_same(request)


def test_an_older_metadata_version_and_a_cluster_id(tmp_path: Path) -> None:
    brokers = {"brokers": [{"id": b, "rack": None, "log_dirs": [f"/d{b}"]} for b in (1, 2, 3)]}
    assignment = {"version": 1, "partitions": [{"topic": "t", "partition": p, "replicas": [1 + p % 3, 1 + (p + 1) % 3]} for p in range(5)]}
    log_dirs = {"brokers": [{"broker": 1, "logDirs": [{"partitions": [{"partition": "t-0", "size": 9, "offsetLag": 0, "isFuture": False}], "error": None, "logDir": "/d1"}]}], "version": 1}
    for version in ("3.6-IV2", "3.7-IV1", "4.0-IV3"):
        assert_same(files(tmp_path, brokers, assignment, log_dirs, metadata_version=version, cluster_id="aaaaaaaaaaaaaaaaaaaaaa"))


def test_paths_kafka_would_not_write_are_left_to_the_per_entry_path(tmp_path: Path) -> None:
    # A trailing slash resolves to the directory all the same, entry by entry.
    assignment = copy.deepcopy(ASSIGNMENT)
    assignment["partitions"][0]["log_dirs"][0] += "/"
    assert_same(files(tmp_path, assignment=assignment), columnar=False)


def test_problems_are_the_per_entry_paths(tmp_path: Path) -> None:
    assignment = copy.deepcopy(ASSIGNMENT)
    assignment["partitions"][1]["replicas"] = [2, 2, 9]
    request = files(tmp_path, assignment=assignment)
    with pytest.raises(ValidationFailed) as fast:
        plan_import(request)
    with pytest.raises(ValidationFailed) as slow:
        plan_import(request, columnar=False)
    assert fast.value.problems == slow.value.problems and len(fast.value.problems) >= 2


# Any change to the input: the two paths agree ------------------------------------------------------

VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.integers(2**31 - 2, 2**31 + 1), st.integers(2**63 - 1, 2**64 + 1),
    st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(["", "any", "orders-0", "orders-7", "audit-0", "x-1", "/data/b1/d2", "/data/b2/d1/", "org.Error", "orders"]),
    st.lists(st.integers(0, 4), max_size=4), st.lists(st.sampled_from(["any", "/data/b1/d1", "/data/b2/d2", "/data/b3"]), max_size=3),
    st.just({}),
)


def _places(node: Any, at: tuple = ()) -> list[tuple]:
    """Every place in a document: each key or index, recursively."""
    places = [at] if at else []
    if isinstance(node, dict):
        for key, value in node.items():
            places += _places(value, (*at, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            places += _places(value, (*at, index))
    return places


def _changed(document: Any, place: tuple, change: str, value: Any) -> Any:
    document = copy.deepcopy(document)
    *parent_at, last = place
    parent = document
    for step in parent_at:
        parent = parent[step]
    if change == "set":
        parent[last] = value
    elif change == "remove":
        del parent[last]
    elif change == "duplicate" and isinstance(parent, list):
        parent.insert(last, copy.deepcopy(parent[last]))
    elif change == "extra" and isinstance(parent[last], dict):
        parent[last]["extra"] = value
    return document


DOCUMENTS = {"brokers": BROKERS, "assignment": ASSIGNMENT, "log_dirs": LOG_DIRS}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    which=st.sampled_from(sorted(DOCUMENTS)), choice=st.integers(0, 10**6), change=st.sampled_from(["set", "set", "remove", "duplicate", "extra"]),
    value=VALUES,
)
def test_any_change_to_the_input_gives_the_same_records_or_the_same_problems(
    tmp_path_factory: pytest.TempPathFactory, which: str, choice: int, change: str, value: Any
) -> None:
    places = _places(DOCUMENTS[which])
    documents = dict(DOCUMENTS)
    documents[which] = _changed(DOCUMENTS[which], places[choice % len(places)], change, value)
    request = files(tmp_path_factory.mktemp("changed"), documents["brokers"], documents["assignment"], documents["log_dirs"])
    outcomes = []
    for columnar in (True, False):
        try:
            plan = plan_import(request, columnar=columnar)
            outcomes.append((payloads(plan), plan.summary))
        except ValidationFailed as exc:
            outcomes.append(exc.problems)
    assert outcomes[0] == outcomes[1]


# The chunks -----------------------------------------------------------------------------------


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    items=st.lists(st.fixed_dictionaries({"topic": st.text(max_size=6), "n": st.integers(0, 9)}), max_size=20),
    chunk=st.integers(1, 200),
    version_first=st.booleans(),
)
def test_chunks_are_the_array_cut_between_elements(tmp_path_factory: pytest.TempPathFactory, items: list, chunk: int, version_first: bool) -> None:
    path = tmp_path_factory.mktemp("chunks") / "doc.json"
    document = {"version": 1, "partitions": items} if version_first else {"partitions": items, "version": 1}
    path.write_bytes(b"header line\n" + orjson.dumps(document) + b"\n ")
    chunks = json_chunks.ArrayChunks.open(
        path, [(b'{"version":1,"partitions":[', b"]}"), (b'{"partitions":[', b'],"version":1}')], b'},{"topic":',
        skip_preamble=lambda data: data.index(b"{"), chunk_bytes=chunk,
    )
    assert chunks is not None
    read = []
    for part in chunks:
        try:
            read += orjson.loads(b"[" + part + b"]")
        except orjson.JSONDecodeError:
            return  # a boundary inside a string: the reader would read the document whole
    assert read == items


def test_a_document_in_another_layout_has_no_chunks(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    path.write_text('{"version": 1, "partitions": []}')
    assert json_chunks.ArrayChunks.open(path, [(b'{"version":1,"partitions":[', b"]}")], b'},{"topic":') is None
