"""Builders for the image's tests: controller operations drawn by kind, to build images through
the controller as a property test wants them."""

from __future__ import annotations

from kjbod.controller.replication_control import CreateTopicRequest, DirectoryAssignment, HeartbeatRequest


def operation(c, image, dirs, kind, broker, n, created):  # noqa: ANN001, ANN201
    """One controller operation of the given kind, or None when it does not apply."""
    names = sorted(image.topics.by_name)
    if kind == "fence":
        return c.replication.fence_broker(broker)
    if kind == "unfence":
        return c.replication.heartbeat(HeartbeatRequest(broker))
    if kind == "fail":
        return c.replication.heartbeat(HeartbeatRequest(broker, offline_log_dirs=(dirs[broker][n % 2],)))
    if kind == "create":
        return c.replication.create_topic(CreateTopicRequest(f"t{created}", n + 1, 2, seed=n))
    if not names:
        return None
    topic = names[n % len(names)]
    if kind == "assign":
        return c.replication.assign_replicas_to_dirs(broker, [DirectoryAssignment(topic, n, dirs[broker][n % 2])])
    return c.replication.delete_topic(topic)
