"""Finalized features: kafka-features' upgrade, downgrade and disable, validated as FeatureControlManager does."""

from __future__ import annotations

from kjbod.image import Image


class FeatureControl:
    def __init__(self, image: Image) -> None:
        self._image = image
