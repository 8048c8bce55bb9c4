"""The partition index derived incrementally from a base image equals one built from scratch."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kjbod.controller import Controller, ControllerApiError
from kjbod.controller.replication_control import CreateTopicRequest
from kjbod.image import replay_all
from kjbod.image.topics import TopicsImage

from ..controller.support import bootstrap, with_brokers
from .support import operation

VIEWS = ("in_isr", "on_broker", "led_by", "in_directory")


def as_sets(index) -> dict:  # noqa: ANN001
    return {view: {k: set(v) for k, v in getattr(index, view).items()} for view in VIEWS} | {"leaderless": set(index.leaderless)}


operations = st.lists(
    st.tuples(st.sampled_from(["fence", "unfence", "fail", "assign", "create", "delete"]), st.integers(1, 4), st.integers(0, 5)),
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(operations)
def test_incremental_views_equal_a_full_build(steps: list[tuple[str, int, int]]) -> None:
    image, dirs = with_brokers(bootstrap(), 4, dirs_each=2)
    image = replay_all(image, Controller(image).replication.create_topic(CreateTopicRequest("t0", 6, 3, seed=1)).records)
    created = 1
    for kind, broker, n in steps:
        as_sets(image.topics.index)  # build every view, so the next image derives its own
        c = Controller(image)
        try:
            result = operation(c, image, dirs, kind, broker, n, created)
        except ControllerApiError:
            continue  # refused: nothing changes
        if result is None:
            continue
        created += kind == "create"
        image = replay_all(image, result.records)
        fresh = TopicsImage(dict(image.topics.by_id))
        assert as_sets(image.topics.index) == as_sets(fresh.index)
