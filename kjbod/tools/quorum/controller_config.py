"""A controller's server.properties as `kafka-metadata-quorum add-controller` reads it.

`tools/src/main/java/org/apache/kafka/tools/MetadataQuorumCommand.java:343-418`: the node id, the
metadata directory (metadata.log.dir, else the first of log.dirs), the directory id in that
directory's meta.properties, and the advertised endpoint of every controller listener. The tool
reads the file as plain properties (not a full KafkaConfig), and each refusal is one of its
TerseException messages; a node.id that is not a number is Integer.parseInt's
NumberFormatException, named with the file here.
"""

from __future__ import annotations

import random
from pathlib import Path

from kjbod.common.java import parse_java_int
from kjbod.common.kafka_uuid import Uuid
from kjbod.common.kafka_release import KafkaRelease
from kjbod.common.versions import RELEASE_4_4
from kjbod.controller.quorum_control import DEFAULT_CATCH_UP_RATE, ControllerProcess
from kjbod.errors import UserError
from kjbod.records import ControllerEndpoint
from kjbod.storage.config import SECURITY_PROTOCOL_IDS, listener_endpoints
from kjbod.storage.ensemble import DirectoryState, load_directory
from kjbod.storage.properties import PropertiesError, read_properties

_VALID = "Is this a valid controller configuration file?"


def _properties(path: Path, release: KafkaRelease) -> dict[str, str]:
    """MetadataQuorumCommand.getProperties: 4.3.1's message (4.3.1 MetadataQuorumCommand.java:171)
    became `... does not exist.` in 4.4.0 (4.4.0 MetadataQuorumCommand.java:174)."""
    try:
        return read_properties(path)
    except PropertiesError as exc:
        if exc.missing:
            ending = "does not exist." if release.version >= RELEASE_4_4 else "does not exists!"
            raise UserError(f"Properties file {path} {ending}") from None
        raise


def controller_id(props: dict[str, str], path: Path) -> int:
    """MetadataQuorumCommand.getControllerId (MetadataQuorumCommand.java:343-358)."""
    if "node.id" not in props:
        raise UserError(f"node.id not found in configuration file. {_VALID}")
    text = props["node.id"]
    try:
        node_id = parse_java_int(text)
    except ValueError:
        raise UserError(f'For input string: "{text}" (node.id in {path})') from None
    if node_id < 0:
        raise UserError(f"node.id was negative in configuration file. {_VALID}")
    if "controller" not in props.get("process.roles", ""):
        raise UserError(f"process.roles did not contain 'controller' in configuration file. {_VALID}")
    return node_id


def metadata_directory(props: dict[str, str]) -> str:
    """MetadataQuorumCommand.getMetadataDirectory (MetadataQuorumCommand.java:360-373): note that
    `log.dir` does not count, and log.dirs is split as String.split, without trimming items."""
    if "metadata.log.dir" in props:
        return props["metadata.log.dir"]
    if "log.dirs" in props:
        dirs = props["log.dirs"].strip().split(",")
        if dirs and dirs[0]:
            return dirs[0]
    raise UserError(f"Neither metadata.log.dir nor log.dirs were found. {_VALID}")


def metadata_directory_id(directory: str) -> tuple[str, str | None]:
    """The directory id (and cluster id) in the metadata directory's meta.properties
    (MetadataQuorumCommand.getMetadataDirectoryId, MetadataQuorumCommand.java:375-388)."""
    loaded = load_directory(directory)
    if loaded.state is not DirectoryState.FORMATTED or loaded.meta is None:
        raise UserError(f"Unable to read meta.properties from {directory}")
    if loaded.meta.directory_id is None:
        raise UserError(f"No directory id found in {directory}")
    return loaded.meta.directory_id, loaded.meta.cluster_id


def controller_endpoints(props: dict[str, str], path: Path) -> tuple[ControllerEndpoint, ...]:
    """MetadataQuorumCommand.getControllerAdvertisedListeners (MetadataQuorumCommand.java:390-418):
    each name of controller.listener.names, its advertised endpoint or else its listener, an
    unset host as `localhost`; a name given twice counts once."""
    listeners = {e.listener: e for e in listener_endpoints(props.get("listeners", ""), path, "listeners")}
    listeners.update({e.listener: e for e in listener_endpoints(props.get("advertised.listeners", ""), path, "advertised.listeners")})
    if "controller.listener.names" not in props:
        raise UserError(f"controller.listener.names was not found. {_VALID}")
    protocols = _security_protocols(props)
    found: dict[str, ControllerEndpoint] = {}
    for name in props["controller.listener.names"].split(","):
        name = name.upper()
        endpoint = listeners.get(name)
        if endpoint is None:
            raise UserError(f"Cannot find information about controller listener name: {name}")
        if not 0 <= endpoint.port <= 65535:
            # InetSocketAddress's IllegalArgumentException, which the tool does not catch.
            raise UserError(f"port out of range:{endpoint.port} (the {name} listener in {path})")
        protocol = protocols.get(name, name if name in SECURITY_PROTOCOL_IDS else "PLAINTEXT")
        found.setdefault(
            f"{name}://{endpoint.host}:{endpoint.port}",
            ControllerEndpoint(
                name=name, host=endpoint.host or "localhost", port=endpoint.port, security_protocol=SECURITY_PROTOCOL_IDS.get(protocol, 0)
            ),
        )
    return tuple(found.values())


def _security_protocols(props: dict[str, str]) -> dict[str, str]:
    protocols = {}
    for item in props.get("listener.security.protocol.map", "").split(","):
        name, sep, protocol = item.partition(":")
        if sep:
            protocols[name.strip().upper()] = protocol.strip().upper()
    return protocols


def read_controller(
    path: Path,
    release: KafkaRelease,
    *,
    catch_up_rate: int = DEFAULT_CATCH_UP_RATE,
    supported_features: dict[str, tuple[int, int]] | None = None,
    rng: random.Random | None = None,
) -> ControllerProcess:
    """The controller a server.properties describes, in the order add-controller reads it; without
    `supported_features` it supports what a controller of `release` does."""
    props = _properties(path, release)
    node_id = controller_id(props, path)
    directory = metadata_directory(props)
    directory_id, cluster_id = metadata_directory_id(directory)
    endpoints = controller_endpoints(props, path)
    return ControllerProcess(
        node_id=node_id,
        directory_id=directory_id,
        end_points=endpoints,
        cluster_id=cluster_id,
        supported_features=supported_features if supported_features is not None else release.supported_ranges(),
        catch_up_rate=catch_up_rate,
        incarnation_id=str(Uuid.random(rng)),
    )
