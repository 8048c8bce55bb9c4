"""The copy model's engine as it was before it kept rates incrementally (kjbod 0.1.0): every
class's rate recomputed, and every class's progress advanced, at every step. Kept verbatim as
the oracle of tests/simulation/test_copy_model.py: the incremental engine must give the same runs."""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction

from kjbod.common.kafka_configs import FOLLOWER_THROTTLED_RATE, LEADER_THROTTLED_RATE
from kjbod.simulation import copy_model
from kjbod.simulation.copy_model import (
    ClassKey,
    CopyKey,
    CopySettings,
    PartitionKey,
    _CopyInfo,
    _min_share,
    _partition_copies,
)
from kjbod.image import Image


@dataclass
class _Class:
    """Copies that share every rate input (the same links, throttles or local disk) move at
    the same rate, so they share one progress counter: a member completes when the counter
    reaches its target. Progress is floored per step, exactly as per-copy bytes would be.
    The rate is kept as an exact fraction, numerator over denominator (bytes per second)."""

    progress: int = 0
    members: int = 0
    rate_num: int = 0
    rate_den: int = 1
    heap: list[tuple[int, CopyKey]] = field(default_factory=list)

    @property
    def rate(self) -> Fraction:
        return Fraction(self.rate_num, self.rate_den)


class ReferenceEngine:
    """The copies of a run, kept up to date incrementally: a completion re-reads only its
    partition, and a step costs one update per class rather than per copy."""

    def __init__(self, image: Image, partitions: Iterable[PartitionKey], progress: dict[CopyKey, int], failed: dict[CopyKey, str]) -> None:
        self.image = image
        self.settings = CopySettings(image)
        self.progress = progress
        self.failed = failed
        self.infos: dict[CopyKey, _CopyInfo] = {}
        self.by_partition: dict[PartitionKey, list[CopyKey]] = {}
        self.classes: dict[ClassKey, _Class] = {}
        self.targets: dict[CopyKey, int] = {}
        for key in partitions:
            self.load(key)

    # Membership ----------------------------------------------------------------------------

    def load(self, key: PartitionKey) -> None:
        """(Re)read one partition's copies from the image, keeping their progress."""
        for copy_key in self.by_partition.pop(key, []):
            self._drop(copy_key)
        infos = _partition_copies(self.image, key, self.settings, self.progress, self.failed)
        self.by_partition[key] = [info.key for info in infos]
        for info in infos:
            self.infos[info.key] = info
            if info.blocked is None:
                cls = self.classes.setdefault(info.rate_class, _Class())
                target = cls.progress + info.total - info.copied
                heapq.heappush(cls.heap, (target, info.key))
                cls.members += 1
                self.targets[info.key] = target

    def _drop(self, copy_key: CopyKey) -> None:
        info = self.infos.pop(copy_key)
        if copy_key in self.targets:
            self.progress[copy_key] = self.copied(info, self.targets.pop(copy_key))
            self.classes[info.rate_class].members -= 1  # its heap entry goes stale

    copied = copy_model._Engine.copied  # unchanged: reads `targets` and each class's `progress`

    # Time ------------------------------------------------------------------------------------

    def due(self) -> list[_CopyInfo]:
        """Copies that have caught up (their class reached their target); they leave the run."""
        found = []
        for cls in self.classes.values():
            while cls.heap and cls.heap[0][0] <= cls.progress:
                target, copy_key = heapq.heappop(cls.heap)
                if self.targets.get(copy_key) != target:
                    continue  # stale: dropped or re-added
                del self.targets[copy_key]
                cls.members -= 1
                info = self.infos[copy_key]
                self.progress[copy_key] = info.total
                found.append(info)
        return sorted(found, key=lambda i: (i.topic, i.partition, i.broker, i.future))

    def update_rates(self) -> None:
        """Each link, throttle and disk is shared equally by the copies using it (§ module doc)."""
        inbound: Counter = Counter()
        outbound: Counter = Counter()
        throttled_in: Counter = Counter()
        throttled_out: Counter = Counter()
        local: Counter = Counter()
        for key, cls in self.classes.items():
            if not cls.members:
                continue
            if key[0] == "future":
                local[key[1]] += cls.members
                continue
            _, replica, leader, follower_throttled, leader_throttled = key
            inbound[replica] += cls.members
            outbound[leader] += cls.members
            if follower_throttled:
                throttled_in[replica] += cls.members
            if leader_throttled:
                throttled_out[leader] += cls.members
        settings = self.settings
        for key, cls in self.classes.items():
            if not cls.members:
                cls.rate_num, cls.rate_den = 0, 1
            elif key[0] == "future":
                cls.rate_num, cls.rate_den = settings.local(key[1]), local[key[1]]
            else:
                _, replica, leader, follower_throttled, leader_throttled = key
                shares = [(settings.link(replica), inbound[replica]), (settings.link(leader), outbound[leader])]
                if follower_throttled:
                    shares.append((settings.rate(replica, FOLLOWER_THROTTLED_RATE), throttled_in[replica]))  # type: ignore[arg-type]
                if leader_throttled:
                    shares.append((settings.rate(leader, LEADER_THROTTLED_RATE), throttled_out[leader]))  # type: ignore[arg-type]
                cls.rate_num, cls.rate_den = _min_share(shares)

    def next_completion_ms(self) -> int | None:
        """Milliseconds until the next copy completes at the current rates (None: nothing moves)."""
        best = None
        for cls in self.classes.values():
            if not cls.members or cls.rate_num == 0:
                continue
            while cls.heap and self.targets.get(cls.heap[0][1]) != cls.heap[0][0]:
                heapq.heappop(cls.heap)
            remaining = cls.heap[0][0] - cls.progress
            wait = -(-(remaining * 1000 * cls.rate_den) // cls.rate_num)  # ceil
            best = wait if best is None else min(best, wait)
        return best

    def advance(self, step_ms: int) -> None:
        for cls in self.classes.values():
            if cls.members and cls.rate_num:
                cls.progress += (cls.rate_num * step_ms) // (cls.rate_den * 1000)

    # Views: unchanged by the incremental engine, so shared with it (they read only `targets`,
    # `infos`, `by_partition` and each class's `rate`).

    sync = copy_model._Engine.sync
    copies = copy_model._Engine.copies
