"""The repository's generator scripts (docs/generate.py, completions/generate.py), which are not
in a package, loaded as modules for the tests that check what they generate."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def load_script(relative: str) -> ModuleType:
    """A generator script (docs/generate.py, completions/generate.py) as a module."""
    path = ROOT / relative
    spec = importlib.util.spec_from_file_location(f"_kjbod_{path.parent.name}_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
