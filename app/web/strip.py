"""The summary strip (app.domain.strip) read from the store; and the names a user may pick from
(the pickers offer them, filters refuse others)."""

from __future__ import annotations

from app.domain.gpu_sharing import Physical, physical
from app.domain.room import Room, room
from app.domain.strip import Entry, strip, waiting
from app.runtime import Runtime
from app.web.render_cache import RenderCaches


def summary_strip(state: Runtime, dra: bool) -> list[Entry]:
    """The strip (app.domain.strip) from the kept totals and the unschedulable pods, never every
    pod. ``dra``: the user may read DRA objects."""
    store = state.cluster.store
    asked = (pod.extended_requests for pod in store.objects.unschedulable_pods())
    return strip(store.overview_totals(), waiting(asked, store.devices.primaries()), dra)


def room_of(state: Runtime, resources: list[str]) -> dict[str, Room]:
    """What a job can use now of each of ``resources`` (app.domain.room), made again only when
    something placement depends on moved."""
    store = state.cluster.store
    memo = RenderCaches.get().room.at((id(store), store.fit_version))
    key = tuple(resources)
    found = memo.get(key)
    if found is None:
        found = memo[key] = room(store.node_facts(), resources)
    return found


def physical_of(state: Runtime) -> dict[str, Physical]:
    """Per shared device (and each name its shares are advertised as), its physical count over
    the nodes (app.domain.gpu_sharing), made again only when a row changed."""
    store = state.cluster.store
    memo = RenderCaches.get().grids.at(store.rows_version)  # rows alone decide it
    found = memo.get("physical")
    if found is None:
        rows = store.overview_rows()[0]
        sharing = any(row.sharing for row in rows)  # else nothing to count
        found = memo["physical"] = (
            physical([({r: u.allocatable for r, u in row.usage.items()}, row.sharing) for row in rows])
            if sharing
            else {}
        )
    return found


def known_names(state: Runtime, dra: bool) -> list[str]:
    """The extended resource names a user may see: advertised, served by DRA devices (``dra``: if
    the user may read them), or asked for by a waiting pod."""
    store = state.cluster.store
    memo = RenderCaches.get().known.at((store.rows_version, store.pending_version))
    names = memo.get(dra)
    if names is None:
        names = memo[dra] = [s.resource for s in summary_strip(state, dra)]
    return names
