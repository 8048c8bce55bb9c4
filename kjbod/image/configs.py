"""Dynamic configs per resource (ConfigurationControlManager replay, CFG:411-434)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from kjbod.common.kafka_configs import MIN_INSYNC_REPLICAS
from kjbod.records import CONFIG_RESOURCE_BROKER, CONFIG_RESOURCE_TOPIC, ConfigRecord, Record

ConfigResource = tuple[int, str]  # (resource type id, resource name)


@dataclass(frozen=True)
class ConfigsImage:
    resources: Mapping[ConfigResource, Mapping[str, str]]

    def get(self, resource_type: int, name: str) -> Mapping[str, str]:
        return self.resources.get((resource_type, name), MappingProxyType({}))

    def write(self) -> Iterator[Record]:
        for (resource_type, name) in sorted(self.resources):
            for key, value in sorted(self.resources[(resource_type, name)].items()):
                yield ConfigRecord(resource_type=resource_type, resource_name=name, name=key, value=value)


EMPTY_CONFIGS = ConfigsImage(MappingProxyType({}))


def _positive_int(value: str | None) -> int | None:
    try:
        number = int(value.strip()) if value is not None else None
    except ValueError:
        return None
    return number if number is not None and number > 0 else None


def min_insync_default(configs: ConfigsImage) -> int:
    """The cluster default of min.insync.replicas (broker resource ""), else Kafka's default of 1."""
    return _positive_int(configs.get(CONFIG_RESOURCE_BROKER, "").get(MIN_INSYNC_REPLICAS)) or 1


def min_insync(configs: ConfigsImage, topic: str, default: int) -> int:
    """The topic's min.insync.replicas, else `default`."""
    return _positive_int(configs.get(CONFIG_RESOURCE_TOPIC, topic).get(MIN_INSYNC_REPLICAS)) or default


class ConfigsDelta:
    def __init__(self, base: ConfigsImage) -> None:
        self._resources = {key: dict(values) for key, values in base.resources.items()}

    def replay(self, record: ConfigRecord) -> None:
        key = (record.resource_type, record.resource_name)
        values = self._resources.setdefault(key, {})
        if record.value is None:
            values.pop(record.name, None)
        else:
            values[record.name] = record.value
        if not values:
            del self._resources[key]

    def remove_resource(self, resource_type: int, name: str) -> None:
        """A removed topic takes its configs with it, without ConfigRecords (RCM:564)."""
        self._resources.pop((resource_type, name), None)

    def apply(self) -> ConfigsImage:
        return ConfigsImage(MappingProxyType({k: MappingProxyType(v) for k, v in self._resources.items()}))
