"""b. A live cluster's own files imported by kjbod: what kjbod's describe commands print on the
imported state against what Kafka's tools print on the live cluster, line for line.

Fields that depend on traffic or the wall clock are named where they are masked, with the reason,
and still compared as far as they can be (present, same type, same place):
- offsets (HighWatermark, LogEndOffset, the features' Epoch): every metadata change moves them, and
  kjbod numbers the records of its own state log (import writes the image, not Kafka's log);
- LastFetchTimestamp, LastCaughtUpTimestamp: the leader's wall clock (kjbod's is simulated);
- an observer's DirectoryId: the leader learns it from the broker's fetches; it is in no record.
"""

from __future__ import annotations

import json
import re


from tests.kafka.conftest import Live, kjbod

UUID = re.compile(r"^[A-Za-z0-9_-]{22}$")
INTEGER = re.compile(r"^-?\d+$")


def test_import_of_the_live_cluster_succeeds(live: Live) -> None:
    result = live.import_result
    assert result is not None and result.exit_code == 0, result.stdout + result.stderr
    assert "Imported 3 broker(s) with 9 log directories, 2 topic(s) and 9 partition(s) (24 replicas)" in result.stdout


def _without_kjbod_columns(lines: list[str]) -> list[str]:
    """kjbod's topic describe adds each replica's Directories and the Offline replicas after
    Kafka's columns (docs/cli.md); Kafka's own columns are compared."""
    return [re.sub(r"\tDirectories: [^\t]*\tOffline: [^\t]*$", "", line) for line in lines]


def _without_configs(lines: list[str]) -> list[str]:
    return [re.sub(r"\tConfigs: .*$", "\tConfigs: ...", line) if not line.startswith("\t") else line for line in lines]


def test_topic_describe_partitions(live: Live) -> None:
    """Every topic and partition line, Kafka's columns, but for the topics' Configs (next test)."""
    ours = kjbod("topic", "describe", state=live.state)
    assert ours.exit_code == 0, ours.stderr
    assert _without_configs(_without_kjbod_columns(ours.lines)) == _without_configs(live.kafka["topics"].lines)
    assert all("\tDirectories: " in line for line in ours.lines if line.startswith("\t"))


def test_topic_describe(live: Live) -> None:
    """Every line, Configs included: with ELR on the bootstrap's cluster-wide min.insync.replicas=1
    (a DYNAMIC_DEFAULT_BROKER_CONFIG) is listed with the topic's own configs, in HashMap order."""
    ours = kjbod("topic", "describe", state=live.state)
    assert _without_kjbod_columns(ours.lines) == live.kafka["topics"].lines


def _sorted_log_dirs(text: str) -> tuple[list[str], dict]:
    """Kafka's JSON arrays follow the brokers' hash maps; kjbod sorts them (docs/cli.md). The
    lines before the JSON are compared as they are, the document with its arrays sorted."""
    *head, document = text.splitlines()
    data = json.loads(document)
    for broker in data["brokers"]:
        for log_dir in broker["logDirs"]:
            log_dir["partitions"].sort(key=lambda item: item["partition"])
        broker["logDirs"].sort(key=lambda item: item["logDir"])
    data["brokers"].sort(key=lambda item: item["broker"])
    return head, data


def test_log_dirs_describe(live: Live) -> None:
    ours = kjbod("log-dirs", "describe", state=live.state)
    assert ours.exit_code == 0, ours.stderr
    assert _sorted_log_dirs(ours.stdout) == _sorted_log_dirs(live.kafka["log-dirs"].stdout)
    # Same keys in the same order in every object (json.loads keeps the order).
    assert [list(d) for d in json.loads(ours.lines[-1])["brokers"][0]["logDirs"]] == \
        [list(d) for d in json.loads(live.kafka["log-dirs"].lines[-1])["brokers"][0]["logDirs"]]


FEATURE_LINE = re.compile(r"^(Feature: .*  Epoch: )(\S+)$")


def _features(lines: list[str]) -> tuple[list[str], set[str]]:
    """The lines with the Epoch masked (an offset: see the module's docstring), and the epochs."""
    masked, epochs = [], set()
    for line in lines:
        match = FEATURE_LINE.match(line)
        assert match, line
        masked.append(match.group(1) + "<epoch>")
        epochs.add(match.group(2))
    return masked, epochs


def _feature_name(line: str) -> str:
    return line.split()[1]


def test_features_describe_of_the_features_kjbod_models(live: Live) -> None:
    ours = kjbod("features", "describe", state=live.state)
    assert ours.exit_code == 0, ours.stderr
    our_lines, our_epochs = _features(ours.lines)
    kafka_lines, kafka_epochs = _features(live.kafka["features"].lines)
    modelled = {_feature_name(line) for line in our_lines}
    assert our_lines == [line for line in kafka_lines if _feature_name(line) in modelled]
    assert len(our_epochs) == len(kafka_epochs) == 1 and all(INTEGER.match(epoch) for epoch in our_epochs | kafka_epochs)


def test_features_describe(live: Live) -> None:
    ours = kjbod("features", "describe", state=live.state)
    assert _features(ours.lines)[0] == _features(live.kafka["features"].lines)[0]


def _status(lines: list[str]) -> dict[str, str]:
    return dict(re.match(r"^(\w+):\s+(.*)$", line).groups() for line in lines)


def test_quorum_describe_status(live: Live) -> None:
    ours = kjbod("quorum", "describe", "--status", state=live.state)
    assert ours.exit_code == 0, ours.stderr
    mine, theirs = _status(ours.lines), _status(live.kafka["status"].lines)
    assert list(mine) == list(theirs)
    # Each line's value starts in the same column.
    assert [line.index(value) for line, value in zip(ours.lines, mine.values())] == \
        [line.index(value) for line, value in zip(live.kafka["status"].lines, theirs.values())]
    assert INTEGER.match(mine.pop("HighWatermark")) and INTEGER.match(theirs.pop("HighWatermark"))
    our_observers, kafka_observers = json.loads(mine.pop("CurrentObservers")), json.loads(theirs.pop("CurrentObservers"))
    # The leader lists observers in its hash map's order, keyed by (id, random directory id).
    assert sorted(o["id"] for o in our_observers) == sorted(o["id"] for o in kafka_observers)
    assert all(list(o) == ["id", "directoryId"] and UUID.match(o["directoryId"]) for o in our_observers + kafka_observers)
    assert mine == theirs


REPLICATION_MASKS = {
    "LogEndOffset": INTEGER,
    "LastFetchTimestamp": INTEGER,
    "LastCaughtUpTimestamp": INTEGER,
}


def _replication(lines: list[str]) -> tuple[str, list[dict[str, str]]]:
    header, *rows = lines
    names = [name.strip() for name in header.split("\t") if name.strip()]
    return header, [dict(zip(names, (cell.strip() for cell in row.split("\t")))) for row in rows]


def test_quorum_describe_replication(live: Live) -> None:
    ours = kjbod("quorum", "describe", "--replication", state=live.state)
    assert ours.exit_code == 0, ours.stderr
    our_header, our_rows = _replication(ours.lines)
    kafka_header, kafka_rows = _replication(live.kafka["replication"].lines)
    assert our_header == kafka_header
    for rows in (our_rows, kafka_rows):
        for row in rows:
            for name, shape in REPLICATION_MASKS.items():
                assert shape.match(row.pop(name)), (name, row)
            if row["Status"] == "Observer":
                assert UUID.match(row.pop("DirectoryId")), row
    # The observers' rows follow the leader's hash map (see test_quorum_describe_status); the voters lead.
    def ordered(rows: list[dict[str, str]]) -> list[dict[str, str]]:
        return [row for row in rows if row["Status"] != "Observer"] + sorted((row for row in rows if row["Status"] == "Observer"),
                                                                            key=lambda row: int(row["NodeId"]))
    assert ordered(our_rows) == ordered(kafka_rows)
