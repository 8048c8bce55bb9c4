"""`reassign plan --explain`: the exact lines on tiny clusters for each kind of reason (a goal a
move serves, a goal not reached and what stands in the way), and on any small cluster and goal,
one line per moved replica of the plan file whose numbers are the report's."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kjbod.errors import UserError
from kjbod.planner.core import Goal, PlanRequest, plan
from kjbod.planner.engine import LocalEngine
from kjbod.planner.explain import GOALS, OBSTACLES
from kjbod.planner.report import PlanReport, report
from kjbod.planner.tables import ClusterTables
from tests.planner.explain_clusters import tables
from tests.planner.rules import hard_rule_violations
from tests.planner.strategies import clusters, requests


def explained_report(t: ClusterTables, request: PlanRequest) -> PlanReport:
    result = plan(t, request, LocalEngine())
    assert hard_rule_violations(t, result) == []
    return report(result, 0.0, "local", explain=True)


def explained(t: ClusterTables, request: PlanRequest) -> list[str]:
    explanation = explained_report(t, request).explanation
    assert explanation is not None
    return b"".join(explanation.chunks()).decode().splitlines()


def test_remove() -> None:
    """Removing broker 3 moves its two replicas to the brokers under their replica target (each of 1 and 2 ends at 2)."""
    t = tables({1: (None, [100]), 2: (None, [100]), 3: (None, [100])}, [(10, [(1, 0), (3, 0)]), (20, [(2, 0), (3, 0)])])
    assert explained(t, PlanRequest(Goal.REMOVE_BROKERS, brokers=(3,))) == [
        '{"topic":"t","partition":0,"bytes":10000000000,"from":{"broker":3,"dir":"/b3/d0"},"to":{"broker":2,"dir":"/b2/d0"},"goal":{"kind":"remove-brokers","broker":3,"measure":"replicas","before":2,"after":0,"target":0},"broker":{"why":"under-replica-target","replicas":[1,2,2],"bytes":[20000000000,30000000000,30000000000]},"dir":{"why":"least-used-with-room","usagePercent":[20,30]}}',
        '{"topic":"t","partition":1,"bytes":20000000000,"from":{"broker":3,"dir":"/b3/d0"},"to":{"broker":1,"dir":"/b1/d0"},"goal":{"kind":"remove-brokers","broker":3,"measure":"replicas","before":2,"after":0,"target":0},"broker":{"why":"under-replica-target","replicas":[1,2,2],"bytes":[10000000000,30000000000,30000000000]},"dir":{"why":"least-used-with-room","usagePercent":[10,30]}}',
    ]


def test_drain() -> None:
    """Draining /b1/d0 moves both of its replicas to the broker's other directory."""
    t = tables({1: (None, [100, 100])}, [(10, [(1, 0)]), (20, [(1, 0)])])
    assert explained(t, PlanRequest(Goal.DRAIN_DIRS, dirs=((1, "/b1/d0"),))) == [
        '{"topic":"t","partition":0,"bytes":10000000000,"from":{"broker":1,"dir":"/b1/d0"},"to":{"broker":1,"dir":"/b1/d1"},"goal":{"kind":"drain-dirs","broker":1,"dir":"/b1/d0","measure":"bytes","before":30000000000,"after":0,"target":0},"broker":null,"dir":{"why":"least-used-with-room","usagePercent":[0,30]}}',
        '{"topic":"t","partition":1,"bytes":20000000000,"from":{"broker":1,"dir":"/b1/d0"},"to":{"broker":1,"dir":"/b1/d1"},"goal":{"kind":"drain-dirs","broker":1,"dir":"/b1/d0","measure":"bytes","before":30000000000,"after":0,"target":0},"broker":null,"dir":{"why":"least-used-with-room","usagePercent":[0,30]}}',
    ]


def test_rack() -> None:
    """Partition 0 has both replicas in rack r1: balance moves the later one to r2, to broker 4 (under its target)."""
    t = tables({1: ("r1", [100]), 2: ("r1", [100]), 3: ("r2", [100]), 4: ("r2", [100])}, [(10, [(1, 0), (2, 0)]), (10, [(3, 0), (1, 0)]), (10, [(4, 0), (2, 0)]), (10, [(3, 0), (2, 0)])])
    assert explained(t, PlanRequest(Goal.BALANCE)) == [
        '{"topic":"t","partition":0,"bytes":10000000000,"from":{"broker":2,"dir":"/b2/d0"},"to":{"broker":4,"dir":"/b4/d0"},"goal":{"kind":"rack-rule","topic":"t","partition":0,"rack":"r1","measure":"replicasInRack","before":2,"after":1,"target":1},"broker":{"why":"under-replica-target","replicas":[1,2,2],"bytes":[10000000000,20000000000,20000000000]},"dir":{"why":"least-used-with-room","usagePercent":[10,20]}}',
    ]


def test_a_refined_move_within_its_rack_serves_the_count_band_not_the_rack_rule() -> None:
    """Partition 2 has both replicas in rack r0, and r1's only broker (3) is fenced: no move can
    mend the rack rule. The exact refinement moves its replica from broker 1 (2 replicas, target
    1) to broker 2 (none), within r0: for the count band, not the rack rule (2 in r0 before and
    after)."""
    t = tables(
        {1: ("r0", [20, 20]), 2: ("r0", [20, 20]), 3: ("r1", [20, 20]), 4: ("r0", [20, 20])},
        [(0, [(3, 0)]), (1, [(1, 0), (3, 0)]), (0, [(4, 0), (1, 0)])],
        fenced=[3],
    )
    moves = [json.loads(line) for line in explained(t, PlanRequest(Goal.BALANCE, capacity_threshold=0.5)) if '"from"' in line]
    across = [move for move in moves if move["from"]["broker"] != move["to"]["broker"]]
    assert [(move["partition"], move["from"]["broker"], move["to"]["broker"]) for move in across] == [(2, 1, 2)]
    assert across[0]["goal"] == {"kind": "replica-count", "broker": 1, "measure": "replicas", "before": 2, "after": 1, "target": 1, "band": [1, 1]}
    assert across[0]["broker"]["why"] == "exact-refinement"


def test_bytes() -> None:
    """Counts are even but bytes are not: broker 1 gives its 40 GB replica to broker 2 (under its byte target), which gives a 1 GB one back to even the counts, and broker 3 gives its 50 GB replica to broker 4 for a 1 GB one (the repair pass's exchange); 40-50 GB replicas are wider than the 5% band, so every broker stays 5 GB from its target."""
    t = tables({1: (None, [1000]), 2: (None, [1000]), 3: (None, [1000]), 4: (None, [1000])}, [(50, [(1, 0), (3, 0)]), (40, [(1, 0), (3, 0)]), (1, [(2, 0), (4, 0)]), (1, [(2, 0), (4, 0)])])
    assert explained(t, PlanRequest(Goal.BALANCE)) == [
        '{"topic":"t","partition":0,"bytes":50000000000,"from":{"broker":3,"dir":"/b3/d0"},"to":{"broker":4,"dir":"/b4/d0"},"goal":{"kind":"bytes","broker":3,"measure":"bytes","before":90000000000,"after":41000000000,"target":46000000000,"band":[43700000000,48300000000]},"broker":{"why":"under-byte-target","replicas":[2,2,2],"bytes":[2000000000,51000000000,46000000000]},"dir":{"why":"least-used-with-room","usagePercent":[0.2,5.1]}}',
        '{"topic":"t","partition":1,"bytes":40000000000,"from":{"broker":1,"dir":"/b1/d0"},"to":{"broker":2,"dir":"/b2/d0"},"goal":{"kind":"bytes","broker":1,"measure":"bytes","before":90000000000,"after":51000000000,"target":46000000000,"band":[43700000000,48300000000]},"broker":{"why":"under-byte-target","replicas":[2,2,2],"bytes":[2000000000,41000000000,46000000000]},"dir":{"why":"least-used-with-room","usagePercent":[0.2,4.1]}}',
        '{"topic":"t","partition":2,"bytes":1000000000,"from":{"broker":4,"dir":"/b4/d0"},"to":{"broker":3,"dir":"/b3/d0"},"goal":{"kind":"evenness","broker":4,"measure":"replicas","before":2,"after":2,"target":2,"band":[2,2]},"broker":{"why":"best-allowed","replicas":[2,2,2],"bytes":[90000000000,41000000000,46000000000]},"dir":{"why":"least-used-with-room","usagePercent":[9,4.1]}}',
        '{"topic":"t","partition":3,"bytes":1000000000,"from":{"broker":2,"dir":"/b2/d0"},"to":{"broker":1,"dir":"/b1/d0"},"goal":{"kind":"evenness","broker":2,"measure":"replicas","before":2,"after":2,"target":2,"band":[2,2]},"broker":{"why":"best-allowed","replicas":[2,2,2],"bytes":[90000000000,51000000000,46000000000]},"dir":{"why":"least-used-with-room","usagePercent":[9,5.1]}}',
        '{"kind":"unreached","goal":"bytes","broker":1,"measure":"bytes","before":90000000000,"after":51000000000,"target":46000000000,"band":[43700000000,48300000000],"obstacle":"min-insync","why":"each replica that could still move would leave its partition short of min.insync.replicas while it moves"}',
        '{"kind":"unreached","goal":"bytes","broker":2,"measure":"bytes","before":2000000000,"after":41000000000,"target":46000000000,"band":[43700000000,48300000000],"obstacle":"min-insync","why":"each replica that could still move would leave its partition short of min.insync.replicas while it moves"}',
        '{"kind":"unreached","goal":"bytes","broker":3,"measure":"bytes","before":90000000000,"after":41000000000,"target":46000000000,"band":[43700000000,48300000000],"obstacle":"min-insync","why":"each replica that could still move would leave its partition short of min.insync.replicas while it moves"}',
        '{"kind":"unreached","goal":"bytes","broker":4,"measure":"bytes","before":2000000000,"after":51000000000,"target":46000000000,"band":[43700000000,48300000000],"obstacle":"min-insync","why":"each replica that could still move would leave its partition short of min.insync.replicas while it moves"}',
    ]


def test_dirband() -> None:
    """One broker, 30% and 0% used: a replica moves to the empty directory (band 10-20% around the 15% mean)."""
    t = tables({1: (None, [100, 100])}, [(10, [(1, 0)]), (10, [(1, 0)]), (10, [(1, 0)])])
    assert explained(t, PlanRequest(Goal.REBALANCE_DISKS)) == [
        '{"topic":"t","partition":0,"bytes":10000000000,"from":{"broker":1,"dir":"/b1/d0"},"to":{"broker":1,"dir":"/b1/d1"},"goal":{"kind":"directory-band","broker":1,"dir":"/b1/d0","measure":"usagePercent","before":30,"after":20,"target":15,"band":[10,20]},"broker":null,"dir":{"why":"most-under-mean-with-room","usagePercent":[0,10]}}',
    ]


def test_threshold() -> None:
    """A directory at 85% (past the 80% threshold, the band itself 50 points wide) gives a replica to the other."""
    t = tables({1: (None, [100, 100])}, [(45, [(1, 0)]), (40, [(1, 0)])])
    assert explained(t, PlanRequest(Goal.REBALANCE_DISKS, disk_band=0.5)) == [
        '{"topic":"t","partition":1,"bytes":40000000000,"from":{"broker":1,"dir":"/b1/d0"},"to":{"broker":1,"dir":"/b1/d1"},"goal":{"kind":"capacity-threshold","broker":1,"dir":"/b1/d0","measure":"usagePercent","before":85,"after":45,"band":[null,80]},"broker":null,"dir":{"why":"most-under-mean-with-room","usagePercent":[0,40]}}',
    ]


def test_add() -> None:
    """Adding broker 3 fills it to its replica target; 10 GB replicas are wider than the byte band."""
    t = tables({1: (None, [100]), 2: (None, [100]), 3: (None, [100])}, [(10, [(1, 0), (2, 0)]), (10, [(2, 0), (1, 0)]), (10, [(1, 0), (2, 0)]), (10, [(2, 0), (1, 0)])])
    assert explained(t, PlanRequest(Goal.ADD_BROKERS, brokers=(3,))) == [
        '{"topic":"t","partition":1,"bytes":10000000000,"from":{"broker":1,"dir":"/b1/d0"},"to":{"broker":3,"dir":"/b3/d0"},"goal":{"kind":"add-brokers","broker":3,"measure":"replicas","before":0,"after":2,"target":2,"band":[2,2]},"broker":{"why":"added-broker","replicas":[0,2,2],"bytes":[0,20000000000,26666666666]},"dir":{"why":"least-used-with-room","usagePercent":[0,20]}}',
        '{"topic":"t","partition":2,"bytes":10000000000,"from":{"broker":2,"dir":"/b2/d0"},"to":{"broker":3,"dir":"/b3/d0"},"goal":{"kind":"add-brokers","broker":3,"measure":"replicas","before":0,"after":2,"target":2,"band":[2,2]},"broker":{"why":"added-broker","replicas":[0,2,2],"bytes":[0,20000000000,26666666666]},"dir":{"why":"least-used-with-room","usagePercent":[0,20]}}',
        '{"kind":"unreached","goal":"bytes","broker":1,"measure":"bytes","before":40000000000,"after":30000000000,"target":26666666666,"band":[25333333333,28000000000],"obstacle":"replicas-too-large","why":"every replica that could move is larger than the gap to the far side of the band (the band is narrower than the replicas)"}',
        '{"kind":"unreached","goal":"bytes","broker":2,"measure":"bytes","before":40000000000,"after":30000000000,"target":26666666666,"band":[25333333333,28000000000],"obstacle":"replicas-too-large","why":"every replica that could move is larger than the gap to the far side of the band (the band is narrower than the replicas)"}',
        '{"kind":"unreached","goal":"bytes","broker":3,"measure":"bytes","before":0,"after":20000000000,"target":26666666666,"band":[25333333333,28000000000],"obstacle":"replicas-too-large","why":"every replica that could move is larger than the gap to the far side of the band (the band is narrower than the replicas)"}',
    ]


def test_fix() -> None:
    """fix-offline: broker 3 is unregistered, 4 fenced, and /b1/d0 offline; partition 0's replica there has nowhere to go (2 holds it, 3 and 4 cannot receive)."""
    t = tables({1: (None, [100, 100]), 2: (None, [100]), 3: (None, [100]), 4: (None, [100])}, [(10, [(2, 0), (1, 0)]), (10, [(3, 0), (2, 0)]), (10, [(4, 0), (1, 1)])], unregistered=[3], fenced=[4], offline=[(1, 0)])
    assert explained(t, PlanRequest(Goal.FIX_OFFLINE)) == [
        '{"topic":"t","partition":1,"bytes":10000000000,"from":{"broker":3,"dir":"/b3/d0"},"to":{"broker":1,"dir":"/b1/d1"},"goal":{"kind":"dead-broker","broker":3,"measure":"replicas","before":1,"after":0,"target":0},"broker":{"why":"under-replica-target","replicas":[2,3,3],"bytes":[20000000000,30000000000,30000000000]},"dir":{"why":"least-used-with-room","usagePercent":[10,20]}}',
        '{"topic":"t","partition":2,"bytes":10000000000,"from":{"broker":4,"dir":"/b4/d0"},"to":{"broker":2,"dir":"/b2/d0"},"goal":{"kind":"fenced-broker","broker":4,"measure":"replicas","before":1,"after":0,"target":0},"broker":{"why":"under-replica-target","replicas":[2,3,3],"bytes":[20000000000,30000000000,30000000000]},"dir":{"why":"least-used-with-room","usagePercent":[20,30]}}',
        '{"kind":"unreached","goal":"offline-dir","topic":"t","partition":0,"broker":1,"dir":"/b1/d0","obstacle":"no-allowed-broker","why":"no broker the rules allow could take it (one that may receive, does not hold the partition, keeps the rack rule and has room)"}',
    ]


def test_toofewracks() -> None:
    """Removing the only broker of rack r3 leaves two racks for a partition of three replicas: the rule breaks (listed)."""
    t = tables({1: ("r1", [100]), 2: ("r2", [100]), 3: ("r3", [100]), 4: ("r1", [100])}, [(10, [(1, 0), (2, 0), (3, 0)])])
    assert explained(t, PlanRequest(Goal.REMOVE_BROKERS, brokers=(3,))) == [
        '{"topic":"t","partition":0,"bytes":10000000000,"from":{"broker":3,"dir":"/b3/d0"},"to":{"broker":4,"dir":"/b4/d0"},"goal":{"kind":"remove-brokers","broker":3,"measure":"replicas","before":1,"after":0,"target":0},"broker":{"why":"rack-rule-broken","replicas":[0,1,1],"bytes":[0,10000000000,10000000000]},"dir":{"why":"least-used-with-room","usagePercent":[0,10]}}',
        '{"kind":"unreached","goal":"rack-rule","topic":"t","partition":0,"obstacle":"too-few-racks","why":"fewer racks can hold its replicas than the rule needs"}',
    ]


def test_excluded() -> None:
    """Broker 1 is excluded: its replicas stay, and it is listed; broker 2 gives one replica to 3."""
    t = tables({1: (None, [100]), 2: (None, [100]), 3: (None, [100])}, [(10, [(1, 0), (2, 0)]), (10, [(1, 0), (2, 0)]), (10, [(1, 0), (2, 0)])])
    assert explained(t, PlanRequest(Goal.BALANCE, exclude_brokers=(1,))) == [
        '{"topic":"t","partition":2,"bytes":10000000000,"from":{"broker":2,"dir":"/b2/d0"},"to":{"broker":3,"dir":"/b3/d0"},"goal":{"kind":"replica-count","broker":2,"measure":"replicas","before":3,"after":2,"target":2,"band":[2,2]},"broker":{"why":"under-replica-target","replicas":[0,1,1],"bytes":[0,10000000000,15000000000]},"dir":{"why":"least-used-with-room","usagePercent":[0,10]}}',
        '{"kind":"unreached","goal":"bytes","broker":2,"measure":"bytes","before":30000000000,"after":20000000000,"target":15000000000,"band":[14250000000,15750000000],"obstacle":"replicas-too-large","why":"every replica that could move is larger than the gap to the far side of the band (the band is narrower than the replicas)"}',
        '{"kind":"unreached","goal":"bytes","broker":3,"measure":"bytes","before":0,"after":10000000000,"target":15000000000,"band":[14250000000,15750000000],"obstacle":"replicas-too-large","why":"every replica that could move is larger than the gap to the far side of the band (the band is narrower than the replicas)"}',
        '{"kind":"unreached","goal":"replica-count","broker":1,"measure":"replicas","before":3,"after":3,"target":null,"obstacle":"excluded-broker","why":"the broker is excluded (--exclude-brokers): nothing on it moves"}',
    ]


def test_budget() -> None:
    """--max-moves 1: one move, then the budget stops the plan short of every band."""
    t = tables({1: (None, [100]), 2: (None, [100]), 3: (None, [100])}, [(10, [(1, 0), (2, 0)]), (10, [(1, 0), (2, 0)]), (10, [(1, 0), (2, 0)])])
    assert explained(t, PlanRequest(Goal.BALANCE, max_moves=1)) == [
        '{"topic":"t","partition":2,"bytes":10000000000,"from":{"broker":1,"dir":"/b1/d0"},"to":{"broker":3,"dir":"/b3/d0"},"goal":{"kind":"replica-count","broker":1,"measure":"replicas","before":3,"after":2,"target":2,"band":[2,2]},"broker":{"why":"under-replica-target","replicas":[0,1,2],"bytes":[0,10000000000,20000000000]},"dir":{"why":"least-used-with-room","usagePercent":[0,10]}}',
        '{"kind":"unreached","goal":"replica-count","broker":2,"measure":"replicas","before":3,"after":3,"target":2,"band":[2,2],"obstacle":"budget","why":"--max-moves or --max-bytes ran out"}',
        '{"kind":"unreached","goal":"replica-count","broker":3,"measure":"replicas","before":0,"after":1,"target":2,"band":[2,2],"obstacle":"budget","why":"--max-moves or --max-bytes ran out"}',
        '{"kind":"unreached","goal":"bytes","broker":2,"measure":"bytes","before":30000000000,"after":30000000000,"target":20000000000,"band":[19000000000,21000000000],"obstacle":"budget","why":"--max-moves or --max-bytes ran out"}',
        '{"kind":"unreached","goal":"bytes","broker":3,"measure":"bytes","before":0,"after":10000000000,"target":20000000000,"band":[19000000000,21000000000],"obstacle":"budget","why":"--max-moves or --max-bytes ran out"}',
    ]


def test_full() -> None:
    """Broker 3's only directory (5 GB) has no room for a 10 GB replica; broker 2's replicas are alone in their partitions (min.insync.replicas 1)."""
    t = tables({1: (None, [100]), 2: (None, [100]), 3: (None, [5])}, [(10, [(1, 0)]), (10, [(1, 0)]), (10, [(2, 0)]), (10, [(2, 0)])])
    assert explained(t, PlanRequest(Goal.BALANCE)) == [
        '{"kind":"unreached","goal":"replica-count","broker":2,"measure":"replicas","before":2,"after":2,"target":1,"band":[1,1],"obstacle":"min-insync","why":"each replica that could still move would leave its partition short of min.insync.replicas while it moves"}',
        '{"kind":"unreached","goal":"replica-count","broker":3,"measure":"replicas","before":0,"after":0,"target":1,"band":[1,1],"obstacle":"full-directories","why":"its directories have no room under the capacity threshold"}',
        '{"kind":"unreached","goal":"bytes","broker":3,"measure":"bytes","before":0,"after":0,"target":975609756,"band":[926829268,1024390244],"obstacle":"full-directories","why":"its directories have no room under the capacity threshold"}',
    ]


def test_toolarge() -> None:
    """One 60 GB replica on a broker with two 100 GB directories: the band around the 30% mean is out of reach."""
    t = tables({1: (None, [100, 100])}, [(60, [(1, 0)])])
    assert explained(t, PlanRequest(Goal.REBALANCE_DISKS)) == [
        '{"kind":"unreached","goal":"directory-band","broker":1,"dir":"/b1/d0","measure":"usagePercent","before":60,"after":60,"target":30,"band":[25,35],"obstacle":"replicas-too-large","why":"every replica that could move is larger than the gap to the far side of the band (the band is narrower than the replicas)"}',
        '{"kind":"unreached","goal":"directory-band","broker":1,"dir":"/b1/d1","measure":"usagePercent","before":0,"after":0,"target":30,"band":[25,35],"obstacle":"band-out-of-reach","why":"no move between its broker\'s directories brings it closer to the mean without pushing another past its band"}',
    ]


def test_the_summary_counts_the_lines() -> None:
    t = tables({1: (None, [100]), 2: (None, [100]), 3: (None, [100])}, [(10, [(1, 0), (2, 0)]), (10, [(1, 0), (2, 0)]), (10, [(1, 0), (2, 0)])])
    explanation = explained_report(t, PlanRequest(Goal.BALANCE, exclude_brokers=(1,))).explanation
    assert explanation is not None
    assert {k: v for k, v in explanation.summary_json().items() if k != "seconds"} == {
        "moves": 1,
        "movesByGoal": {"replica-count": 1},
        "unreached": 3,
        "unreachedByGoal": {"bytes": {"replicas-too-large": 2}, "replica-count": {"excluded-broker": 1}},
    }
    assert explanation.summary_lines() == [
        "Why they move: 1 replica counts.",
        "Not reached (3):",
        "  replica counts: 1 because the broker is excluded (--exclude-brokers): nothing on it moves",
        "  bytes per broker: 2 because every replica that could move is larger than the gap to the far side of the band (the band is narrower than the replicas)",
    ]


def test_lines_come_in_chunks(monkeypatch: Any) -> None:
    """The file is streamed: moves in chunks of CHUNK lines, the goals not reached last."""
    import kjbod.planner.explain as explain_module

    t = tables({1: (None, [100]), 2: (None, [100]), 3: (None, [100])}, [(10, [(1, 0), (3, 0)]), (20, [(2, 0), (3, 0)])])
    whole = explained(t, PlanRequest(Goal.REMOVE_BROKERS, brokers=(3,)))
    monkeypatch.setattr(explain_module, "CHUNK", 1)
    explanation = explained_report(t, PlanRequest(Goal.REMOVE_BROKERS, brokers=(3,))).explanation
    assert explanation is not None
    chunks = list(explanation.chunks())
    assert len(chunks) == 2
    assert b"".join(chunks).decode().splitlines() == whole


def _moves_in_plan_file(t: ClusterTables, figures: PlanReport) -> Counter[tuple[str, int, int, str | None]]:
    """(topic, partition, broker, directory or None) of every replica the plan file moves: a
    broker that is new to the partition, or a directory given for a broker that keeps it and
    differs from the one it is in."""
    moves: Counter[tuple[str, int, int, str | None]] = Counter()
    index = {(t.topics[t.part_topic[p]], int(t.part_id[p])): p for p in range(len(t.part_id))}
    for entry in figures.reassignment["partitions"]:
        p = index[(entry["topic"], entry["partition"])]
        rows = range(int(t.part_offsets[p]), int(t.part_offsets[p + 1]))
        old = {int(t.broker_ids[t.rep_broker[r]]): (t.dir_labels[t.rep_dir[r]] if t.rep_dir[r] >= 0 else None) for r in rows}
        for broker, directory in zip(entry["replicas"], entry["log_dirs"]):
            target = None if directory == "any" else directory
            if broker not in old:
                moves[(entry["topic"], entry["partition"], broker, target)] += 1
            elif target is not None and old[broker] is not None and target != old[broker]:
                moves[(entry["topic"], entry["partition"], broker, target)] += 1
    return moves


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_one_line_per_moved_replica_with_the_reports_numbers(data: st.DataObject) -> None:
    t = data.draw(clusters())
    request = data.draw(requests(t))
    if data.draw(st.booleans()):  # without budgets, more of the plans move something
        request = replace(request, max_moves=None, max_bytes=None)
    try:
        result = plan(t, request, LocalEngine())
    except UserError:
        return
    figures = report(result, 0.0, "local", explain=True)
    explanation = figures.explanation
    assert explanation is not None
    lines = [json.loads(line) for line in b"".join(explanation.chunks()).decode().splitlines()]
    moves = [line for line in lines if "kind" not in line]
    unreached = [line for line in lines if line.get("kind") == "unreached"]
    assert len(moves) + len(unreached) == len(lines)
    # Every moved replica of the plan file has exactly one line, and only those.
    assert Counter((m["topic"], m["partition"], m["to"]["broker"], m["to"]["dir"]) for m in moves) == _moves_in_plan_file(t, figures)
    assert len(moves) == figures.replicas_moved_between_brokers + figures.replicas_moved_between_directories == explanation.moves
    assert sum(explanation.moves_by_goal().values()) == len(moves)
    # The numbers are the report's.
    brokers = {row.broker: row for row in figures.per_broker}
    directories = {(row.broker, row.path): row for row in figures.per_directory}
    for move in moves:
        goal = move["goal"]
        assert goal["kind"] in GOALS
        assert move["bytes"] == int(t.part_size[[p for p in range(len(t.part_id)) if int(t.part_id[p]) == move["partition"]][0]])
        if move["broker"] is not None:
            row = brokers[move["to"]["broker"]]
            assert move["broker"]["replicas"][:2] == [row.replicas_before, row.replicas_after]
            assert move["broker"]["bytes"][:2] == [row.bytes_before, row.bytes_after]
        else:
            assert move["from"]["broker"] == move["to"]["broker"]
        if "dir" in goal:
            row = directories[(goal["broker"], goal["dir"])]
            if goal["measure"] == "bytes":
                assert (goal["before"], goal["after"]) == (row.bytes_before, row.bytes_after)
            else:
                assert goal["measure"] == "usagePercent"
                assert (goal["before"], goal["after"]) == (row.usage_percent_before, row.usage_percent_after)
        elif "broker" in goal:
            row = brokers[goal["broker"]]
            if goal["measure"] == "replicas":
                assert (goal["before"], goal["after"]) == (row.replicas_before, row.replicas_after)
                if "band" in goal:
                    assert goal["target"] == row.replicas_target
            else:
                assert goal["measure"] == "bytes"
                assert (goal["before"], goal["after"], goal["target"]) == (row.bytes_before, row.bytes_after, row.bytes_target)
        else:
            assert goal["kind"] == "rack-rule" and goal["after"] < goal["before"]
    for line in unreached:
        assert line["obstacle"] in OBSTACLES and line["why"] == OBSTACLES[line["obstacle"]]
