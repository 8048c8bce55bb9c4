"""The tests' clusters get ids as Kafka's Uuid.randomUuid makes them (tests/kafka/cluster.py)."""

from __future__ import annotations

import base64

from tests.kafka.cluster import random_kafka_uuid


def test_no_cluster_id_starts_with_a_dash() -> None:
    """One base64 id in 64 starts with "-", which kafka-storage's `-t` takes for an option (a
    cluster start in 64 failed): Kafka draws again, and so must the tests. 2,000 ids miss a
    regression once in ~10^13."""
    ids = [random_kafka_uuid() for _ in range(2000)]
    assert not [text for text in ids if text.startswith("-")]
    assert all(len(base64.urlsafe_b64decode(text + "==")) == 16 for text in ids)
    assert len(set(ids)) == len(ids)
