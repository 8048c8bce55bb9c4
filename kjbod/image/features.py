"""Finalized features: metadata.version and the other feature levels (FCM replay, §6)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from kjbod.common.versions import METADATA_VERSION, MetadataVersion, metadata_version_of_record
from kjbod.errors import ReplayError
from kjbod.records import FeatureLevelRecord, Record


@dataclass(frozen=True)
class FeaturesImage:
    metadata_version: MetadataVersion | None
    # Finalized levels of the features other than metadata.version; level 0 is never stored.
    finalized: Mapping[str, int]

    def level(self, name: str) -> int:
        """The finalized level of a feature, 0 when it is not finalized."""
        if name == METADATA_VERSION:
            return self.metadata_version.level if self.metadata_version else 0
        return self.finalized.get(name, 0)

    def write(self) -> Iterator[Record]:
        """metadata.version first, so a snapshot fixes the record versions before anything else."""
        if self.metadata_version is not None:
            yield FeatureLevelRecord(name=METADATA_VERSION, feature_level=self.metadata_version.level)
        for name in sorted(self.finalized):
            yield FeatureLevelRecord(name=name, feature_level=self.finalized[name])


EMPTY_FEATURES = FeaturesImage(None, MappingProxyType({}))


class FeaturesDelta:
    def __init__(self, base: FeaturesImage) -> None:
        self._metadata_version = base.metadata_version
        self._finalized = dict(base.finalized)

    def replay(self, record: FeatureLevelRecord) -> None:
        """As Kafka's image (4.4.0 image/FeaturesDelta.java:61-80): metadata.version must be a
        version (a newer release's level is kept as `UNKNOWN <level>`); any other feature is kept
        as its level, whether kjbod models it or not, so the state holds what the cluster
        finalized and export writes it back; level 0 removes it."""
        if record.name == METADATA_VERSION:
            try:
                self._metadata_version = metadata_version_of_record(record.feature_level)
            except ValueError as exc:
                raise ReplayError(f"Unable to replay {record}: {exc}") from None
            return
        if record.feature_level == 0:
            self._finalized.pop(record.name, None)
            return
        self._finalized[record.name] = record.feature_level

    def apply(self) -> FeaturesImage:
        return FeaturesImage(self._metadata_version, MappingProxyType(self._finalized))
