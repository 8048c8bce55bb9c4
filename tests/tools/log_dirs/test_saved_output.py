"""The kafka-log-dirs reader records a log directory of usual entries at once (C-level loops) and
walks any other entry by entry: both must give the same observations, in the same order, and the
same problems, whatever the output holds (hypothesis over small clusters)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kjbod.common.problems import Problems
from kjbod.tools.log_dirs import saved_output
from kjbod.tools.log_dirs.saved_output import ClusterShape, LogDirsReader, Observation, Observations, read_log_dirs_outputs

_PARTITIONS = {"t": {0: (1, 2), 1: (2, 3), 2: (1, 2, 3), 3: ()}, "u": {0: (3,), 1: (1, 3)}}
_SHAPE = ClusterShape(
    directories={broker: {f"/d{n}": f"dir-{broker}-{n}" for n in (1, 2)} for broker in (1, 2, 3)},
    topic=lambda name: _PARTITIONS.get(name),
    brokers_source="in the brokers file",
    partitions_source="in the assignment",
)
# Known partitions, a replica list that is already a problem (t-3), unknown partitions and
# topics, a name that is no partition, and a second spelling of t-1.
_NAMES = ["t-0", "t-1", "t-2", "t-3", "u-0", "u-1", "t-7", "v-0", "nodash", "t-01"]

_entry = st.fixed_dictionaries(
    {
        # Mostly t-2, whose replicas are every broker: directories of only usual entries are common.
        "partition": st.sampled_from(["t-2"] * 8 + _NAMES),
        "size": st.integers(0, 3),
        "offsetLag": st.sampled_from([0, 0, 0, 1]),
        "isFuture": st.sampled_from([False] * 5 + [True]),
    }
)
_log_dir = st.fixed_dictionaries(
    {"logDir": st.sampled_from(["/d1", "/d2", "/d3"]), "error": st.none(), "partitions": st.lists(_entry, max_size=4)}
)
_output = st.fixed_dictionaries(
    {
        "version": st.just(1),
        "brokers": st.lists(
            st.fixed_dictionaries({"broker": st.sampled_from([1, 2, 3, 4]), "logDirs": st.lists(_log_dir, max_size=3)}), max_size=4
        ),
    }
)


def _read(documents: list[dict], *, at_once: bool, kafka_layout: bool = False, by_broker: bool = True) -> tuple[Observations, list[str]]:
    """`kafka_layout`: written as kafka-log-dirs prints (compact, "brokers" first), which is read
    one broker at a time unless `by_broker` is False."""
    # One directory name for every read, so that the observations' sources compare equal.
    with pytest.MonkeyPatch.context() as patch, tempfile.TemporaryDirectory() as parent:
        tmp = str(Path(parent) / "out")
        Path(tmp).mkdir()
        if not at_once:
            patch.setattr(LogDirsReader, "_recorded_at_once", lambda *args: False)
        if not by_broker:
            patch.setattr(saved_output, "_broker_pieces", lambda *args: None)
        paths = []
        for n, document in enumerate(documents):
            path = Path(tmp) / f"log-dirs-{n}.txt"
            if kafka_layout:
                text = json.dumps({"brokers": document["brokers"], "version": document["version"]}, separators=(",", ":"))
            else:
                text = json.dumps(document)
            path.write_text("Querying brokers for log directories information\n" + text + "\n")
            paths.append(path)
        problems = Problems()
        seen = read_log_dirs_outputs(paths, _SHAPE, problems)
        return _relabelled(seen, tmp), [item.replace(tmp, "TMP") for item in problems.items]


def _relabelled(seen: Observations, tmp: str) -> Observations:
    """`seen` with the temporary directory in every source and place named TMP."""
    def fixed(observation: Observation) -> Observation:
        return observation._replace(source=observation.source.replace(tmp, "TMP"))

    for kind in (seen.current, seen.future):
        for partitions in kind.values():
            for brokers in partitions.values():
                for broker, observation in brokers.items():
                    brokers[broker] = fixed(observation)
    for places in (seen.offline, seen.log_dirs):
        for key, where in places.items():
            places[key] = where.replace(tmp, "TMP")
    return seen


def _ordered(seen: Observations) -> tuple:
    return list(seen.items(False)), list(seen.items(True)), {t: list(p) for t, p in seen.current.items()}, seen


def _future_twice() -> list[dict]:
    """A future replica reported in two directories of its broker (a problem), next to usual entries."""
    entries = [
        {"partition": "t-0", "size": 1, "offsetLag": 0, "isFuture": False},
        {"partition": "t-2", "size": 1, "offsetLag": 1, "isFuture": True},
    ]
    log_dirs = [{"logDir": path, "error": None, "partitions": entries[index:]} for index, path in ((0, "/d1"), (1, "/d2"))]
    return [{"version": 1, "brokers": [{"broker": 1, "logDirs": log_dirs}]}]


@settings(max_examples=150, deadline=None)
@given(documents=st.lists(_output, min_size=1, max_size=2))
@example(documents=_future_twice())
def test_at_once_and_entry_by_entry_agree(documents: list[dict]) -> None:
    at_once, problems_at_once = _read(documents, at_once=True)
    walked, problems_walked = _read(documents, at_once=False)
    assert problems_at_once == problems_walked
    assert _ordered(at_once) == _ordered(walked)


@settings(max_examples=100, deadline=None)
@given(documents=st.lists(_output, min_size=1, max_size=2))
def test_kafkas_layout_read_one_broker_at_a_time_gives_what_the_whole_document_gives(documents: list[dict]) -> None:
    by_broker, problems_by_broker = _read(documents, at_once=True, kafka_layout=True)
    whole, problems_whole = _read(documents, at_once=True, kafka_layout=True, by_broker=False)
    assert problems_by_broker == problems_whole
    assert _ordered(by_broker) == _ordered(whole)


def test_kafkas_layout_is_split_at_its_brokers_and_nothing_else() -> None:
    text = b'Querying\n{"brokers":[{"broker":1,"logDirs":[]},{"broker":2,"logDirs":[{"logDir":"/d1"}]}],"version":1}\n'
    pieces = saved_output._broker_pieces(text, text.index(b"{"))
    assert [json.loads(text[a:b]) for a, b in pieces] == [{"broker": 1, "logDirs": []}, {"broker": 2, "logDirs": [{"logDir": "/d1"}]}]
    assert saved_output._broker_pieces(b'{"brokers":[],"version":1}', 0) == []
    for other in (b'{"version":1,"brokers":[]}', b'{"brokers": [], "version": 1}', b'{"brokers":[{"x":1}],"version":1}'):
        assert saved_output._broker_pieces(other, 0) is None


def test_a_piece_that_does_not_parse_alone_makes_every_output_read_whole(tmp_path: Path) -> None:
    # Valid JSON, but with `},{"broker":` nested inside a broker: the pieces do not parse alone.
    # The first broker (not in the cluster) is a problem found before the reading starts over:
    # it is reported once.
    text = (
        '{"brokers":[{"broker":9,"logDirs":[]},{"broker":1,"logDirs":[{"logDir":"/d1","error":null,"extra":[{"a":1},{"broker":5}],'
        '"partitions":[{"partition":"t-0","size":5,"offsetLag":0,"isFuture":false}]}]}],"version":1}'
    )
    path = tmp_path / "out.txt"
    path.write_text(text + "\n")
    problems = Problems()
    seen = read_log_dirs_outputs([path], _SHAPE, problems)
    assert problems.items == [f"{path} $.brokers[0].broker: broker 9 is not in the brokers file"]
    assert [(t, p, b, o.size) for t, p, b, o in seen.items(False)] == [("t", 0, 1, 5)]


def test_a_usual_directory_is_recorded_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The at-once path is taken for a usual directory (else the test above compares the walk
    with itself), and records what the walk would."""
    calls = []
    original = LogDirsReader._recorded_at_once

    def spy(self: LogDirsReader, *args: object) -> bool:
        calls.append(done := original(self, *args))
        return done

    monkeypatch.setattr(LogDirsReader, "_recorded_at_once", spy)
    entries = [{"partition": name, "size": 5, "offsetLag": lag, "isFuture": False} for name, lag in (("t-0", 0), ("t-2", 2))]
    document = {"version": 1, "brokers": [{"broker": 1, "logDirs": [{"logDir": "/d1", "error": None, "partitions": entries}]}]}
    seen, problems = _read([document], at_once=True)
    assert calls == [True] and problems == []
    assert [(t, p, b, o.directory_id, o.size, o.offset_lag, o.index) for t, p, b, o in seen.items(False)] == [
        ("t", 0, 1, "dir-1-1", 5, 0, 0),
        ("t", 2, 1, "dir-1-1", 5, 2, 1),
    ]
