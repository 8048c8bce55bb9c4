"""Shell completion from the cluster state: broker ids, topic names and release versions.

The shell runs `kjbod` at every TAB, so these read only the state's small name index
(kjbod.log.name_index), never the state itself, and import nothing heavy. The state is the one
the command line names (--state, else KJBOD_STATE, else ./kjbod-state); without an index
(no state there yet) they offer nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

import typer

from kjbod.log.name_index import NameIndex, read_name_index


def _index(ctx: typer.Context) -> NameIndex | None:
    state = ctx.find_root().params.get("state") or os.environ.get("KJBOD_STATE") or "kjbod-state"
    return read_name_index(Path(state))


def _matching(candidates: list[str], incomplete: str) -> list[str]:
    return [candidate for candidate in candidates if candidate.startswith(incomplete)]


def _in_list(candidates: list[str], incomplete: str) -> list[str]:
    """The next item of a comma-separated list (`1,2,` offers the ids not listed yet)."""
    done, comma, last = incomplete.rpartition(",")
    listed = set(done.split(",")) if comma else set()
    prefix = done + comma
    return [prefix + candidate for candidate in candidates if candidate.startswith(last) and candidate not in listed]


def _brokers(ctx: typer.Context) -> list[str]:
    index = _index(ctx)
    return [str(broker) for broker in index.brokers] if index else []


def _topics(ctx: typer.Context) -> list[str]:
    index = _index(ctx)
    return list(index.topics) if index else []


def broker_id(ctx: typer.Context, incomplete: str) -> list[str]:
    return _matching(_brokers(ctx), incomplete)


def broker_list(ctx: typer.Context, incomplete: str) -> list[str]:
    return _in_list(_brokers(ctx), incomplete)


def topic_name(ctx: typer.Context, incomplete: str) -> list[str]:
    return _matching(_topics(ctx), incomplete)


def topic_list(ctx: typer.Context, incomplete: str) -> list[str]:
    return _in_list(_topics(ctx), incomplete)


def release_version(ctx: typer.Context, incomplete: str) -> list[str]:
    """Production releases (`4.3`) and metadata.versions (`4.3-IV0`), oldest first; for
    `features upgrade` only those above the state's metadata.version, for `downgrade` only
    those below it. The versions are those of the release the line names (--kafka-version, else
    KJBOD_KAFKA_VERSION, else the newest)."""
    from kjbod.common.kafka_release import NEWEST, kafka_release
    from kjbod.errors import UsageError

    try:
        release = kafka_release(ctx.find_root().params.get("kafka_version") or os.environ.get("KJBOD_KAFKA_VERSION") or NEWEST.name)
    except UsageError:
        return []
    current = None
    if ctx.info_name in ("upgrade", "downgrade"):
        index = _index(ctx)
        current = index.metadata_version if index else None
    versions = [mv for mv in release.metadata_versions if release.is_production(mv)]
    if current is not None:
        versions = [mv for mv in versions if (mv.level > current if ctx.info_name == "upgrade" else mv.level < current)]
    names: list[str] = []
    for mv in versions:
        # A bare release (4.3) names its newest production metadata.version: offered with it.
        if release.parse_metadata_version(mv.release) is mv:
            names.append(mv.release)
        names.append(mv.name)
    return _matching(names, incomplete)
