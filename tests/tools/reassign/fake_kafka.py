"""A stand-in for an operator's Kafka bin/ in the tests of `kjbod reassign run`: a small script that
answers as kafka-reassign-partitions, kafka-log-dirs and kafka-configs do (their exact lines, read
from ReassignPartitionsCommand, 4.3.1 sources: --list curReassignmentsToString, --execute's
rollback block, throttle and "Successfully started" lines, --verify's partition and replica
states and clearAllThrottles; TerseException messages printed bare, others after "Error: ",
exit 1), over a cluster kept in a JSON file, and records every call.

Time is the number of --verify runs: a partition's reassignment completes at the `steps`-th
--verify after its --execute. `FakeKafka.write_bin(dir)` writes bin/kafka-*.sh scripts that run
this file, as an operator's KAFKA_HOME/bin holds Kafka's.

State (FakeKafka fields): partitions {"t-p": {"replicas", "log_dirs", "size"}}, ongoing
{"t-p": {"replicas", "log_dirs", "left"}}, throttled brokers and topics, `steps`,
`execute_sleep` (seconds an --execute waits before it starts anything: room to interrupt kjbod
meanwhile), `execute_errors` {"t-p": message} (alterPartitionReassignments refusing a partition),
`stuck` {"t-p": line} (a --verify line that will not change by waiting), `calls` (every argv).
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

TOOLS = ("kafka-reassign-partitions", "kafka-log-dirs", "kafka-configs")
EXISTING = (
    "Cannot execute because there is an existing partition assignment.  Use --additional to override this and create a new "
    "partition assignment in addition to the existing one. The --additional flag can also be used to change the throttle by "
    "resubmitting the current reassignment."
)


@dataclass
class FakeKafka:
    path: Path
    brokers: list[int] = field(default_factory=list)
    partitions: dict[str, dict] = field(default_factory=dict)
    ongoing: dict[str, dict] = field(default_factory=dict)
    throttled_brokers: list[int] = field(default_factory=list)
    throttled_topics: list[str] = field(default_factory=list)
    steps: int = 2
    execute_sleep: float = 0.0
    execute_errors: dict[str, str] = field(default_factory=dict)
    stuck: dict[str, str] = field(default_factory=dict)
    calls: list[list[str]] = field(default_factory=list)

    # The test's side --------------------------------------------------------------------------

    def save(self) -> FakeKafka:
        data = asdict(self)
        data.pop("path")
        temp = self.path.with_name(self.path.name + ".tmp")
        temp.write_text(json.dumps(data, indent=1))
        os.replace(temp, self.path)
        return self

    @classmethod
    def load(cls, path: Path) -> FakeKafka:
        return cls(path, **json.loads(path.read_text()))

    def write_bin(self, directory: Path, tools: tuple[str, ...] = TOOLS) -> Path:
        directory.mkdir(parents=True, exist_ok=True)
        for tool in tools:
            script = directory / f"{tool}.sh"
            command = shlex.join([sys.executable, str(Path(__file__).resolve()), str(self.path), tool])
            script.write_text(f'#!/bin/sh\nexec {command} "$@"\n')
            script.chmod(0o755)
        return directory

    def executes(self, wave: Path) -> int:
        """How many times --execute was run with this reassignment file."""
        return sum(1 for call in self.calls if call[0] == "kafka-reassign-partitions" and "--execute" in call and str(wave) in call)

    def placement(self, name: str) -> tuple[list[int], list[str]]:
        entry = self.partitions[name]
        return entry["replicas"], entry["log_dirs"]


@contextmanager
def _locked(path: Path) -> Iterator[FakeKafka]:
    """The cluster, read and written back under an exclusive lock (tools may run at once)."""
    with open(path.with_name(path.name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        cluster = FakeKafka.load(path)
        yield cluster
        cluster.save()


def _option(args: list[str], name: str, default: str | None = None) -> str | None:
    return args[args.index(name) + 1] if name in args else default


def _split(name: str) -> tuple[str, int]:
    topic, _, partition = name.rpartition("-")
    return topic, int(partition)


def _key(name: str) -> tuple[str, int]:
    return _split(name)


def _read_file(args: list[str]) -> list[dict]:
    return json.loads(Path(_option(args, "--reassignment-json-file") or "").read_text())["partitions"]


def _explicit(entry: dict) -> list[tuple[int, str]]:
    return [(b, d) for b, d in zip(entry["replicas"], entry.get("log_dirs") or []) if d != "any"]


def _list(cluster: FakeKafka) -> None:
    if not cluster.ongoing:
        print("No partition reassignments found.")
        return
    print("Current partition reassignments:")
    for name in sorted(cluster.ongoing, key=_key):
        old, new = cluster.partitions[name]["replicas"], cluster.ongoing[name]["replicas"]
        adding = [b for b in new if b not in old]
        removing = [b for b in old if b not in new]
        line = f"{name}: replicas: {','.join(map(str, new + removing))}."
        line += f" adding: {','.join(map(str, adding))}." if adding else ""
        line += f" removing: {','.join(map(str, removing))}." if removing else ""
        print(line)


def _execute(path: Path, args: list[str]) -> int:
    entries = _read_file(args)
    with _locked(path) as cluster:
        if cluster.ongoing and "--additional" not in args:
            print(EXISTING)
            return 1
        current = [
            {"topic": _split(e_name)[0], "partition": _split(e_name)[1], "replicas": cluster.partitions[e_name]["replicas"],
             "log_dirs": ["any"] * len(cluster.partitions[e_name]["replicas"])}
            for e_name in sorted((f"{e['topic']}-{e['partition']}" for e in entries), key=_key)
        ]
    print("Current partition replica assignment\n")
    print(json.dumps({"version": 1, "partitions": current}, separators=(",", ":")))
    print("\nSave this to use as the --reassignment-json-file option during rollback")
    sys.stdout.flush()
    throttle = int(_option(args, "--throttle", "-1") or -1)
    dir_throttle = int(_option(args, "--replica-alter-log-dirs-throttle", "-1") or -1)
    with _locked(path) as cluster:
        sleep = cluster.execute_sleep
        if throttle >= 0 or dir_throttle >= 0:
            print("Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.")
            moved = {b for e in entries for b in e["replicas"]} | {b for e in entries for b in cluster.partitions[f"{e['topic']}-{e['partition']}"]["replicas"]}
            cluster.throttled_brokers = sorted(set(cluster.throttled_brokers) | moved)
            cluster.throttled_topics = sorted(set(cluster.throttled_topics) | {e["topic"] for e in entries})
        if throttle >= 0:
            print(f"The inter-broker throttle limit was set to {throttle} B/s")
        if dir_throttle >= 0 and any(_explicit(e) for e in entries):
            print(f"The replica-alter-dir throttle limit was set to {dir_throttle} B/s")
    sys.stdout.flush()
    time.sleep(sleep)
    with _locked(path) as cluster:
        errors = {f"{e['topic']}-{e['partition']}": cluster.execute_errors.get(f"{e['topic']}-{e['partition']}") for e in entries}
        errors = {name: message for name, message in errors.items() if message}
        for entry in entries:
            name = f"{entry['topic']}-{entry['partition']}"
            if name not in errors:
                dirs = entry.get("log_dirs") or ["any"] * len(entry["replicas"])
                cluster.ongoing[name] = {"replicas": entry["replicas"], "log_dirs": dirs, "left": cluster.steps}
    if errors:
        print("Error reassigning partition(s):")
        for name in sorted(errors, key=_key):
            print(f"{name}: {errors[name]}")
        return 1
    names = sorted((f"{e['topic']}-{e['partition']}" for e in entries), key=_key)
    print(f"Successfully started partition reassignment{'s' if len(names) > 1 else ''} for {','.join(names)}")
    moves = sorted(((b, _split(f"{e['topic']}-{e['partition']}"), d) for e in entries for b, d in _explicit(e)), key=lambda m: (m[0], m[1]))
    for broker, (topic, partition), directory in moves:
        print(f"Successfully started moving log directory to {directory} for replica {topic}-{partition} with broker {broker} ")
    return 0


def _verify(path: Path, args: list[str]) -> int:
    entries = _read_file(args)
    with _locked(path) as cluster:
        for name in list(cluster.ongoing):
            target = cluster.ongoing[name]
            target["left"] -= 1
            if target["left"] <= 0:
                old = cluster.partitions[name]
                old_dirs = dict(zip(old["replicas"], old["log_dirs"]))
                dirs = [old_dirs.get(b, "/fake/default") if d == "any" else d for b, d in zip(target["replicas"], target["log_dirs"])]
                cluster.partitions[name] = {**old, "replicas": target["replicas"], "log_dirs": dirs}
                del cluster.ongoing[name]
        print("Status of partition reassignment:")
        names = sorted((f"{e['topic']}-{e['partition']}" for e in entries), key=_key)
        by_name = {f"{e['topic']}-{e['partition']}": e for e in entries}
        for name in names:
            if name in cluster.stuck:
                print(cluster.stuck[name])
            elif name in cluster.ongoing:
                print(f"Reassignment of partition {name} is still in progress.")
            elif cluster.partitions[name]["replicas"] == by_name[name]["replicas"]:
                print(f"Reassignment of partition {name} is completed.")
            else:
                current, target = cluster.partitions[name]["replicas"], by_name[name]["replicas"]
                print(f"There is no active reassignment of partition {name}, but replica set is {','.join(map(str, current))} "
                      f"rather than {','.join(map(str, target))}.")
        replica_lines = []
        for name in names:
            for broker, directory in _explicit(by_name[name]):
                where = dict(zip(cluster.partitions[name]["replicas"], cluster.partitions[name]["log_dirs"])).get(broker)
                topic, partition = _split(name)
                if name in cluster.ongoing and where is None:
                    line = f"Partition {name} cannot be found in any live log directory on broker {broker}."
                elif name in cluster.ongoing:
                    line = f"Reassignment of replica {name}-{broker} is still in progress."
                elif where == directory:
                    line = f"Reassignment of replica {name}-{broker} completed successfully."
                elif where is None:
                    line = f"Partition {name} cannot be found in any live log directory on broker {broker}."
                else:
                    line = f"Partition {name} on broker {broker} is not being moved from log dir {where} to {directory}."
                replica_lines.append(((broker, topic, partition), line))
        for _, line in sorted(replica_lines):
            print(line)
        if not replica_lines:
            print()
        if not cluster.ongoing and "--preserve-throttles" not in args:
            brokers = sorted(set(cluster.brokers) | {b for e in entries for b in e["replicas"]})
            topics = sorted({e["topic"] for e in entries})
            print(f"Clearing broker-level throttles on broker{'s' if len(brokers) > 1 else ''} {','.join(map(str, brokers))}")
            print(f"Clearing topic-level throttles on topic{'s' if len(topics) > 1 else ''} {','.join(topics)}")
            cluster.throttled_brokers, cluster.throttled_topics = [], []
    return 0


def _log_dirs(cluster: FakeKafka) -> None:
    brokers: dict[int, dict[str, list[dict]]] = {b: {} for b in cluster.brokers}
    for name, entry in cluster.partitions.items():
        for broker, directory in zip(entry["replicas"], entry["log_dirs"]):
            brokers[broker].setdefault(directory, []).append({"partition": name, "size": entry["size"], "offsetLag": 0, "isFuture": False})
    for name, target in cluster.ongoing.items():
        old = cluster.partitions[name]
        for broker, directory in zip(target["replicas"], target["log_dirs"]):
            if broker not in old["replicas"]:  # half copied
                where = directory if directory != "any" else "/fake/default"
                brokers[broker].setdefault(where, []).append({"partition": name, "size": old["size"] // 2, "offsetLag": 0, "isFuture": False})
    print("Querying brokers for log directories information")
    print(f"Received log directory information from brokers {','.join(map(str, cluster.brokers))}")
    document = {"brokers": [{"broker": b, "logDirs": [{"partitions": p, "error": None, "logDir": d} for d, p in sorted(dirs.items())]}
                            for b, dirs in brokers.items()], "version": 1}
    print(json.dumps(document, separators=(",", ":")))


def _configs(cluster: FakeKafka) -> None:
    for broker in cluster.brokers:
        print(f"Dynamic configs for broker {broker} are:")
        if broker in cluster.throttled_brokers:
            print("  leader.replication.throttled.rate=1000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:leader.replication.throttled.rate=1000}")


def main(argv: list[str]) -> int:
    path, tool, args = Path(argv[0]), argv[1], argv[2:]
    with _locked(path) as cluster:
        cluster.calls.append([tool, *args])
    if tool == "kafka-log-dirs":
        with _locked(path) as cluster:
            _log_dirs(cluster)
        return 0
    if tool == "kafka-configs":
        with _locked(path) as cluster:
            _configs(cluster)
        return 0
    if "--list" in args:
        with _locked(path) as cluster:
            _list(cluster)
        return 0
    if "--execute" in args:
        return _execute(path, args)
    if "--verify" in args:
        return _verify(path, args)
    print("Error: the fake knows --list, --execute and --verify")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
