"""The repair's directory swaps score a broker's directories twice: in numpy for a batch of
candidate swaps (`_outside_band`), in plain Python for each swap after the first taken in one
scoring (`_outside_band_one`). Both must measure the same thing, or a swap taken on the second
would not save what the first promised."""

import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kjbod.common.kafka_uuid import DirectoryId, Uuid
from kjbod.controller import Controller
from kjbod.controller.cluster_control import BrokerRegistrationRequest
from kjbod.controller.replication_control import CreateTopicRequest, DirectoryAssignment, HeartbeatRequest
from kjbod.image import EMPTY_IMAGE, Image, replay_all
from kjbod.planner import core
from kjbod.planner.core import Goal, PlanRequest
from kjbod.planner.repair import SWAP_ROUNDS, Repair, _outside_band, _outside_band_one
from kjbod.planner.tables import ClusterTables, build_tables
from kjbod.records import FeatureLevelRecord, KjbodLogDir, KjbodPartitionSizeRecord
from tests.planner.clusters import GB

directories = st.integers(min_value=2, max_value=12).flatmap(
    lambda n: st.tuples(
        st.lists(st.floats(min_value=0, max_value=1e13), min_size=n, max_size=n),
        st.lists(st.floats(min_value=1e9, max_value=2e13), min_size=n, max_size=n),
        st.lists(st.floats(min_value=0, max_value=2e13), min_size=n, max_size=n),
    )
)


@given(directories, st.floats(min_value=0.0, max_value=0.5))
def test_outside_band_of_one_broker_matches_the_batch(dirs, band):
    usage, cap, limit = dirs
    cap_total = sum(cap)
    batch = _outside_band(np.array([usage]), np.array(cap), np.array(limit), band, cap_total)[0]
    one = _outside_band_one(usage, cap, limit, band, cap_total)
    assert one == pytest.approx(batch, rel=1e-9, abs=1.0)


# Directory swaps pinned on a cluster small enough to work out by hand -----------------------

HUNDRED = 100 * GB


def _two_directory_cluster(on_first: int, on_second: int, sizes: list[int], capacity: int = 10) -> Image:
    """Three brokers in three racks, two directories of `capacity` x 100 GB each. Partitions of RF 2 on brokers
    1 and 3; broker 1 keeps the first `on_first` partitions in its first directory and the next
    `on_second` in its second (broker 3 keeps them all in its first). Sizes in units of 100 GB."""
    rng = random.Random(7)
    image = replay_all(EMPTY_IMAGE, [FeatureLevelRecord(name="metadata.version", feature_level=30)])
    dirs: dict[int, list[str]] = {}
    for b in (1, 2, 3):
        dirs[b] = [DirectoryId.random(rng) for _ in range(2)]
        log_dirs = tuple(KjbodLogDir(directory_id=d, path=f"/data/b{b}/d{i}", capacity_bytes=capacity * HUNDRED) for i, d in enumerate(dirs[b]))
        request = BrokerRegistrationRequest(broker_id=b, incarnation_id=str(Uuid(b, 1)), log_dirs=log_dirs, rack=f"r{b}")
        image = replay_all(image, Controller(image).cluster.register_broker(request).records)
        image = replay_all(image, Controller(image).replication.heartbeat(HeartbeatRequest(b)).records)
    count = on_first + on_second
    image = replay_all(image, Controller(image).replication.create_topic(CreateTopicRequest("t", assignment=((1, 3),) * count, seed=1)).records)
    topic = image.topics.by_name["t"].topic_id
    image = replay_all(image, [KjbodPartitionSizeRecord(topic_id=topic, partition_id=p, size_bytes=sizes[p] * HUNDRED) for p in range(count)])
    first = [DirectoryAssignment("t", p, dirs[1][0 if p < on_first else 1]) for p in range(count)]
    image = replay_all(image, Controller(image).replication.assign_replicas_to_dirs(1, first).records)
    return replay_all(image, Controller(image).replication.assign_replicas_to_dirs(3, [DirectoryAssignment("t", p, dirs[3][0]) for p in range(count)]).records)


def _repair_after(image: Image, leaving: list[int]) -> tuple[ClusterTables, Repair]:
    """The repair pass of `balance` on `image`, as if the rounds had sent broker 1's replicas of
    the `leaving` partitions to broker 2."""
    t = build_tables(image)
    request = PlanRequest(Goal.BALANCE)
    setup = core._setup(t, request)
    placement = core._Placement(t, setup, request.capacity_threshold)
    targets = core._targets(t, setup, request, placement)
    for p in leaving:
        rep = int(t.part_offsets[p])  # broker 1's replica (first in the list)
        placement.move(rep, 1, float(t.rep_size[rep]))
    rack_limit = lambda rf: core.rack_limit(rf, request.rack_mode, setup.racks_available)  # noqa: E731
    return t, Repair(t, request, setup, placement, targets, core.BYTE_TOLERANCE, rack_limit)


def _moved_and_directory_work(t: ClusterTables, repair: Repair) -> tuple[float, float]:
    """Bytes moved between brokers, and what broker 1 would then move between its directories
    (half of what is outside their band, the directory step's work), in GB."""
    placement = repair.placement
    moved = float(t.rep_size[placement.broker != t.rep_broker].sum())
    dirs = np.flatnonzero(t.dir_broker == 0)
    usage = np.array([placement.dir_loads[d] for d in dirs])
    cap = t.dir_capacity[dirs].astype(np.float64)
    limit = np.array([placement.dir_limit[d] for d in dirs])
    work = _outside_band(usage[None, :], cap, limit, repair.request.disk_band, float(cap.sum()))[0] / 2
    return moved / GB, work / GB


def test_a_directory_swap_sends_a_replica_of_the_full_directory_instead() -> None:
    # Broker 1: 600 GB in its first directory, 300 in its second; the rounds sent one of the
    # second's replicas away (600 / 200: 40% mean, 60% and 20%). Swapping it for one of the
    # first's (500 / 300) moves the same bytes between brokers and leaves broker 1's directories
    # 100 GB less to move between them.
    t, repair = _repair_after(_two_directory_cluster(6, 3, [1] * 9), leaving=[6])
    assert _moved_and_directory_work(t, repair) == pytest.approx((100, 150))
    repair._directory_swaps(SWAP_ROUNDS)
    assert _moved_and_directory_work(t, repair) == pytest.approx((100, 50))
    placement = repair.placement
    assert placement.broker[int(t.part_offsets[6])] == 0  # back on broker 1 (index 0)
    assert int(np.sum(placement.broker[t.part_offsets[:6]] == 1)) == 1  # one of the first directory's went instead
    assert placement.counts == [8, 1, 9]


def test_directory_swaps_take_several_of_one_broker_in_one_round() -> None:
    # Two leavers from the emptier directory (600 / 200 again): both swap for replicas of the
    # fuller one, and the directories end even (400 / 400, nothing left to move between them).
    t, repair = _repair_after(_two_directory_cluster(6, 4, [1] * 10), leaving=[6, 7])
    assert _moved_and_directory_work(t, repair) == pytest.approx((200, 150))
    repair._directory_swaps(SWAP_ROUNDS)
    assert _moved_and_directory_work(t, repair) == pytest.approx((200, 0))


def test_two_swaps_whose_sizes_cancel_out_are_taken_together() -> None:
    # Broker 1 keeps 3+3+1+1+3 in its first directory (units of 100 GB) and 2+2+1 in its
    # second; the rounds sent both 2s to broker 2. Brokers 1 and 2 sit at the bottom of their
    # byte bands: a swap of a 2 for a 3 takes broker 1 below its band, one for a 1 broker 2,
    # and no other size is there. The 3 and a 1 for both 2s leaves both where they were.
    t, repair = _repair_after(_two_directory_cluster(5, 3, [3, 3, 1, 1, 3, 2, 2, 1], capacity=20), leaving=[5, 6])
    placement = repair.placement
    for b in (0, 1):  # both at the bottom of their byte band
        repair.byte_low[b] = repair.byte_low_l[b] = placement.loads[b]
    loads = list(placement.loads)
    assert _moved_and_directory_work(t, repair) == pytest.approx((400, 400))
    repair._directory_swaps(SWAP_ROUNDS)
    assert _moved_and_directory_work(t, repair) == pytest.approx((400, 0))
    assert placement.loads == pytest.approx(loads)
    on_broker_2 = sorted(int(t.rep_size[rep]) // HUNDRED for rep in np.flatnonzero(placement.broker == 1))
    assert on_broker_2 == [1, 3]
