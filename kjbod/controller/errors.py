"""Kafka's error codes (clients/.../protocol/Errors.java) and the ApiError a result carries."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from kjbod.errors import UserError


class Errors(IntEnum):
    UNKNOWN_SERVER_ERROR = -1
    NONE = 0
    UNKNOWN_TOPIC_OR_PARTITION = 3
    NOT_LEADER_OR_FOLLOWER = 6
    REQUEST_TIMED_OUT = 7
    BROKER_NOT_AVAILABLE = 8
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
    DUPLICATE_VOTER = 126
    VOTER_NOT_FOUND = 127
    CONTROLLER_ID_NOT_REGISTERED = 136


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

# What Kafka's admin client turns an error into: the exception class and its default message
# (Errors.java), used where a Kafka tool prints `exception.toString()`.
_EXCEPTIONS = {
    Errors.UNKNOWN_TOPIC_OR_PARTITION: ("UnknownTopicOrPartitionException", "This server does not host this topic-partition."),
    Errors.PREFERRED_LEADER_NOT_AVAILABLE: ("PreferredLeaderNotAvailableException", "The preferred leader was not available."),
    Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE: ("EligibleLeadersNotAvailableException", "Eligible topic partition leaders are not available."),
    Errors.ELECTION_NOT_NEEDED: ("ElectionNotNeededException", "Leader election not needed for topic partition."),
    Errors.INVALID_REQUEST: ("InvalidRequestException", "This most likely occurs because of a request being malformed by the client library or the message was sent to an incompatible broker. See the broker logs for more details."),
    Errors.UNKNOWN_TOPIC_ID: ("UnknownTopicIdException", "This server does not host this topic ID."),
    Errors.REQUEST_TIMED_OUT: ("TimeoutException", "The request timed out."),
    Errors.UNSUPPORTED_VERSION: ("UnsupportedVersionException", "The version of API is not supported."),
    Errors.DUPLICATE_VOTER: ("DuplicateVoterException", "The voter is already part of the set of voters."),
    Errors.VOTER_NOT_FOUND: ("VoterNotFoundException", "The voter is not part of the set of voters."),
    Errors.CONTROLLER_ID_NOT_REGISTERED: ("ControllerIdNotRegisteredException", "The given controller ID was not registered."),
    Errors.INCONSISTENT_CLUSTER_ID: ("InconsistentClusterIdException", "The clusterId in the request does not match that found on the server."),
    Errors.NOT_LEADER_OR_FOLLOWER: ("NotLeaderOrFollowerException", "For requests intended only for the leader, this error indicates that the broker is not the current leader. For requests intended for any replica, this error indicates that the broker is not a replica of the topic partition."),
}


def java_exception_text(error: ApiError) -> str:
    """`exception.toString()` for the exception the admin client raises for `error`."""
    name, default = _EXCEPTIONS.get(error.error, (error.error.name, error.error.name))
    return f"org.apache.kafka.common.errors.{name}: {error.message or default}"


class ControllerApiError(UserError):
    """An expected error a controller operation raises (Kafka's ApiException subclasses).

    The operator sees Kafka's error name and message: `INVALID_REGISTRATION: No directories ...`.
    """

    def __init__(self, error: Errors, message: str | None = None) -> None:
        super().__init__(f"{error.name}: {message}" if message else error.name)
        self.api_error = ApiError(error, message)
