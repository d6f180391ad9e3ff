"""The per-node metric families (``extres_node_extended_resource_*``), as Prometheus text kept per
overview row: the store rebuilds a row object only when its node changed, so a scrape after an
event formats that row alone; the families are the grid's exported columns
(``app.domain.columns``) and those that are no column of it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from prometheus_client.utils import floatToGoString

from app.domain import columns

if TYPE_CHECKING:
    from app.domain.overview import NodeRow
    from app.kube.state.store import Store

PREFIX = "extres_node_extended_resource_"

# The grid's exported columns (app/domain/columns.py), then those that are no column of it
NODE_FAMILIES = (
    *((c.field, c.metric) for c in columns.exported()),
    ("allocated", "DRA devices serving an extended resource on a node that claims hold."),
    ("drift", "1 when a node's capacity differs from the desired state set through the dashboard."),
    (
        "shares_per_device",
        "Shares each device of a shared extended resource is advertised as (time-slicing, MPS: the "
        "node's labels); the resource's allocatable counts shares, not devices.",
    ),
    (
        "physical_devices",
        "Devices behind a shared extended resource's shares on a node (its labels' count, else "
        "allocatable / shares): never to be added to its slots.",
    ),
    (
        "unavailable",
        "Capacity of an extended resource on a node above its allocatable (only where it is): for a "
        "device plugin's resource, devices it reports unhealthy (a lost GPU reads 8 -> 7).",
    ),
)


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _row_lines(row: NodeRow, cluster: str = "") -> tuple[str, ...]:
    """One row's samples of each node family, in Prometheus' text format (``cluster``: its label,
    where several clusters are served)."""
    out: dict[str, list[str]] = {name: [] for name, _ in NODE_FAMILIES}
    first = f'cluster="{_label(cluster)}",' if cluster else ""

    def add(family: str, resource: str, value: float) -> None:
        labels = f'{first}node="{_label(row.name)}",resource="{_label(resource)}"'
        out[family].append(f"{PREFIX}{family}{{{labels}}} {floatToGoString(value)}\n")

    for resource, u in row.usage.items():
        for c in columns.exported():  # what the node advertises, and what is requested there
            if (value := c.value(u) if c.value else 0) or u.advertised:
                add(c.field, resource, value)
        if u.allocated is not None:
            add("allocated", resource, u.allocated)
        if u.unavailable:
            add("unavailable", resource, u.unavailable)
        if (shared := row.sharing.get(resource)) is not None:
            add("shares_per_device", resource, shared.replicas)
            add("physical_devices", resource, shared.physical)
    for resource in sorted(row.drifted):
        add("drift", resource, 1)
    return tuple("".join(out[name]) for name, _ in NODE_FAMILIES)


class NodeFamilies:
    """The per-node families as text, kept per row: the store rebuilds a row object only when its
    node changed, so a scrape after an event formats one row, not every sample (45,000 at 5,000
    nodes and three resources); between changes the whole text is reused. ``cluster``: the
    ``cluster`` label of every sample, where several clusters are served (``merged``)."""

    def __init__(self, cluster: str = "") -> None:
        self.cluster = cluster
        self._rows: dict[str, tuple[NodeRow, tuple[str, ...]]] = {}
        self._families: tuple[object, int, tuple[str, ...]] | None = None
        self.formatted = 0  # rows formatted, over the app's life

    def families(self, store: Store) -> tuple[str, ...]:
        """Each family's samples (no header), in ``NODE_FAMILIES``' order, as text."""
        if self._families is not None and self._families[:2] == (store, store.rows_version):
            return self._families[2]
        version = store.rows_version
        rows = store.overview_rows()[0]
        kept = self._rows
        fresh: dict[str, tuple[NodeRow, tuple[str, ...]]] = {}
        for row in rows:
            hit = kept.get(row.name)
            if hit is None or hit[0] is not row:
                hit = (row, _row_lines(row, self.cluster))
                self.formatted += 1
            fresh[row.name] = hit
        self._rows = fresh
        found = tuple("".join(lines[i] for _, lines in fresh.values()) for i in range(len(NODE_FAMILIES)))
        self._families = (store, version, found)
        return found

    def text(self, store: Store) -> bytes:
        return merged([self.families(store)])


def merged(clusters: list[tuple[str, ...]]) -> bytes:
    """The node families of several clusters (each ``NodeFamilies.families``), one header each."""
    parts = []
    for i, (name, help_text) in enumerate(NODE_FAMILIES):
        parts.append(f"# HELP {PREFIX}{name} {help_text}\n# TYPE {PREFIX}{name} gauge\n")
        parts.extend(samples[i] for samples in clusters)
    return "".join(parts).encode()
