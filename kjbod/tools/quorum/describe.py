"""`kjbod quorum describe`: kafka-metadata-quorum's `describe --status` and `describe --replication`
lines, and kjbod's JSON of the same, from the quorum a controller describes
(kjbod.controller.quorum_control.QuorumInfo).

The lines are MetadataQuorumCommand's (`tools/src/main/java/org/apache/kafka/tools/MetadataQuorumCommand.java`).
"""

from __future__ import annotations

from typing import Any

from kjbod.controller.quorum_control import QuorumInfo, ReplicaRow, endpoint_text
from kjbod.errors import UsageError

# The padding of describe --status's labels (MetadataQuorumCommand.java:266-275).
STATUS_LABELS = (
    "ClusterId:              ",
    "LeaderId:               ",
    "LeaderEpoch:            ",
    "HighWatermark:          ",
    "MaxFollowerLag:         ",
    "MaxFollowerLagTimeMs:   ",
    "CurrentVoters:          ",
    "CurrentObservers:       ",
)
REPLICATION_HEADERS = ("NodeId", "DirectoryId", "LogEndOffset", "Lag", "LastFetchTimestamp", "LastCaughtUpTimestamp", "Status")


def check_describe_flags(status: bool, replication: bool, human_readable: bool) -> None:
    """MetadataQuorumCommand.execute's checks of describe's flags (MetadataQuorumCommand.java:128-141)."""
    if status and replication:
        raise UsageError("Only one of --status or --replication should be specified with describe sub-command")
    if status and human_readable:
        raise UsageError("The option --human-readable is only supported along with --replication")
    if not status and not replication:
        raise UsageError("One of --status or --replication must be specified with describe sub-command")


def _node_text(info: QuorumInfo, row: ReplicaRow) -> str:
    """MetadataQuorumCommand.Node.toString (MetadataQuorumCommand.java:312-329): the endpoints
    are those DescribeQuorum returns for that node id (voters only)."""
    text = f'{{"id": {row.key.id}, "directoryId": ' + ("null" if row.key.directory_id is None else f'"{row.key.directory_id}"')
    endpoints = info.nodes.get(row.key.id, ())
    if endpoints:
        text += ", \"endpoints\": [" + ", ".join(f'"{endpoint_text(e)}"' for e in endpoints) + "]"
    return text + "}"


def max_follower_lag(info: QuorumInfo) -> tuple[int, int]:
    """MaxFollowerLag and MaxFollowerLagTimeMs (MetadataQuorumCommand.java:252-264): against the
    first voter with the lowest log end offset."""
    leader = info.leader
    slowest = min(info.voters, key=lambda r: r.log_end_offset) if info.voters else leader
    lag = leader.log_end_offset - slowest.log_end_offset
    if slowest is leader:
        return lag, 0
    if leader.last_caught_up_ms != -1 and slowest.last_caught_up_ms != -1:
        return lag, leader.last_caught_up_ms - slowest.last_caught_up_ms
    return lag, -1


def status_lines(info: QuorumInfo) -> list[str]:
    """`describe --status` (MetadataQuorumCommand.java:249-276)."""
    lag, lag_ms = max_follower_lag(info)
    values = (
        "null" if info.cluster_id is None else info.cluster_id,
        info.leader_id,
        info.leader_epoch,
        info.high_watermark,
        lag,
        lag_ms,
        "[" + ", ".join(_node_text(info, r) for r in info.voters) + "]",
        "[" + ", ".join(_node_text(info, r) for r in info.observers) + "]",
    )
    return [f"{label}{value}" for label, value in zip(STATUS_LABELS, values, strict=True)]


def _timestamp(value: int, now_ms: int, human_readable: bool) -> str:
    """A timestamp column: -1 when absent, `N ms ago` with --human-readable. Kafka compares with
    the wall clock and refuses timestamps at or before the epoch; kjbod's are simulated time
    since the state began, so time 0 is a real moment and the age is taken from the simulated now."""
    if value == -1:
        return "-1"
    return f"{now_ms - value} ms ago" if human_readable else str(value)


def replication_rows(info: QuorumInfo, human_readable: bool = False) -> list[list[str]]:
    """`describe --replication`'s rows (MetadataQuorumCommand.java:196-234): the leader, the other
    voters, then the observers; the lag is against the leader's log end offset."""
    leader = info.leader
    rows = []
    for status, group in (
        ("Leader", [leader]),
        ("Follower", [r for r in info.voters if r.key.id != info.leader_id]),
        ("Observer", [r for r in info.observers if r is not leader]),
    ):
        for row in group:
            rows.append(
                [
                    str(row.key.id),
                    row.key.directory_text,
                    str(row.log_end_offset),
                    str(leader.log_end_offset - row.log_end_offset),
                    _timestamp(row.last_fetch_ms, info.now_ms, human_readable),
                    _timestamp(row.last_caught_up_ms, info.now_ms, human_readable),
                    status,
                ]
            )
    return rows


def pretty_table(headers: tuple[str, ...], rows: list[list[str]]) -> list[str]:
    """ToolsUtils.prettyPrintTable: each column padded to its widest value, every value
    (the last too) followed by a tab."""
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    return ["".join(value.ljust(width) + "\t" for value, width in zip(row, widths, strict=True)) for row in [list(headers), *rows]]


def replication_lines(info: QuorumInfo, human_readable: bool = False) -> list[str]:
    return pretty_table(REPLICATION_HEADERS, replication_rows(info, human_readable))


def _row_json(row: ReplicaRow, info: QuorumInfo) -> dict[str, Any]:
    return {
        "id": row.key.id,
        "directoryId": row.key.directory_id,
        "logEndOffset": row.log_end_offset,
        "lag": row.lag,
        "lastFetchTimestamp": row.last_fetch_ms,
        "lastCaughtUpTimestamp": row.last_caught_up_ms,
        "endpoints": [endpoint_text(e) for e in info.nodes.get(row.key.id, ())],
    }


def describe_json(info: QuorumInfo) -> dict[str, Any]:
    lag, lag_ms = max_follower_lag(info)
    return {
        "clusterId": info.cluster_id,
        "leaderId": info.leader_id,
        "leaderEpoch": info.leader_epoch,
        "highWatermark": info.high_watermark,
        "logEndOffset": info.log_end_offset,
        "maxFollowerLag": lag,
        "maxFollowerLagTimeMs": lag_ms,
        "kraftVersion": info.kraft_version,
        "staticVoters": info.static,
        "latestVoterChange": None if info.voters_offset < 0 else {"offset": info.voters_offset, "committed": info.change_committed},
        "timeMs": info.now_ms,
        "voters": [_row_json(r, info) for r in info.voters],
        "observers": [_row_json(r, info) for r in info.observers],
    }
