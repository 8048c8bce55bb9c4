"""`kafka-log-dirs --describe` answered from a broker's real disks (`--from-disk`): the log
directories of a server.properties, scanned as Kafka's LogManager would find them.

KIP-113 and KIP-858 name the directories of replicas being moved, deleted or found astray.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from kjbod.common.java import INT32_MAX
from kjbod.errors import UserError
from kjbod.tools.log_dirs.report import (
    KAFKA_STORAGE_EXCEPTION,
    BrokerEntry,
    LogDirEntry,
    LogDirsReport,
    PartitionEntry,
    parse_broker_list,
    parse_topic_list,
    select_brokers,
)

# The metadata log (KRaft) is not a partition the LogManager serves (LogManager.loadLogs).
METADATA_TOPIC = "__cluster_metadata"


# UnifiedLog's directory names: `<topic>-<partition>` for a live log, and
# `<topic>-<partition>.<uuid without dashes>-<suffix>` for one being built in another directory
# (future), scheduled for asynchronous deletion (delete), or found not to belong here (stray,
# KIP-858). KIP-113 first named the future directory `<topic>-<partition>.move`.
_SUFFIXED = re.compile(r"^(?P<tp>.+)\.[0-9a-f]{32}-(?P<kind>future|delete|stray)$")
_TOPIC_PARTITION = re.compile(r"^(?P<topic>.+)-(?P<partition>[0-9]+)$")


class DirectoryName(NamedTuple):
    topic: str
    partition: int
    kind: str  # "log", "future", "delete" or "stray"


def parse_directory_name(name: str) -> DirectoryName | None:
    """A partition directory's topic, partition and kind; None for anything else."""
    kind = "log"
    base = name
    match = _SUFFIXED.match(name)
    if match:
        base, kind = match["tp"], match["kind"]
    elif name.endswith(".move"):
        base, kind = name[: -len(".move")], "future"
    match = _TOPIC_PARTITION.match(base)
    if match is None:
        return None
    partition = int(match["partition"])
    if partition > INT32_MAX:
        return None
    return DirectoryName(match["topic"], partition, kind)


def segment_bytes(partition_dir: str) -> int:
    """A log's size as Kafka counts it: the sum of its segment (`*.log`) files."""
    total = 0
    with os.scandir(partition_dir) as entries:
        for entry in entries:
            if entry.name.endswith(".log") and entry.is_file(follow_symlinks=False):
                total += entry.stat(follow_symlinks=False).st_size
    return total


def _displayable(name: str) -> str:
    """A file name that is not valid UTF-8 (Python keeps its bytes as lone surrogates) as Java
    decodes it: each bad byte becomes U+FFFD."""
    try:
        name.encode()
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return name


def _os_error_line(path: str, exc: OSError) -> str:
    return f"{exc.filename or path}: {exc.strerror or exc}"


def scan_directory(path: str) -> tuple[LogDirEntry, list[str]]:
    """One log directory as a broker would report it, and the lines to tell the operator.

    A directory that cannot be listed, or holding a partition directory that cannot be, is
    offline (Kafka takes a whole log directory offline on an I/O error inside it).
    """
    from kjbod.storage.meta_properties import MetaPropertiesError, read_meta_properties
    from kjbod.storage.properties import PropertiesError

    partitions: list[PartitionEntry] = []
    deleting: list[str] = []
    try:
        with os.scandir(path) as entries:
            found = [(entry, parse_directory_name(_displayable(entry.name))) for entry in entries]
        for entry, parsed in found:
            # Whether an unreadable entry is a directory is not always knowable without
            # opening it, so names are trusted and opening it decides.
            if parsed is None or parsed.topic == METADATA_TOPIC:
                continue
            if parsed.kind == "delete":
                deleting.append(f"{parsed.topic}-{parsed.partition}")
            elif parsed.kind in ("log", "future"):
                # Stray logs (KIP-858) are not served by the broker, so it does not report them.
                try:
                    size = segment_bytes(entry.path)
                except NotADirectoryError:
                    continue  # a file that happens to have a partition's name
                partitions.append(PartitionEntry(parsed.topic, parsed.partition, size, 0, parsed.kind == "future"))
    except OSError as exc:
        return LogDirEntry(path, KAFKA_STORAGE_EXCEPTION, []), [_os_error_line(path, exc)]
    notes = []
    directory_id = None
    try:
        directory_id = read_meta_properties(path)[1].directory_id
    except PropertiesError as exc:
        if not exc.missing:
            return LogDirEntry(path, KAFKA_STORAGE_EXCEPTION, []), [str(exc)]
    except MetaPropertiesError as exc:
        notes.append(f"{os.path.join(path, 'meta.properties')}: {exc}")
    return LogDirEntry(path, None, sorted(partitions), directory_id, sorted(set(deleting))), notes


@dataclass
class DiskScan:
    report: LogDirsReport
    # One line per directory that could not be read ("<dir>: <strerror>") or whose
    # meta.properties is malformed.
    problems: list[str]


def _absolute(path: str) -> str:
    """As Java's `new File(dir).getAbsolutePath()`: relative to the working directory,
    duplicate and trailing separators removed."""
    joined = path if path.startswith("/") else os.path.join(os.getcwd(), path)
    return re.sub(r"/+", "/", joined).rstrip("/") or "/"


def scan_log_dirs(config_path: Path) -> DiskScan:
    """`log-dirs describe --from-disk`: the broker's log.dirs (or log.dir) and metadata.log.dir
    from its server.properties, each scanned with os.scandir."""
    from kjbod.storage.config import load_node_config

    config = load_node_config(config_path)
    log_dirs = []
    problems = []
    for directory in dict.fromkeys(_absolute(d) for d in config.directories):
        entry, notes = scan_directory(directory)
        log_dirs.append(entry)
        problems.extend(notes)
    node_id = config.node_id
    if node_id < 0:
        # A broker-id-less config: take the node id its formatted directories carry.
        found = (_node_id_of(d.path) for d in log_dirs if d.error is None)
        node_id = next((i for i in found if i is not None), -1)
    log_dirs.sort(key=lambda d: d.path)
    return DiskScan(LogDirsReport([BrokerEntry(node_id, log_dirs)], disk=True), problems)


def _node_id_of(path: str) -> int | None:
    from kjbod.storage.meta_properties import read_meta_properties

    try:
        return read_meta_properties(path)[1].node_id
    except UserError:
        return None


def describe_from_disk(config_path: Path, broker_list: str | None = None, topic_list: str | None = None) -> DiskScan:
    requested = parse_broker_list(broker_list)
    topics = parse_topic_list(topic_list)
    scan = scan_log_dirs(config_path)
    targets = select_brokers(scan.report.broker_ids, requested)
    return DiskScan(scan.report.filtered(set(targets), topics), scan.problems)
