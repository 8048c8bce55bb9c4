"""The state an operation builds its records against: `WorkingImage`.

Kafka's controller replays each record into its in-memory state as soon as an operation
produces it, and handles one request after another, each against the state the previous one
left. kjbod's operations return records instead of changing state, so an operation that builds
several records, or runs several requests (a clock step that completes many copies, a request
per broker), keeps them in a WorkingImage and builds each one against the state the records
before it leave. A PartitionChangeRecord carries whole lists (ISR, replicas, directories): built
from the state before an earlier record of the same operation, it would put back what that
record changed (issue 26: two brokers' AssignReplicasToDirs in one clock step, the second
moving the first broker's replica back to its old directory).
"""

from __future__ import annotations

from collections.abc import Iterable

from kjbod.controller.partition_change import PartitionChangeBuilder
from kjbod.image import Delta, Image, PartitionRegistration
from kjbod.records import KjbodPartitionSizeRecord, KjbodReplicaLogRecord, PartitionChangeRecord, PartitionRecord, Record

# Records that change one partition (its registration, size or replica logs) and nothing else.
_PARTITION_RECORDS = (PartitionChangeRecord, KjbodReplicaLogRecord, KjbodPartitionSizeRecord, PartitionRecord)


class WorkingImage:
    """An operation's records so far, and the state they leave over the image it started from.

    Appending costs nothing until something is read: the records are replayed into one delta
    when a read comes after them (for `partition`, only when one of them changed that partition),
    `partition` reads that delta without applying it, and `image` applies it only when the whole
    image is asked for (once per read that follows new records, not once per record). So an
    operation replays each record once, as it did when it only collected them for the commit.

    Requests that each change partitions no other request of the batch changes (a clock step's
    AlterPartitions, one per partition) may all be built against the image at one point of the
    operation instead of one image per request: `extend(records, built_at=mark)` appends them
    only if no record since `mark` changed their partitions or anything but partitions, so the
    records are exactly those the requests would make one after another, and a lost update is
    refused instead of written.
    """

    def __init__(self, image: Image) -> None:
        self._start = image
        self._image = image  # the start with the records before `_delta` applied
        self._delta: Delta | None = None
        self._records: list[Record] = []
        self._replayed = 0  # records replayed into `_image` or `_delta`
        # How many records there were once the last record changing a partition, or anything
        # but partitions (`_other`), was appended: what `extend(built_at=)` checks.
        self._changed: dict[tuple[str, int], int] = {}
        self._other = 0

    @property
    def start(self) -> Image:
        """The image the operation started from."""
        return self._start

    @property
    def records(self) -> tuple[Record, ...]:
        return tuple(self._records)

    def records_since(self, mark: int) -> tuple[Record, ...]:
        """The records appended after the first `mark` (`len(work)` then)."""
        return tuple(self._records[mark:])

    def __len__(self) -> int:
        return len(self._records)

    @property
    def next_offset(self) -> int:
        """The offset the next record appended will have once the operation is committed."""
        return self._start.next_offset + len(self._records)

    def append(self, record: Record) -> None:
        self._records.append(record)
        if isinstance(record, _PARTITION_RECORDS):
            self._changed[(record.topic_id, record.partition_id)] = len(self._records)
        else:
            self._other = len(self._records)

    def extend(self, records: Iterable[Record], *, built_at: int | None = None) -> None:
        """Append `records`; with `built_at`, records built against the image as it was with
        `built_at` records (`len(work)` then), refused if a record since changed what they change."""
        records = list(records)
        if built_at is not None:
            for record in records:
                stale = self._other > built_at or (
                    isinstance(record, _PARTITION_RECORDS) and self._changed.get((record.topic_id, record.partition_id), 0) > built_at
                )
                if stale:
                    raise RuntimeError(
                        f"{type(record).__name__} of {getattr(record, 'topic_id', '')}:{getattr(record, 'partition_id', '')} was built "
                        "from a state that a later record of the same operation changed (a kjbod bug)"
                    )
        for record in records:
            self.append(record)

    def _replay(self) -> Delta | None:
        """Replay the records appended since the last read; the delta holding them, if any."""
        if self._replayed < len(self._records):
            if self._delta is None:
                self._delta = Delta(self._image)
            offset = self._start.next_offset + self._replayed
            for record in self._records[self._replayed :]:
                self._delta.replay(record, offset)  # a record that does not apply is a kjbod bug: raised here
                offset += 1
            self._replayed = len(self._records)
        return self._delta

    @property
    def image(self) -> Image:
        """The image with every record appended so far."""
        if self._replay() is not None:
            self._image = self._delta.apply()  # type: ignore[union-attr]
            self._delta = None
        return self._image

    def partition(self, topic_id: str, partition_id: int) -> PartitionRegistration | None:
        """One partition with every record appended so far, without applying them to the image
        (and without replaying them while none of them changed this partition)."""
        if self._other > self._replayed or self._changed.get((topic_id, partition_id), 0) > self._replayed:
            self._replay()
        if self._delta is not None:
            return self._delta.partition(topic_id, partition_id)
        return self._image.topics.partition(topic_id, partition_id)

    def build(self, builder: PartitionChangeBuilder, *, append: bool = True) -> PartitionChangeRecord | None:
        """Append the builder's change of its partition, if it makes one (with `append=False`
        the caller appends it, or decides not to). The builder must start from the partition as
        this operation's records leave it: one made before a later record changed the partition
        would undo that record's change, so it is refused."""
        current = self.partition(builder.topic_id, builder.partition_id)
        if current != builder.partition:
            raise RuntimeError(
                f"The change of partition {builder.topic_id}:{builder.partition_id} was built from a state that an "
                "earlier record of the same operation changed (a kjbod bug)"
            )
        record = builder.build()
        if record is not None and append:
            self.append(record)
        return record


def working_image(image: Image, work: WorkingImage | None) -> WorkingImage:
    """Where a request builds its records: a new WorkingImage over `image`, or, for a request
    handled as the next one of a larger operation, that operation's `work`, whose state the
    request's control manager was made from (`image` is `work.image`): the request appends to
    it, so its records are replayed once, not once for its reply and again for the next request."""
    if work is None:
        return WorkingImage(image)
    if work.image is not image:
        raise RuntimeError("A request of a larger operation must be made from that operation's state (a kjbod bug)")
    return work
