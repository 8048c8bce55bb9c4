"""The server.properties writer as a fixture (tests/tools/storage/support.py)."""

from tests.tools.storage.support import write_config  # noqa: F401 (a fixture)
