"""The server.properties settings the storage tools read (storage reference §1.3).

Kafka turns the file into a full KafkaConfig; the storage tools use only the directories, the
node's roles and id, the controller listeners and two flags, so only those are parsed and
checked here (with KafkaConfig's messages where it has them). Settings kjbod does not read are
not validated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from kjbod.common.java import parse_java_int
from kjbod.errors import UserError
from kjbod.storage.properties import read_properties

BROKER_ROLE = "broker"
CONTROLLER_ROLE = "controller"
DEFAULT_LOG_DIR = "/tmp/kafka-logs"
DEFAULT_LISTENERS = "PLAINTEXT://:9092"

# CoreUtils.listenerListToEndPoints: NAME://host:port, host optionally in [brackets].
_ENDPOINT = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")


def java_trim(text: str) -> str:
    """`String.trim()`: strips every character <= U+0020 (not Python's Unicode whitespace)."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def parse_csv_list(text: str) -> list[str]:
    """`Utils.parseCsvList`: trimmed items split at commas (with surrounding spaces), no empties."""
    return [item for item in re.split(r"\s*,\s*", text.strip()) if item]


@dataclass(frozen=True)
class Endpoint:
    listener: str
    host: str | None
    port: int


@dataclass(frozen=True)
class NodeConfig:
    """What the storage tools need from one node's server.properties."""

    path: Path
    process_roles: tuple[str, ...]
    node_id: int
    log_dirs: tuple[str, ...]
    metadata_log_dir: str
    controller_listener_names: tuple[str, ...]
    quorum_voters: str
    listeners: str
    advertised_listeners: str | None
    unstable_feature_versions: bool
    # `broker.rack` (what a broker registers with), if set and not empty.
    broker_rack: str | None = None
    # The raw `listener.security.protocol.map`, if the file sets it.
    security_protocol_map: str | None = None
    # `min.insync.replicas` (INT, at least 1, default 1): what a controller writes as the
    # cluster-level value when it bootstraps ELR (ActivationRecordsGenerator, 4.4.0 :98-103).
    min_insync_replicas: int = 1
    # `cordoned.log.dirs` as written (KIP-1066), if set: a broker checks it at start-up and
    # reports the directories with its heartbeats (tools/cluster/registration.py).
    cordoned_log_dirs: str | None = None

    @property
    def kraft_mode(self) -> bool:
        return bool(self.process_roles)

    @property
    def is_controller(self) -> bool:
        return CONTROLLER_ROLE in self.process_roles

    @property
    def directories(self) -> tuple[str, ...]:
        """The log dirs and the metadata log dir, duplicates removed, in Java String order.

        Java compares UTF-16 code units; Python compares code points. They differ only for
        characters outside the BMP, so sorting by the UTF-16 encoding keeps Java's order.
        """
        unique = set(self.log_dirs) | {self.metadata_log_dir}
        return tuple(sorted(unique, key=lambda d: d.encode("utf-16-be")))

    def controller_endpoints(self) -> list[Endpoint]:
        """KafkaConfig.effectiveAdvertisedControllerListeners: for each controller listener
        name in order, its advertised endpoint if there is one, else its `listeners` endpoint."""
        advertised = _endpoints(self.advertised_listeners or "", self.path, "advertised.listeners")
        configured = _endpoints(self.listeners, self.path, "listeners")
        found: list[Endpoint] = []
        for name in self.controller_listener_names:
            # Listener names compare upper-cased (ListenerName.normalised).
            match = next((e for e in advertised if e.listener == name.upper()), None)
            match = match or next((e for e in configured if e.listener == name.upper()), None)
            if match is not None:
                found.append(match)
        return found

    def security_protocol(self, listener: str) -> str:
        """A listener's security protocol: listener.security.protocol.map, else its own name when
        that names a protocol, else PLAINTEXT (KRaft maps an unmapped controller listener so)."""
        for item in parse_csv_list(self.security_protocol_map or ""):
            name, _, protocol = item.partition(":")
            if name.strip().upper() == listener.upper():
                return protocol.strip().upper()
        return listener.upper() if listener.upper() in SECURITY_PROTOCOL_IDS else "PLAINTEXT"


# SecurityProtocol ids (clients/src/main/java/org/apache/kafka/common/security/auth/SecurityProtocol.java:28-34).
SECURITY_PROTOCOL_IDS = {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}


def _config_error(path: Path, key: str, value: str, reason: str) -> UserError:
    # ConfigException's text, with the file named so the operator knows where to look.
    return UserError(f"Invalid value {value} for configuration {key}: {reason} (in {path})")


def listener_endpoints(text: str, path: Path, key: str) -> list[Endpoint]:
    """`listeners`-style text as endpoints (listener names upper-cased); errors name `key` and the file."""
    return _endpoints(text, path, key)


def _endpoints(text: str, path: Path, key: str) -> list[Endpoint]:
    endpoints = []
    for item in parse_csv_list(text):
        match = _ENDPOINT.match(item)
        if match is None:
            raise _config_error(path, key, text, f"Unable to parse {item} to a broker endpoint")
        listener, host, port = match.groups()
        endpoints.append(Endpoint(listener.upper(), host or None, int(port)))
    return endpoints


def _shown(value: str) -> str:
    return value.encode("unicode_escape").decode("ascii")


def _check_text(value: str, key: str, path: Path) -> str:
    """Text kjbod stores or prints must encode: a \\uXXXX escape can make a lone UTF-16
    surrogate, which Java keeps in a String but no file or terminal can take."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        reason = f"{value[exc.start]!a} is half of a UTF-16 surrogate pair, not a character"
        raise _config_error(path, key, _shown(value), reason) from None
    return value


def _check_path(directory: str, key: str, value: str, path: Path) -> None:
    """A directory the tools open must be a path the operating system takes."""
    _check_text(directory, key, path)
    if "\0" in directory:
        raise _config_error(path, key, _shown(value), "a directory path cannot contain a NUL character")


def _text_setting(props: dict[str, str], key: str, path: Path, default: str | None = None) -> str | None:
    raw = props.get(key, default)
    return None if raw is None else _check_text(raw, key, path)


def _int_setting(props: dict[str, str], key: str, path: Path) -> int | None:
    raw = props.get(key)
    if raw is None:
        return None
    try:
        # ConfigDef trims INT values before parsing them.
        return parse_java_int(java_trim(raw))
    except ValueError:
        raise _config_error(path, key, raw, "Not a number of type INT") from None


def _bool_setting(props: dict[str, str], key: str, path: Path) -> bool:
    raw = props.get(key)
    if raw is None:
        return False
    value = java_trim(raw).lower()
    if value not in ("true", "false"):
        raise _config_error(path, key, raw, "Expected value to be either true or false")
    return value == "true"


def load_node_config(path: Path) -> NodeConfig:
    """Read server.properties; raises UserError naming the file for anything unusable."""
    props = read_properties(path)
    roles: list[str] = []
    for role in parse_csv_list(_text_setting(props, "process.roles", path, "") or ""):
        if role not in (BROKER_ROLE, CONTROLLER_ROLE):
            raise UserError(
                f"Unknown process role '{role}' (only 'broker' and 'controller' are allowed roles) (in {path})"
            )
        if role not in roles:
            roles.append(role)
    # node.id and broker.id are synonyms (KafkaConfig.populateSynonyms); -1 means unset.
    node_id = _int_setting(props, "node.id", path)
    if node_id is None:
        node_id = _int_setting(props, "broker.id", path)
    log_dirs_key = "log.dirs" if props.get("log.dirs") is not None else "log.dir"
    log_dirs = parse_csv_list(props.get(log_dirs_key, DEFAULT_LOG_DIR))
    if not log_dirs:
        raise UserError(f"At least one log directory must be defined via log.dirs or log.dir. (in {path})")
    for directory in log_dirs:
        _check_path(directory, log_dirs_key, props[log_dirs_key] if log_dirs_key in props else directory, path)
    metadata_log_dir = props.get("metadata.log.dir") or log_dirs[0]
    _check_path(metadata_log_dir, "metadata.log.dir", metadata_log_dir, path)
    return NodeConfig(
        path=path,
        process_roles=tuple(roles),
        node_id=-1 if node_id is None else node_id,
        log_dirs=tuple(log_dirs),
        metadata_log_dir=metadata_log_dir,
        controller_listener_names=tuple(parse_csv_list(_text_setting(props, "controller.listener.names", path, "") or "")),
        quorum_voters=(_text_setting(props, "controller.quorum.voters", path, "") or "").strip(),
        listeners=_text_setting(props, "listeners", path, DEFAULT_LISTENERS) or DEFAULT_LISTENERS,
        advertised_listeners=_text_setting(props, "advertised.listeners", path),
        unstable_feature_versions=_bool_setting(props, "unstable.feature.versions.enable", path),
        broker_rack=_text_setting(props, "broker.rack", path) or None,
        security_protocol_map=_text_setting(props, "listener.security.protocol.map", path),
        min_insync_replicas=_min_insync_replicas(props, path),
        cordoned_log_dirs=_text_setting(props, "cordoned.log.dirs", path),
    )


def _min_insync_replicas(props: dict[str, str], path: Path) -> int:
    value = _int_setting(props, "min.insync.replicas", path)
    if value is None:
        return 1
    if value < 1:
        raise _config_error(path, "min.insync.replicas", props["min.insync.replicas"], "Value must be at least 1")
    return value
