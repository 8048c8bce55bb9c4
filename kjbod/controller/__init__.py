"""Controller operations: validate against an image, return records and a result, never mutate.

The names below load on first use: a command that only reads (`features describe` reads the
feature control) imports the one module it needs, not every control manager.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kjbod.controller.controller import Controller
    from kjbod.controller.errors import ApiError, ControllerApiError, Errors
    from kjbod.controller.result import ControllerResult

_EXPORTS = {
    "Controller": "kjbod.controller.controller",
    "ApiError": "kjbod.controller.errors",
    "ControllerApiError": "kjbod.controller.errors",
    "Errors": "kjbod.controller.errors",
    "ControllerResult": "kjbod.controller.result",
}

__all__ = ["ApiError", "Controller", "ControllerApiError", "ControllerResult", "Errors"]  # _EXPORTS' names, written out


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kjbod.controller' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
