"""Errors the library raises, and the exit code each one means.

The library never prints; the CLI's one error handler turns these into a one-line message and
the contract's exit codes: 1 for a failed or refused operation, 2 for a malformed command line,
3 for a state directory that is corrupt beyond automatic recovery or locked past the timeout.
"""

from __future__ import annotations


class KjbodError(Exception):
    """Base of every error kjbod expects; the message is one line, fit for an operator."""

    exit_code = 1
    # kjbod's advice on what to do, printed on its own line after the message, where the message
    # is a line of Kafka's that a script may match (a quorum refusal is Kafka's exception line).
    note: str | None = None

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class UserError(KjbodError):
    """The operation failed or was refused: a bad value, a missing file, a rule of Kafka's."""

    exit_code = 1


class WriteFailed(UserError):
    """Writing a file of a cluster state failed (a full disk, a read-only mount). The message
    names the file, what was being done and what was left behind; `reason` and `doing` let a
    caller that undoes more (a failed creation) say so in its own message."""

    def __init__(self, message: str, *, reason: str, doing: str) -> None:
        super().__init__(message)
        self.reason = reason  # e.g. "No space left on device"
        self.doing = doing  # e.g. "appending a commit to 00000000000000000000.log"


class UsageError(KjbodError):
    """The command line's structure is wrong (an option combination the parser cannot express)."""

    exit_code = 2


class StateError(KjbodError):
    """The cluster state cannot be used: corrupt beyond automatic recovery, or locked."""

    exit_code = 3


class CorruptStateError(StateError):
    """Damage in the record log or a snapshot that recovery must not silently skip."""


class StateLockedError(StateError):
    """Another process holds the state directory's lock past the lock timeout."""


class AlreadyReported(UserError):
    """The command's own output already said what is wrong; only the exit code is left to give.

    kafka-storage info lists its problems on stdout and exits 1 without an error message, so
    `meta info` does too: the handler prints nothing for this error.
    """


class OperationFailed(UserError):
    """Some items of a batch failed; their results were already rendered.

    Raised after rendering, so the handler prints only this summary line (Kafka's
    "N out of M operation(s) failed.") and exits 1.
    """


class ReplayError(RuntimeError):
    """A record contradicts the state it is replayed onto.

    Kafka treats this as a fatal fault. Raised while loading, it means the log is corrupt
    (exit 3); raised while validating a new batch, it is a kjbod bug and nothing is written.
    """
