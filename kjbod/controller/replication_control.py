"""Topics and partitions: creation, leader and ISR changes, directory assignment, elections (ReplicationControlManager)."""

from __future__ import annotations

from kjbod.image import Image


class ReplicationControl:
    def __init__(self, image: Image) -> None:
        self._image = image
