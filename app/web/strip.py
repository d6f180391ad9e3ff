"""The summary strip: per extended resource, cluster totals, the nodes advertising it and the
pods waiting for it; and the names a user may pick from (the pickers offer them, filters refuse
others)."""

from __future__ import annotations

from app.web.render_cache import RenderCaches
from app.web.services import Services


def summary_strip(state: Services, dra: bool) -> list[dict[str, object]]:
    """Per resource, over the whole cluster: allocatable and requested, nodes advertising it, and
    pods waiting for it (read from kept totals and the unschedulable pods, never every pod).
    ``dra``: the user may read DRA objects (else the resources DRA devices serve are left out)."""
    store = state.cluster.store
    totals = store.overview_totals()
    waiting: dict[str, int] = {}
    primary = store.dra_primaries()
    for pod in store.unschedulable_pods():
        for resource in {primary.get(r, r) for r in pod.extended_requests}:  # an alias: its pool
            waiting[resource] = waiting.get(resource, 0) + 1
    out: list[dict[str, object]] = []
    for resource in sorted(set(totals.by_resource) | set(waiting)):
        u = totals.by_resource.get(resource)
        if not dra and u is not None and u.allocated is not None:
            continue  # DRA devices serve it: not for a user who may not read them
        out.append(
            {
                "resource": resource,
                "allocatable": u.allocatable if u else 0,
                "requested": u.requested if u else 0,
                "nodes": totals.nodes_with.get(resource, 0),
                "waiting": waiting.get(resource, 0),
                "over": u.over if u else 0,  # summed per node: the sums alone would hide it
                "nodes_over": totals.nodes_over.get(resource, 0),
            }
        )
    return out


def known_names(state: Services, dra: bool) -> list[str]:
    """The extended resource names a user may see: advertised, served by DRA devices (``dra``: if
    the user may read them), or asked for by a waiting pod."""
    store = state.cluster.store
    memo = RenderCaches.get().known.at((store.rows_version, store.pending_version))
    names = memo.get(dra)
    if names is None:
        names = memo[dra] = [str(s["resource"]) for s in summary_strip(state, dra)]
    return names
