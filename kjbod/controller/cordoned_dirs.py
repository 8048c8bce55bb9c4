"""KIP-1066's `cordoned.log.dirs` as Kafka 4.3.1 and 4.4.0 run it (spec: kafka-4.4-spec.md §4).

A broker's cordoned directories are a broker config (a list of log.dirs paths, or `*`): static in
its server.properties or dynamic, per broker, as a ConfigRecord on its BROKER resource. The
controller never reads paths: the broker maps the effective list to directory ids and reports
them with its heartbeats, and the controller writes them into the registration
(BrokerRegistrationChangeRecord v3). kjbod plays both sides: what the broker would validate and
report is computed here from the state (the dynamic config, else the server.properties value kjbod
read at `broker register --config`), and what the controller does with it is ClusterControl's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kjbod.common.java import hashmap_order
from kjbod.common.kafka_configs import CORDONED_LOG_DIRS, CORDONED_LOG_DIRS_ALL
from kjbod.common.kafka_uuid import uuid_hash
from kjbod.common.versions import MetadataVersion
from kjbod.controller.errors import ControllerApiError, Errors
from kjbod.errors import UserError
from kjbod.image import Image
from kjbod.records import CONFIG_RESOURCE_BROKER

# ConfigDef's COMMA_WITH_WHITESPACE (4.3.1 clients ConfigDef.java:86).
_COMMA_WITH_WHITESPACE = re.compile(r"\s*,\s*")

# ConfigurationControlManager's errors (4.3.1 metadata ConfigurationControlManager.java:423-429;
# the two spaces after "controllers," are Kafka's).
DISABLED_TEXT = f"The {CORDONED_LOG_DIRS} configuration value cannot be set because it requires metadata.version >= 4.3-IV0"
NOT_A_SUBSET_TEXT = (
    f"When updating {CORDONED_LOG_DIRS} via controllers,  the new value must be a subset of the current configuration value."
)


def _java_trim(text: str) -> str:
    return text.strip("".join(chr(c) for c in range(0x21)))


def parse_list(value: str) -> list[str]:
    """ConfigDef's LIST parsing (4.3.1 clients ConfigDef.java:766-773): nothing for blank text,
    else the trimmed text split at commas with the whitespace around them (empty items kept)."""
    trimmed = _java_trim(value)
    return [] if not trimmed else _COMMA_WITH_WHITESPACE.split(trimmed)


def _check_list(entries: list[str]) -> None:
    """`ValidList.anyNonDuplicateValues(true, true)` (4.3.1 storage LogConfig.java:149; clients
    ConfigDef.java:1055-1090)."""
    if len(set(entries)) != len(entries):
        raise UserError(f"Configuration '{CORDONED_LOG_DIRS}' values must not be duplicated.")
    if any(entry == "" for entry in entries):
        raise UserError(f"Configuration '{CORDONED_LOG_DIRS}' values must not be empty.")


def effective_paths(value: str, log_dirs: Sequence[str]) -> list[str]:
    """`AbstractKafkaConfig.cordonedLogDirs()` (4.3.1 server AbstractKafkaConfig.java:96-102):
    every log.dirs entry when the list holds `*`, else the list as written."""
    entries = parse_list(value)
    return list(log_dirs) if CORDONED_LOG_DIRS_ALL in entries else entries


def check_static(value: str, log_dirs: Sequence[str]) -> None:
    """What a broker checks at start-up (KafkaConfig.validateCordonedLogDirs, 4.3.1
    kafka/server/KafkaConfig.scala:532-540): Kafka fails to start with these messages."""
    entries = parse_list(value)
    _check_list(entries)
    if CORDONED_LOG_DIRS_ALL in entries:
        if len(entries) != 1:
            raise UserError(f"requirement failed: When {CORDONED_LOG_DIRS} is set to {CORDONED_LOG_DIRS_ALL}, it must not contain other values")
        return
    missing = [entry for entry in entries if entry not in log_dirs]
    if missing:
        raise UserError(
            f"requirement failed: All entries in {CORDONED_LOG_DIRS} must be present in log.dirs or log.dir. "
            f"Missing entries : {', '.join(missing)}"
        )


def check_dynamic(value: str, log_dirs: Sequence[str]) -> None:
    """What the broker checks before it forwards a new dynamic value to the controller
    (DynamicLogConfig.validateCordonedLogDirs, 4.3.1 kafka/server/DynamicBrokerConfig.scala:582-590)."""
    _check_list(parse_list(value))
    effective = effective_paths(value, log_dirs)
    for entry in effective:
        if entry not in log_dirs:
            # ConfigException(name, value, message): the value is the List, as Java prints one.
            raise UserError(
                f"Invalid value [{', '.join(effective)}] for configuration {CORDONED_LOG_DIRS}: Invalid entry in "
                f"{CORDONED_LOG_DIRS}: {entry}. All cordoned log dirs must be entries of log.dirs or log.dir."
            )


def check_controller(mv: MetadataVersion, current: str | None, new: str | None, *, forwarded: bool) -> None:
    """The controller's checks of a ConfigRecord for cordoned.log.dirs on a broker resource
    (ConfigurationControlManager.isCordonedLogDirsDisabled / isCordonedLogDirsInvalid, 4.3.1
    :361-385, :445-470; the MV check at 4.4.0 :470): none below 4.3-IV0, deletions included; a
    request not forwarded by a broker (`--bootstrap-controller`) may only remove entries, since
    controllers know directory ids, not paths. `current` is the resource's dynamic value."""
    if not mv.cordoned_log_dirs_supported:
        raise ControllerApiError(Errors.INVALID_CONFIG, DISABLED_TEXT)
    if forwarded or new is None or not new.strip():
        return
    current_dirs = [] if current is None else _COMMA_WITH_WHITESPACE.split(current.strip())
    if not set(_COMMA_WITH_WHITESPACE.split(new.strip())) <= set(current_dirs):
        raise ControllerApiError(Errors.INVALID_CONFIG, NOT_A_SUBSET_TEXT)


def dynamic_value(image: Image, broker_id: int) -> str | None:
    """The broker's dynamic cordoned.log.dirs (a per-broker config only: the cluster default is
    refused, DynamicBrokerConfig.PER_BROKER_CONFIGS)."""
    return image.configs.get(CONFIG_RESOURCE_BROKER, str(broker_id)).get(CORDONED_LOG_DIRS)


def configured_value(image: Image, broker_id: int) -> str | None:
    """The broker's effective cordoned.log.dirs text: its dynamic value, else the one of its
    server.properties; None when kjbod knows neither."""
    dynamic = dynamic_value(image, broker_id)
    return dynamic if dynamic is not None else image.cluster.static_cordoned.get(broker_id)


def broker_paths(image: Image, broker_id: int) -> list[str]:
    """The broker's log.dirs as kjbod knows them (paths of its configured directories)."""
    return [log_dir.path for log_dir in image.cluster.log_dirs.get(broker_id, ())]


def cordoned_paths(image: Image, broker_id: int) -> list[str]:
    """The paths the broker holds cordoned: its effective config, or, where kjbod knows no config,
    the paths of the directories its registration lists as cordoned."""
    value = configured_value(image, broker_id)
    if value is not None:
        return effective_paths(value, broker_paths(image, broker_id))
    broker = image.cluster.brokers.get(broker_id)
    cordoned = broker.cordoned or () if broker is not None else ()
    return [path for d in cordoned if (path := image.cluster.path_of(broker_id, d)) is not None]


def reported_cordoned(image: Image, broker_id: int) -> tuple[str, ...] | None:
    """The CordonedLogDirs a caught-up broker sends with its heartbeat (BrokerLifecycleManager,
    4.3.1 server BrokerLifecycleManager.java:573-575, 652-656): nothing below 4.3-IV0; else the ids
    of its effective cordoned.log.dirs, in the order of the Java HashSet they are collected in.
    Where kjbod knows no cordoned.log.dirs of the broker (a broker imported from a snapshot), the
    broker repeats what its registration holds, or reports none if it never reported."""
    mv = image.features.metadata_version
    broker = image.cluster.brokers.get(broker_id)
    if mv is None or not mv.cordoned_log_dirs_supported or broker is None:
        return None
    value = configured_value(image, broker_id)
    if value is None:
        return broker.cordoned if broker.cordoned is not None else ()
    ids = {log_dir.path: log_dir.directory_id for log_dir in reversed(image.cluster.log_dirs.get(broker_id, ()))}
    paths = effective_paths(value, broker_paths(image, broker_id))
    return tuple(hashmap_order([ids[p] for p in paths if p in ids], uuid_hash))
