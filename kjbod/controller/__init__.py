"""Controller operations: validate against an image, return records and a result, never mutate."""

from kjbod.controller.controller import Controller
from kjbod.controller.errors import ApiError, ControllerApiError, Errors
from kjbod.controller.result import ControllerResult

__all__ = ["ApiError", "Controller", "ControllerApiError", "ControllerResult", "Errors"]
