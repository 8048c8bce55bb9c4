"""AdminUtils.assignReplicasToBrokers (reference: kafka-reassign-and-log-dirs.md §2): the
replica assignment `kafka-reassign-partitions --generate` proposes, rack-aware (KIP-36) or not,
drawn from Java's Random so that a seed gives Kafka's exact result."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kjbod.common.java import JavaRandom, java_string_key
from kjbod.errors import UserError


@dataclass(frozen=True)
class BrokerMetadata:
    id: int
    rack: str | None = None


class AssignmentError(UserError):
    """AdminUtils' InvalidPartitions/InvalidReplicationFactor/AdminOperation exceptions."""

    def __init__(self, message: str) -> None:
        super().__init__(f"Error: {message}")
        self.kafka_message = message


def _replica_index(first: int, shift: int, j: int, n: int) -> int:
    return (first + 1 + (shift + j) % (n - 1)) % n


def rack_alternated_brokers(racks: Mapping[int, str]) -> list[int]:
    """getRackAlternatedBrokerList: round-robin over the racks (sorted), ids sorted within each."""
    by_rack: dict[str, list[int]] = {}
    for broker, rack in racks.items():
        by_rack.setdefault(rack, []).append(broker)
    names = sorted(by_rack, key=java_string_key)
    queues = {rack: sorted(by_rack[rack]) for rack in names}
    result: list[int] = []
    index = 0
    while len(result) < len(racks):
        queue = queues[names[index]]
        if queue:
            result.append(queue.pop(0))
        index = (index + 1) % len(names)
    return result


def assign_replicas_to_brokers(
    brokers: Sequence[BrokerMetadata],
    partitions: int,
    replication_factor: int,
    *,
    fixed_start_index: int = -1,
    start_partition_id: int = -1,
    rng: JavaRandom | None = None,
    fixed_shift: int | None = None,
) -> dict[int, list[int]]:
    """AdminUtils.assignReplicasToBrokers. A negative `fixed_start_index` draws the start
    index and then the shift from `rng` (Kafka's static Random); otherwise both are
    `fixed_start_index`, unless `fixed_shift` gives the shift (for tests)."""
    if partitions <= 0:
        raise AssignmentError("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise AssignmentError("Replication factor must be larger than 0.")
    if replication_factor > len(brokers):
        raise AssignmentError(f"Replication factor: {replication_factor} larger than available brokers: {len(brokers)}.")
    if all(b.rack is None for b in brokers):
        ordered = [b.id for b in brokers]
        racks: dict[int, str] = {}
    else:
        if any(b.rack is None for b in brokers):
            raise AssignmentError("Not all brokers have rack information for replica rack aware assignment.")
        racks = {b.id: b.rack for b in brokers}  # type: ignore[misc]
        ordered = rack_alternated_brokers(racks)
    n = len(ordered)

    def draw() -> int:
        if fixed_start_index >= 0:
            return fixed_start_index
        if rng is None:
            raise ValueError("a random start needs rng")
        return rng.next_int(n)

    start_index = draw()
    shift = draw() if fixed_shift is None else fixed_shift
    rack_count = len(set(racks.values()))
    result: dict[int, list[int]] = {}
    partition_id = max(0, start_partition_id)
    for _ in range(partitions):
        if partition_id > 0 and partition_id % n == 0:
            shift += 1
        first = (partition_id + start_index) % n
        replicas = [ordered[first]]
        if not racks:
            replicas.extend(ordered[_replica_index(first, shift, j, n)] for j in range(replication_factor - 1))
        else:
            used_racks = {racks[ordered[first]]}
            used_brokers = {ordered[first]}
            k = 0
            for _ in range(replication_factor - 1):
                while True:
                    broker = ordered[_replica_index(first, shift * rack_count, k, n)]
                    rack = racks[broker]
                    k += 1
                    if (rack not in used_racks or len(used_racks) == rack_count) and (
                        broker not in used_brokers or len(used_brokers) == n
                    ):
                        replicas.append(broker)
                        used_racks.add(rack)
                        used_brokers.add(broker)
                        break
        result[partition_id] = replicas
        partition_id += 1
    return result
