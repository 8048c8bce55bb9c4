"""Builders for the storage tools' tests: server.properties files and formatted directories."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kjbod.storage.meta_properties import MetaProperties, write_meta_properties

CLUSTER_ID = "XcZZOzUqS4yHOjhMQB6JLQ"
DATE = datetime(2024, 10, 25, 3, 33, 1, tzinfo=UTC)

WriteConfig = Callable[..., Path]


def properties_text(settings: dict[str, str]) -> str:
    return "".join(f"{key}={value}\n" for key, value in settings.items())


@pytest.fixture
def write_config(tmp_path: Path) -> WriteConfig:
    """Write a server.properties; `{tmp}` in values becomes the test's temporary directory."""

    def write(settings: dict[str, str], name: str = "server.properties") -> Path:
        path = tmp_path / name
        path.write_text(properties_text({k: v.replace("{tmp}", str(tmp_path)) for k, v in settings.items()}))
        return path

    return write


BROKER = {
    "process.roles": "broker",
    "node.id": "1",
    "controller.quorum.voters": "3000@controller:9093",
    "controller.listener.names": "CONTROLLER",
    "log.dirs": "{tmp}/d2,{tmp}/d1",
}
CONTROLLER = {
    "process.roles": "controller",
    "node.id": "3000",
    "controller.listener.names": "CONTROLLER",
    "listeners": "CONTROLLER://:9093",
    "log.dirs": "{tmp}/meta",
}


def format_by_hand(directory: Path, meta: MetaProperties) -> bytes:
    """A directory formatted earlier (by Kafka or kjbod); returns the file's bytes."""
    directory.mkdir(parents=True, exist_ok=True)
    write_meta_properties(directory, meta.to_properties(), DATE)
    return (directory / "meta.properties").read_bytes()
