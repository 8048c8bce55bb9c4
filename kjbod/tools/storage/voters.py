"""KIP-853 initial controllers: `--initial-controllers` / `--standalone` (storage reference §1.11),
and the static voter set of `controller.quorum.voters`.

Grammar and messages of Kafka's DynamicVoters/DynamicVoter parsers:
`<nodeId>@<host>:<port>:<directoryId>[,...]`, with `[ipv6]` hosts in brackets.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from kjbod.common.java import parse_java_int
from kjbod.common.kafka_uuid import Uuid
from kjbod.errors import UserError
from kjbod.storage.config import java_trim


class VoterParseError(UserError):
    """An `--initial-controllers` value Kafka refuses (IllegalArgumentException in Kafka)."""


@dataclass(frozen=True)
class DynamicVoter:
    node_id: int
    host: str
    port: int
    directory_id: str

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.node_id}@{host}:{self.port}:{self.directory_id}"

    def to_json(self) -> dict[str, object]:
        return {"nodeId": self.node_id, "host": self.host, "port": self.port, "directoryId": self.directory_id}


def java_host_string(host: str) -> str:
    """What `new InetSocketAddress(host, port).getHostString()` gives (DynamicVoter.toVoterNode):
    a host name as written; an IP literal as Java prints the parsed address (IPv6 in full,
    without zero compression; an IPv4-mapped IPv6 address as IPv4)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return ":".join(f"{int(group, 16):x}" for group in address.exploded.split(":"))
    return str(address)


def parse_voter(text: str) -> DynamicVoter:
    """DynamicVoter.parse, checks in Kafka's order."""
    text = java_trim(text)
    at = text.find("@")
    if at < 0:
        raise VoterParseError("No @ found in dynamic voter string.")
    if at == 0:
        raise VoterParseError("Invalid @ at beginning of dynamic voter string.")
    try:
        node_id = parse_java_int(text[:at])
    except ValueError:
        raise VoterParseError("Failed to parse node id in dynamic voter string.") from None
    if node_id < 0:
        raise VoterParseError(f"Invalid negative node id {node_id} in dynamic voter string.")
    rest = text[at + 1 :]
    if not rest:
        raise VoterParseError("No hostname found after node id.")
    if rest.startswith("["):
        end = rest.find("]")
        if end < 0:
            raise VoterParseError("Hostname began with left bracket, but no right bracket was found.")
        host, rest = rest[1:end], rest[end + 1 :]
    else:
        colon = rest.find(":")
        if colon < 0:
            raise VoterParseError("No colon following hostname could be found.")
        host, rest = rest[:colon], rest[colon:]
    if not rest.startswith(":"):
        raise VoterParseError("Port section must start with a colon.")
    rest = rest[1:]
    colon = rest.find(":")
    if colon < 0:
        raise VoterParseError("No colon following port could be found.")
    try:
        port = parse_java_int(rest[:colon])
    except ValueError:
        raise VoterParseError("Failed to parse port in dynamic voter string.") from None
    if port < 0 or port > 65535:
        raise VoterParseError(f"Invalid port {port} in dynamic voter string.")
    try:
        directory_id = str(Uuid.from_string(rest[colon + 1 :]))
    except ValueError:
        raise VoterParseError("Failed to parse directory ID in dynamic voter string.") from None
    return DynamicVoter(node_id, host, port, directory_id)


def parse_voters(text: str) -> tuple[DynamicVoter, ...]:
    """DynamicVoters.parse: comma-separated, empty items skipped, node ids unique."""
    voters: list[DynamicVoter] = []
    seen: set[int] = set()
    for item in java_trim(text).split(","):
        if not item:
            continue
        voter = parse_voter(item)
        if voter.node_id in seen:
            raise VoterParseError(f"Node id {voter.node_id} was specified more than once.")
        seen.add(voter.node_id)
        voters.append(voter)
    if not voters:
        raise VoterParseError("No voters given.")
    return tuple(voters)


@dataclass(frozen=True)
class StaticVoter:
    node_id: int
    host: str
    port: int


# Utils.HOST_PORT_PATTERN (clients/src/main/java/org/apache/kafka/common/utils/Utils.java:99).
_HOST_PORT = re.compile(r"^(?:[0-9a-zA-Z\-%._]*://)?\[?([0-9a-zA-Z\-%._:]*)]?:([0-9]+)$")
_VOTERS_FORM = "Each entry should be in the form `{id}@{host}:{port}`."


def parse_static_voters(text: str) -> tuple[StaticVoter, ...]:
    """`QuorumConfig.parseVoterConnections` (raft/src/main/java/org/apache/kafka/raft/QuorumConfig.java)
    on `controller.quorum.voters`, with its ConfigException messages."""
    voters: list[StaticVoter] = []
    for entry in (item.strip() for item in text.split(",")):
        if not entry:
            continue
        parts = entry.split("@")
        while parts and parts[-1] == "":
            parts.pop()  # Java's String.split drops trailing empty strings
        if len(parts) != 2:
            raise UserError(f"Invalid configuration value for controller.quorum.voters. {_VOTERS_FORM}")
        try:
            node_id = parse_java_int(parts[0])
        except ValueError:
            raise UserError(f"Failed to parse voter ID as an integer from {parts[0]}") from None
        match = _HOST_PORT.match(parts[1])
        if match is None or not match.group(1):
            raise UserError(
                f"Failed to parse host name from entry {entry} for the configuration controller.quorum.voters. {_VOTERS_FORM}"
            )
        port = int(match.group(2))
        if port > 65535:
            raise UserError(f"Invalid port {port} in entry {entry} for the configuration controller.quorum.voters")
        voters.append(StaticVoter(node_id, match.group(1), port))
    return tuple(voters)
