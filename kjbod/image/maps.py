"""Read-only maps that share what did not change: the maps of an image, and the changes a delta
makes to them.

An image made by a delta must not copy a million-entry map to change a few keys: a LayeredMap
puts a small layer of changes over a shared, untouched base, and MapChanges records a delta's
changes the same way until `freeze` gives the new image's map.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from math import isqrt
from typing import Any


class FrozenDict(dict):
    """A dict nobody changes once built: the flat maps of an image (a topic's partitions, the
    topics by id). A dict subclass rather than a MappingProxyType so that reads stay C-fast and
    a later image can layer its changes over this very object instead of copying it."""

    __slots__ = ()

    def _read_only(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("an image's maps are read-only")

    __setitem__ = __delitem__ = __ior__ = _read_only  # type: ignore[assignment]
    pop = popitem = clear = update = setdefault = _read_only  # type: ignore[assignment]

    def __reduce__(self) -> Any:  # copy/pickle without going through __setitem__
        return (FrozenDict, (dict(self),))


class SharedMap(Mapping):
    """A read-only map that an image shares without copying, held some other way than a dict (the
    lazy maps over a columnar snapshot, kjbod/image/columnar.py). MapChanges and LayeredMap layer
    over it as over a FrozenDict."""

    __slots__ = ()


_MISSING: Any = object()


def _layer_limit(base: Mapping) -> int:
    """How many changed keys a layered map carries before it is flattened. Deriving a map copies
    its layer and flattening copies the base: a limit near the square root keeps both small
    (O(sqrt n) per derived map, amortized), where copying the whole map each time was O(n).
    Flattening a SharedMap also creates an object for each of its entries (a topic read from
    columns), so it waits until the layer is as large as the base."""
    size = len(base)
    limit = 2 * isqrt(size) + 16
    return max(limit, size) if isinstance(base, SharedMap) else limit


class _Overlay:
    """Reads through a layer of changes to a shared base: the layer first, then the base unless
    the key was deleted from it."""

    __slots__ = ("_base", "_top", "_gone", "_len")

    def get(self, key: Any, default: Any = None) -> Any:
        value = self._top.get(key, _MISSING)
        if value is not _MISSING:
            return value
        if key in self._gone:
            return default
        return self._base.get(key, default)

    def __getitem__(self, key: Any) -> Any:
        value = self.get(key, _MISSING)
        if value is _MISSING:
            raise KeyError(key)
        return value

    def __contains__(self, key: object) -> bool:
        return key in self._top or (key not in self._gone and key in self._base)

    def __len__(self) -> int:
        return self._len


class LayeredMap(_Overlay, Mapping):
    """A read-only map: a shared FrozenDict base with a small layer of changes on top.

    It iterates exactly as the dict it stands for would (the same keys in the same order): a key
    changed in place keeps its position, a new key (or a base key deleted and added again) comes
    after the base, in the order it was added. Point reads look at the layer, then the base;
    iteration builds the flat dict once and keeps it.
    """

    __slots__ = ("_flat",)

    def __init__(self, base: FrozenDict | SharedMap, top: dict, gone: frozenset, length: int) -> None:
        self._base = base
        self._top = top  # key -> value: base keys changed in place, and keys added after the base
        self._gone = gone  # base keys deleted (a key added again is in _top too)
        self._len = length
        self._flat: dict | None = None

    def flat(self) -> dict:
        if self._flat is None:
            self._flat = _flatten(self._base, self._top, self._gone)
        return self._flat

    def __iter__(self) -> Iterator:
        if self._flat is None and isinstance(self._base, SharedMap):
            return self._keys()
        return iter(self.flat())

    def _keys(self) -> Iterator:
        """The keys in the flat dict's order, without reading a SharedMap base's values (which
        would make an object for each): the base's keys but the deleted ones, then the keys
        added after it."""
        base, top, gone = self._base, self._top, self._gone
        yield from (key for key in base if key not in gone) if gone else base
        yield from (key for key in top if key in gone or key not in base)

    def keys(self) -> KeysView:
        if self._flat is None and isinstance(self._base, SharedMap):
            return KeysView(self)
        return self.flat().keys()

    def items(self) -> ItemsView:
        return self.flat().items()

    def values(self) -> ValuesView:
        return self.flat().values()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LayeredMap):
            other = other.flat()
        return self.flat() == other if isinstance(other, Mapping) else NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LayeredMap({self.flat()!r})"

    def __reduce__(self) -> Any:
        return (FrozenDict, (self.flat(),))


def _flatten(base: Mapping, top: dict, gone: frozenset | set) -> dict:
    if not gone:
        flat = dict(base)
        flat.update(top)  # changed keys in place, new keys appended in order
        return flat
    flat = {k: v for k, v in base.items() if k not in gone}
    for k, v in top.items():
        flat[k] = v
    return flat


class MapChanges(_Overlay):
    """The changes a delta makes to one map of its base image: dict operations over a shared,
    untouched base (a FrozenDict or LayeredMap), so a delta that changes one partition of a
    topic with thousands costs O(changes), not a copy of the topic. `freeze` gives the map of
    the new image."""

    __slots__ = ()

    def __init__(self, base: Mapping) -> None:
        if isinstance(base, LayeredMap):
            self._base: Mapping = base._base
            self._top = dict(base._top)
            self._gone = set(base._gone)
            self._len = base._len
        else:
            self._base = base if isinstance(base, (FrozenDict, SharedMap)) else FrozenDict(base)
            self._top = {}
            self._gone = set()
            self._len = len(self._base)

    def __iter__(self) -> Iterator:
        return iter(_flatten(self._base, self._top, self._gone))

    def __setitem__(self, key: Any, value: Any) -> None:
        if key not in self:
            self._len += 1
        self._top[key] = value

    def __delitem__(self, key: Any) -> None:
        if key in self._top:
            del self._top[key]
            if key in self._base and key not in self._gone:
                self._gone.add(key)  # it was a base key changed in place
        elif key in self._base and key not in self._gone:
            self._gone.add(key)
        else:
            raise KeyError(key)
        self._len -= 1

    def pop(self, key: Any, default: Any = _MISSING) -> Any:
        value = self.get(key, _MISSING)
        if value is _MISSING:
            if default is _MISSING:
                raise KeyError(key)
            return default
        del self[key]
        return value

    def freeze(self) -> FrozenDict | LayeredMap:
        if not self._top and not self._gone:
            return self._base  # type: ignore[return-value]
        if len(self._top) + len(self._gone) > _layer_limit(self._base):
            return FrozenDict(_flatten(self._base, self._top, self._gone))
        return LayeredMap(self._base, self._top, frozenset(self._gone), self._len)  # type: ignore[arg-type]


def frozen(mapping: Mapping) -> FrozenDict | LayeredMap | SharedMap:
    return mapping if isinstance(mapping, (FrozenDict, LayeredMap, SharedMap)) else FrozenDict(mapping)


EMPTY_MAP = FrozenDict()


def frozen_changes(changes: dict | MapChanges) -> FrozenDict | LayeredMap:
    return changes.freeze() if isinstance(changes, MapChanges) else FrozenDict(changes)
