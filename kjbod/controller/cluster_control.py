"""Brokers: registration, heartbeats, fencing, controlled shutdown, directories (ClusterControlManager)."""

from __future__ import annotations

from kjbod.image import Image


class ClusterControl:
    def __init__(self, image: Image) -> None:
        self._image = image
