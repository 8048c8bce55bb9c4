"""Fixtures shared with tests/storage: a server.properties writer."""

from tests.storage.conftest import write_config  # noqa: F401 (a fixture, used by test_format.py)
