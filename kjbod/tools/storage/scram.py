"""`format --add-scram`: kafka-storage's ScramParser (4.4.0 kafka-metadata
org/apache/kafka/metadata/storage/ScramParser.java; the same in 4.3.1), one
UserScramCredentialRecord per argument.

`MECHANISM=[name=alice,password=secret]` (or `saltedpassword=<base64>` with `salt=<base64>`,
optional `iterations`): the credential is computed as Kafka's ScramFormatter does (RFC 5802:
PBKDF2-HMAC, then the client and server keys), with the standard library's hashlib and hmac.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import random
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from kjbod.errors import UserError
from kjbod.records import UserScramCredentialRecord


class ScramError(UserError):
    """A FormatterException of ScramParser: its message, exit 1."""


@dataclass(frozen=True)
class ScramMechanism:
    """ScramMechanism (clients .../security/scram/internals/ScramMechanism.java:32-33)."""

    enum_name: str  # what its toString() prints: the enum constant's name
    type: int
    hash_name: str  # hashlib's name of its hash
    min_iterations: int = 4096
    max_iterations: int = 16384


MECHANISMS = {
    "SCRAM-SHA-256": ScramMechanism("SCRAM_SHA_256", 1, "sha256"),
    "SCRAM-SHA-512": ScramMechanism("SCRAM_SHA_512", 2, "sha512"),
}
DEFAULT_ITERATIONS = 4096
_JAVA_INT = re.compile(r"[+-]?[0-9]+")
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def _java_base64(text: str) -> bytes:
    """Base64.getDecoder().decode: the standard alphabet, padding optional, nothing else."""
    if not re.fullmatch(r"[A-Za-z0-9+/]*={0,2}", text) or len(text.rstrip("=")) % 4 == 1:
        raise ValueError(text)
    stripped = text.rstrip("=")
    try:
        return base64.b64decode(stripped + "=" * (-len(stripped) % 4), validate=True)
    except binascii.Error:
        raise ValueError(text) from None


def _java_int(text: str) -> int:
    """Integer.parseInt."""
    if not _JAVA_INT.fullmatch(text) or not -(2**31) <= int(text) < 2**31:
        raise ValueError(text)
    return int(text)


def _secure_random_bytes(rng: random.Random | None) -> bytes:
    """ScramFormatter.secureRandomBytes: `new BigInteger(130, random).toString(36)` as UTF-8."""
    value = rng.getrandbits(130) if rng is not None else secrets.randbits(130)
    digits = ""
    while True:
        value, digit = divmod(value, 36)
        digits = _BASE36[digit] + digits
        if value == 0:
            return digits.encode()


def _split_component(component: str) -> tuple[str, str]:
    """splitTrimmedConfigStringComponent (:241-256): at the first `=`; a value in double
    quotes loses them."""
    key, equals, value = component.partition("=")
    if not equals:
        raise ScramError(f"No equals sign found in SCRAM component: {component}")
    if len(value) >= 2 and value.startswith('"') and value.endswith('"'):
        value = value[1:-1]
    return key, value


def _java_split_commas(text: str) -> list[str]:
    """`String.split(",")`: trailing empty strings dropped (but one empty string stays one)."""
    parts = text.split(",")
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return parts


def parse_scram_argument(argument: str, rng: random.Random | None = None) -> UserScramCredentialRecord:
    """One `--add-scram` value as its record; raises ScramError with Kafka's message."""
    text = argument.strip()
    mechanism_name, equals, config = text.partition("=")
    if not equals:
        raise ScramError(f"Failed to find equals sign in SCRAM argument '{text}'")
    mechanism = MECHANISMS.get(mechanism_name)
    if mechanism is None:
        raise ScramError(f"The add-scram mechanism {mechanism_name} is not supported.")
    if not config.startswith("["):
        raise ScramError("Expected configuration string to start with [")
    if not config.endswith("]"):
        raise ScramError("Expected configuration string to end with ]")
    components: dict[str, str] = {}
    for component in _java_split_commas(config[1:-1]):
        key, value = _split_component(component)
        components[key] = value
    name = components.pop("name", None)
    if name is None:
        raise ScramError("You must supply 'name' to add-scram")
    salt_text = components.pop("salt", None)
    try:
        salt = None if salt_text is None else _java_base64(salt_text)
    except ValueError:
        raise ScramError(f"Failed to decode given salt: {salt_text}") from None
    iterations_text = components.pop("iterations", None)
    try:
        iterations = DEFAULT_ITERATIONS if iterations_text is None else _java_int(iterations_text)
    except ValueError:
        raise ScramError(f"Failed to parse iterations count: {iterations_text}") from None
    password = components.pop("password", None)
    salted_text = components.pop("saltedpassword", None)
    salted_password = None
    if password is None:
        if salted_text is None:
            raise ScramError("You must supply one of 'password' or 'saltedpassword' to add-scram")
        if salt is None:
            raise ScramError("You must supply 'salt' with 'saltedpassword' to add-scram")
        try:
            salted_password = _java_base64(salted_text)
        except ValueError:
            raise ScramError(f"Failed to decode given saltedPassword: {salted_text}") from None
    if components:
        # A TreeMap's keys: sorted.
        raise ScramError(f"Unknown SCRAM configurations: {', '.join(sorted(components))}")
    # toRecord (:181-201): the salt is drawn before the iterations are checked.
    if salt is None:
        salt = _secure_random_bytes(rng)
    if iterations < mechanism.min_iterations:
        raise ScramError(f"The 'iterations' value must be >= {mechanism.min_iterations} for add-scram using {mechanism.enum_name}")
    if iterations > mechanism.max_iterations:
        raise ScramError(f"The 'iterations' value must be <= {mechanism.max_iterations} for add-scram using {mechanism.enum_name}")
    # An empty password (or saltedpassword) is an empty HMAC key, which Java's SecretKeySpec
    # refuses: kafka-storage dies with an uncaught java.lang.IllegalArgumentException: Empty key
    # (ScramFormatter.hi :76, or .hmac :58 for an empty saltedpassword), exit 1, nothing written
    # (run with 4.3.1 and 4.4.0). Python's hmac accepts an empty key, so kjbod checks it here.
    if salted_password is None:
        assert password is not None
        if not password:
            raise ScramError(_empty_key(mechanism_name, name, "password"))
        salted_password = hashlib.pbkdf2_hmac(mechanism.hash_name, password.encode(), salt, iterations)
    elif not salted_password:
        raise ScramError(_empty_key(mechanism_name, name, "saltedpassword"))
    client_key = hmac.digest(salted_password, b"Client Key", mechanism.hash_name)
    return UserScramCredentialRecord(
        name=name,
        mechanism=mechanism.type,
        salt=salt,
        stored_key=hashlib.new(mechanism.hash_name, client_key).digest(),
        server_key=hmac.digest(salted_password, b"Server Key", mechanism.hash_name),
        iterations=iterations,
    )


def _empty_key(mechanism_name: str, name: str, key: str) -> str:
    return (
        f"Empty key: the {mechanism_name} credential of {name} has an empty {key} (Kafka's kafka-storage fails with "
        f"java.lang.IllegalArgumentException: Empty key); give it a non-empty one"
    )


def parse_scram_arguments(arguments: Sequence[str], rng: random.Random | None = None) -> tuple[UserScramCredentialRecord, ...]:
    """ScramParser.parse: every argument, in order."""
    return tuple(parse_scram_argument(argument, rng) for argument in arguments)


def java_bytes_text(raw: bytes) -> str:
    """Arrays.toString of a Java byte[]: signed values."""
    return "[" + ", ".join(str(b - 256 if b > 127 else b) for b in raw) + "]"


def record_text(record: UserScramCredentialRecord) -> str:
    """UserScramCredentialRecord.toString (generated): as format's Bootstrap metadata line prints it."""
    return (
        f"UserScramCredentialRecord(name='{record.name}', mechanism={record.mechanism}, salt={java_bytes_text(record.salt)}, "
        f"storedKey={java_bytes_text(record.stored_key)}, serverKey={java_bytes_text(record.server_key)}, "
        f"iterations={record.iterations})"
    )
