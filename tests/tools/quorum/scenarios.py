"""Quorums built by kjbod's own operations, described, and written in the input format of the
Kafka describe oracle (tests/fixtures/kafka/quorum-describe/README.md):

    cluster <id>
    leader <id> <epoch> <high watermark>
    voter|observer <id> <directory id> <log end offset> <last fetch> <last caught up>
    endpoint <node id> <listener> <host> <port>
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType

from kjbod.controller import Controller
from kjbod.controller.quorum_control import QuorumInfo, ReplicaRow
from kjbod.image import Image, ReplicaKey
from kjbod.image.quorum import ZERO_UUID_TEXT
from kjbod.records import VoterEndpoint
from tests.controller.support import registration
from tests.controller.support import DIRS, add, advance, grown, standalone, start, static
from tests.controller.support import apply as run

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "kafka" / "quorum-describe"


def standalone_quorum() -> Image:
    return standalone()


def growing_quorum() -> Image:
    """Voters 1 and 2 (the change uncommitted, 2 lags), controller 3 an observer, brokers 4 and 5."""
    image = advance(start(advance(start(standalone(), 2)), 3))
    for broker_id in (4, 5):
        image = run(image, Controller(image).cluster.register_broker(registration(broker_id, [DIRS[4] if broker_id == 4 else "pF8N-Wl7SQ6r3M9Su_wzdw"])))
    return run(image, add(image, 2))


def static_quorum() -> Image:
    return advance(static())


def degraded_quorum() -> Image:
    """Three voters, one stopped; a new controller 4 still catching up; a replaced controller 3."""
    image = grown(3)
    image = run(image, Controller(image).quorum.stop_controller(3))
    image = advance(image, 30_000)
    image = start(image, 4, catch_up_rate=1)
    image = advance(image, 2_000)
    return start(image, 3, directory="8r7iZ2qlSQOBMT7XJSbdVQ")


SCENARIOS: dict[str, Callable[[], Image]] = {
    "standalone": standalone_quorum,
    "growing": growing_quorum,
    "static": static_quorum,
    "degraded": degraded_quorum,
}


def oracle_input(info: QuorumInfo) -> str:
    lines = [f"cluster {info.cluster_id}", f"leader {info.leader_id} {info.leader_epoch} {info.high_watermark}"]
    for kind, rows in (("voter", info.voters), ("observer", info.observers)):
        for r in rows:
            lines.append(f"{kind} {r.key.id} {r.key.directory_text} {r.log_end_offset} {r.last_fetch_ms} {r.last_caught_up_ms}")
    for node_id, endpoints in info.nodes.items():
        lines.extend(f"endpoint {node_id} {e.name} {e.host} {e.port}" for e in endpoints)
    return "\n".join(lines) + "\n"


def parse_oracle_input(text: str) -> QuorumInfo:
    """The QuorumInfo an oracle input describes (what Kafka's admin client hands the tool)."""
    fields: dict[str, object] = {}
    voters: list[ReplicaRow] = []
    observers: list[ReplicaRow] = []
    nodes: dict[int, tuple[VoterEndpoint, ...]] = {}
    for line in text.splitlines():
        kind, *values = line.split()
        if kind == "cluster":
            fields["cluster_id"] = values[0]
        elif kind == "leader":
            fields.update(leader_id=int(values[0]), leader_epoch=int(values[1]), high_watermark=int(values[2]))
        elif kind in ("voter", "observer"):
            node_id, directory, end, fetch, caught = values
            key = ReplicaKey(int(node_id), None if directory == ZERO_UUID_TEXT else directory)
            (voters if kind == "voter" else observers).append(ReplicaRow(key, int(end), 0, int(fetch), int(caught)))
        elif kind == "endpoint":
            node_id, name, host, port = values
            nodes[int(node_id)] = (*nodes.get(int(node_id), ()), VoterEndpoint(name=name, host=host, port=int(port)))
    leader_end = next(r.log_end_offset for r in voters if r.key.id == fields["leader_id"])
    return QuorumInfo(
        voters=tuple(voters), observers=tuple(observers), nodes=MappingProxyType(nodes), now_ms=0, log_end_offset=leader_end,
        kraft_version=1, static=False, voters_offset=-1, change_committed=True, **fields,  # type: ignore[arg-type]
    )


def write_inputs() -> None:
    """Write each scenario's oracle input (run from the repository root: python -m tests.tools.quorum.scenarios)."""
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for name, build in SCENARIOS.items():
        (FIXTURES / f"{name}.quorum").write_text(oracle_input(Controller(build()).quorum.describe()))


if __name__ == "__main__":
    write_inputs()
