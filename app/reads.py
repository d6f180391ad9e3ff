"""The read model: one function per thing a page shows that is made from a runtime's store, each
declaring the store versions it depends on (``kept``), kept while they hold in the one memo
facility (app.memo.VersionedMemo, one per read per runtime). Views parse their arguments, call a
read with the runtime and them, and render: no store hop, no key building. The fleet page reads
the same functions for every cluster's runtime.

A read's arguments are its key (hashable: filters, a resource tuple, a flag); a read declaring no
version is made on every call (what it reads is already kept by the store)."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from app.domain.gpu_sharing import Physical, physical
from app.domain.overview import Filters, Grid, build_grid, without_dra
from app.domain.room import Room, room
from app.domain.strip import Entry, strip, waiting
from app.domain.workloads import WorkloadRow, group
from app.memo import VersionedMemo

if TYPE_CHECKING:
    from app.domain.workloads_query import WorkloadsQuery
    from app.runtime import Runtime

P = ParamSpec("P")
T = TypeVar("T")
Read = Callable[Concatenate["Runtime", P], T]
MISSING = object()


def kept(*versions: str, limit: int) -> Callable[[Read[P, T]], Read[P, T]]:
    """Keep ``read(runtime, *args)`` per ``args`` while the runtime's store's ``versions`` (its
    attribute names) hold, at most ``limit`` values at a version."""

    def wrap(read: Read[P, T]) -> Read[P, T]:
        name = read.__qualname__

        @wraps(read)
        def at(runtime: Runtime, *args: P.args, **kwargs: P.kwargs) -> T:
            store = runtime.cluster.store
            memo = runtime.memos.get(name)
            if memo is None:
                memo = runtime.memos.setdefault(name, VersionedMemo(limit))
            values = memo.at((id(store), *(getattr(store, v) for v in versions)))
            key = (args, tuple(sorted(kwargs.items())))
            found = values.get(key, MISSING)
            if found is MISSING:
                found = values[key] = read(runtime, *args, **kwargs)
            return found

        at.versions = versions  # type: ignore[attr-defined]
        return at

    return wrap


def summary(runtime: Runtime, dra: bool) -> list[Entry]:
    """The strip (app.domain.strip) from the kept totals and the unschedulable pods, never every
    pod. ``dra``: the user may read DRA objects."""
    store = runtime.cluster.store
    asked = (pod.extended_requests for pod in store.objects.unschedulable_pods())
    return strip(store.overview_totals(), waiting(asked, store.devices.primaries()), dra)


@kept("rows_version", "pending_version", limit=4)
def known_names(runtime: Runtime, dra: bool) -> list[str]:
    """The extended resource names a user may see: advertised, served by DRA devices (``dra``: if
    the user may read them), or asked for by a waiting pod (apart from the grids' memo, so that
    pending pods coming and going never crowd the grids out)."""
    return [s.resource for s in summary(runtime, dra)]


@kept("fit_version", limit=8)
def room_for(runtime: Runtime, resources: tuple[str, ...]) -> dict[str, Room]:
    """What a job can use now of each of ``resources`` (app.domain.room), made again only when
    something placement depends on moved."""
    return room(runtime.cluster.store.node_facts(), list(resources))


@kept("rows_version", limit=1)
def physical_devices(runtime: Runtime) -> dict[str, Physical]:
    """Per shared device (and each name its shares are advertised as), its physical count over
    the nodes (app.domain.gpu_sharing), made again only when a row changed."""
    rows = runtime.cluster.store.overview_rows()[0]
    if not any(row.sharing for row in rows):  # nothing to count
        return {}
    return physical([({r: u.allocatable for r, u in row.usage.items()}, row.sharing) for row in rows])


@kept("rows_version", limit=64)
def grid(runtime: Runtime, filters: Filters, dra: bool) -> Grid:
    """The overview's grid for ``filters``; a user who may not read DRA objects (``dra``) gets it
    without the resources DRA devices serve, summed again over what is shown. With usage read,
    the resources it covers (GPUs) come first, on screen."""
    rows, totals = runtime.cluster.store.overview_rows()
    found = build_grid(rows, filters, totals) if dra else build_grid([without_dra(r) for r in rows], filters)
    if runtime.usage is not None:
        mappings = runtime.settings.mappings
        found.resources.sort(key=lambda r: not any(m.covers(r) for m in mappings))
    return found


@kept("rows_version", "holders_version", limit=8)
def workload_rows(runtime: Runtime, by: str) -> list[WorkloadRow]:
    """Who holds the extended resources, grouped ``by`` workload or namespace."""
    store = runtime.cluster.store
    allocatable = {r: u.allocatable for r, u in store.overview_totals().by_resource.items()}
    return group(store.objects.holders(), allocatable, by)


@kept("rows_version", "holders_version", limit=64)
def workloads_chosen(runtime: Runtime, query: WorkloadsQuery) -> list[WorkloadRow]:
    """The rows a query chooses, filtered and sorted once per query until the rows move."""
    return query.chosen(workload_rows(runtime, query.by))


def versions_of(read: Callable[..., Any]) -> tuple[str, ...]:
    """The store versions a read declared (tests check each names a real one)."""
    return tuple(getattr(read, "versions", ()))
