"""Kafka's error codes (clients/.../protocol/Errors.java) and the ApiError a result carries."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class Errors(IntEnum):
    UNKNOWN_SERVER_ERROR = -1
    NONE = 0
    UNKNOWN_TOPIC_OR_PARTITION = 3
    NOT_LEADER_OR_FOLLOWER = 6
    INVALID_TOPIC_EXCEPTION = 17
    TOPIC_AUTHORIZATION_FAILED = 29
    UNSUPPORTED_VERSION = 35
    TOPIC_ALREADY_EXISTS = 36
    INVALID_PARTITIONS = 37
    INVALID_REPLICATION_FACTOR = 38
    INVALID_REPLICA_ASSIGNMENT = 39
    INVALID_CONFIG = 40
    NOT_CONTROLLER = 41
    INVALID_REQUEST = 42
    POLICY_VIOLATION = 44
    OPERATION_NOT_ATTEMPTED = 55
    KAFKA_STORAGE_ERROR = 56
    LOG_DIR_NOT_FOUND = 57
    FENCED_LEADER_EPOCH = 74
    STALE_BROKER_EPOCH = 77
    PREFERRED_LEADER_NOT_AVAILABLE = 80
    ELIGIBLE_LEADERS_NOT_AVAILABLE = 83
    ELECTION_NOT_NEEDED = 84
    NO_REASSIGNMENT_IN_PROGRESS = 85
    INVALID_UPDATE_VERSION = 95
    UNKNOWN_TOPIC_ID = 100
    DUPLICATE_BROKER_REGISTRATION = 101
    BROKER_ID_NOT_REGISTERED = 102
    INCONSISTENT_CLUSTER_ID = 104
    INELIGIBLE_REPLICA = 107
    NEW_LEADER_ELECTED = 108
    INVALID_REGISTRATION = 119


@dataclass(frozen=True)
class ApiError:
    error: Errors
    message: str | None = None

    @property
    def is_success(self) -> bool:
        return self.error is Errors.NONE

    def __str__(self) -> str:
        return self.error.name if self.message is None else f"{self.error.name}: {self.message}"


NONE = ApiError(Errors.NONE)


class ControllerApiError(Exception):
    """An expected error a controller operation raises (Kafka's ApiException subclasses)."""

    def __init__(self, error: Errors, message: str | None = None) -> None:
        super().__init__(message or error.name)
        self.api_error = ApiError(error, message)
