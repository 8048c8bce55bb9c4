"""Kafka's StripedReplicaPlacer (reference: reassign §4, controller §9), draw for draw.

New topics get their replicas here: racks are striped (the starting rack moves by one per
partition), the leader is always unfenced, and fenced brokers are used only when a rack's
unfenced brokers are used up. With the same seed, kjbod places exactly as Kafka does.
"""

from __future__ import annotations

from dataclasses import dataclass

from kjbod.common.java import JavaRandom, hashmap_order, shuffle, string_hash


class PlacementError(ValueError):
    """Kafka's InvalidReplicationFactorException from the placer."""


# StripedReplicaPlacer's texts since KIP-1066 (4.3.1 metadata/placement/StripedReplicaPlacer.java:
# 405-416, the same in 4.4.0): the usable brokers leave out those whose directories are all cordoned.
ALL_FENCED = "All brokers are currently fenced, or have all their log directories cordoned."


def too_few_brokers(replication_factor: int, total: int) -> str:
    return (
        f"The target replication factor of {replication_factor} cannot be reached because only "
        f"{total} broker(s) are registered or some brokers have all their log directories cordoned."
    )


@dataclass(frozen=True)
class UsableBroker:
    id: int
    rack: str | None
    fenced: bool


class _BrokerList:
    def __init__(self) -> None:
        self.brokers: list[int] = []
        self.index = 0
        self.offset = 0
        self.epoch = 0

    def initialize(self, rng: JavaRandom) -> None:
        if self.brokers:
            self.brokers.sort()
            self.offset = rng.next_int(len(self.brokers))

    def next(self, epoch: int) -> int:
        if not self.brokers:
            return -1
        if epoch != self.epoch:
            self.epoch = epoch
            self.index = 0
            self.offset = (self.offset + 1) % len(self.brokers)
        if self.index >= len(self.brokers):
            return -1
        broker = self.brokers[(self.index + self.offset) % len(self.brokers)]
        self.index += 1
        return broker


class _Rack:
    def __init__(self) -> None:
        self.fenced = _BrokerList()
        self.unfenced = _BrokerList()

    def initialize(self, rng: JavaRandom) -> None:
        self.fenced.initialize(rng)
        self.unfenced.initialize(rng)

    def shuffle(self, rng: JavaRandom) -> None:
        shuffle(self.fenced.brokers, rng)
        shuffle(self.unfenced.brokers, rng)

    def next_unfenced(self, epoch: int) -> int:
        return self.unfenced.next(epoch)

    def next(self, epoch: int) -> int:
        broker = self.unfenced.next(epoch)
        return broker if broker >= 0 else self.fenced.next(epoch)


def _rack_hash(rack: str | None) -> int:
    return 0 if rack is None else string_hash(rack)


class _RackList:
    def __init__(self, rng: JavaRandom, brokers: list[UsableBroker]) -> None:
        self.rng = rng
        self.racks: dict[str | None, _Rack] = {}
        self.num_unfenced = 0
        self.num_total = 0
        for broker in brokers:
            rack = self.racks.setdefault(broker.rack, _Rack())
            (rack.fenced if broker.fenced else rack.unfenced).brokers.append(broker.id)
            self.num_total += 1
            self.num_unfenced += 0 if broker.fenced else 1
        self.hash_order = hashmap_order(self.racks, _rack_hash)
        for name in self.hash_order:
            self.racks[name].initialize(rng)
        # Kafka sorts no-rack first, then by name (OptionalStringComparator).
        self.rack_names = sorted(self.racks, key=lambda name: (name is not None, name or ""))
        self.epoch = 0
        self.offset = rng.next_int(len(self.rack_names)) if self.rack_names else 0

    def place(self, replication_factor: int) -> list[int]:
        if replication_factor <= 0:
            raise PlacementError(f"Invalid replication factor {replication_factor}: the replication factor must be positive.")
        if replication_factor > self.num_total:
            raise PlacementError(too_few_brokers(replication_factor, self.num_total))
        if self.num_unfenced == 0:
            raise PlacementError(ALL_FENCED)
        if self.epoch == self.num_unfenced and self.num_unfenced > 1:
            shuffle(self.rack_names, self.rng)
            for name in self.hash_order:
                self.racks[name].shuffle(self.rng)
            self.epoch = 0
        if self.offset == len(self.rack_names):
            self.offset = 0
        count = len(self.rack_names)
        placement: list[int] = []
        first_rack_index = self.offset
        while True:
            broker = self.racks[self.rack_names[first_rack_index]].next_unfenced(self.epoch)
            if broker >= 0:
                placement.append(broker)
                break
            first_rack_index = (first_rack_index + 1) % count
        rack_index = self.offset
        while len(placement) < replication_factor:
            broker = -1
            while broker < 0:  # the leader's rack is skipped once
                if rack_index == first_rack_index:
                    first_rack_index = -1
                else:
                    broker = self.racks[self.rack_names[rack_index]].next(self.epoch)
                rack_index = (rack_index + 1) % count
            placement.append(broker)
        self.epoch += 1
        self.offset += 1
        return placement


def place(brokers: list[UsableBroker], partitions: int, replication_factor: int, rng: JavaRandom) -> list[list[int]]:
    """`StripedReplicaPlacer.place`: one replica list per partition."""
    if replication_factor <= 0:
        raise PlacementError(f"Invalid replication factor {replication_factor}: the replication factor must be positive.")
    if not any(not broker.fenced for broker in brokers):
        raise PlacementError(ALL_FENCED)
    if replication_factor > len(brokers):
        raise PlacementError(too_few_brokers(replication_factor, len(brokers)))
    racks = _RackList(rng, brokers)
    return [racks.place(replication_factor) for _ in range(partitions)]
