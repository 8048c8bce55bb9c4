"""The image most log-dirs tests start from, as a fixture (builders in support.py)."""

from __future__ import annotations

import pytest

from kjbod.image import Image

from .support import two_brokers_image


@pytest.fixture
def two_brokers() -> Image:
    """Brokers 1 and 2 with two directories each (D12 offline); foo-0..2 and bar-0."""
    return two_brokers_image()
