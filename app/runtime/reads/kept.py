"""What a read reads (``Handles``: a cluster's runtime, as the reads see it) and how a read is kept
(``kept``: per arguments while the store's versions it names hold, in one VersionedMemo per read
per runtime)."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, Protocol, TypeVar, cast

from app.base.memo import VersionedMemo

if TYPE_CHECKING:
    from app.domain.device_plugins import DevicePluginRule
    from app.domain.diagnosis import ShapeCache
    from app.kube.api.ports import ClusterPort
    from app.settings.config import Settings
    from app.usage.poller import UsagePoller


class Handles(Protocol):
    """A cluster's runtime (app.runtime.cluster.Runtime) as reads see it: its handles, no more."""

    name: str
    settings: Settings
    memos: dict[str, VersionedMemo]
    shapes: ShapeCache
    device_plugins: DevicePluginRule
    usage: UsagePoller | None

    @property
    def cluster(self) -> ClusterPort: ...


P = ParamSpec("P")
T = TypeVar("T")
Read = Callable[Concatenate["Handles", P], T]
MISSING = object()


def kept(*versions: str, limit: int) -> Callable[[Read[P, T]], Read[P, T]]:
    """Keep ``read(runtime, *args)`` per ``args`` while the runtime's store's ``versions`` (its
    attribute names) hold, at most ``limit`` values at a version."""

    def wrap(read: Read[P, T]) -> Read[P, T]:
        name = read.__qualname__

        @wraps(read)
        def at(runtime: Handles, *args: P.args, **kwargs: P.kwargs) -> T:
            store = runtime.cluster.store
            memo = runtime.memos.get(name)
            if memo is None:
                memo = runtime.memos.setdefault(name, VersionedMemo(limit))
            values = memo.at((id(store), *(getattr(store, v) for v in versions)))
            key = (args, tuple(sorted(kwargs.items())))
            found = values.get(key, MISSING)
            if found is MISSING:
                made: T = read(runtime, *args, **kwargs)
                values[key] = made
                return made
            return cast(T, found)

        at.versions = versions  # type: ignore[attr-defined]
        return cast(Read[P, T], at)

    return wrap


def versions_of(read: Callable[..., Any]) -> tuple[str, ...]:
    """The store versions a read declared (tests check each names a real one)."""
    return tuple(getattr(read, "versions", ()))
