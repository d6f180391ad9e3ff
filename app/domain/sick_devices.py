"""Every unhealthy device across the nodes, in one list (pure): where a device plugin reports
devices unhealthy (the kubelet's allocatable under its capacity), per node and resource, said in
devices (shares folded into the GPUs behind them), since when this dashboard first saw it, and
each device by name where a pod's ``allocatedResourcesStatus`` or DCGM names it. The navigation's
count is the devices listed."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from app.domain.overview import NodeRow


@dataclass(frozen=True)
class SickDevices:
    node: str
    resource: str  # as advertised (a shared name, where shares are advertised)
    devices: int  # devices unhealthy (the GPUs behind unhealthy shares, where shared)
    of: int  # devices on the node
    shares: int | None  # shares unhealthy, where they are shares (else None)
    since: str  # when this dashboard first saw it (UTC, ISO 8601)
    named: tuple[str, ...] = ()  # device IDs a pod's status reports Unhealthy there


def sick_devices(
    rows: Iterable[NodeRow],
    device_plugin: Callable[[str], bool],
    named: Mapping[tuple[str, str], Iterable[str]],
) -> list[SickDevices]:
    """``rows``: every node's overview row; ``device_plugin``: whether a name is a device
    plugin's (only there is capacity above allocatable a device lost); ``named``: (node,
    resource) -> device IDs pods there report Unhealthy. By node, then resource."""
    out = []
    for row in rows:
        for resource in sorted(row.unhealthy_since):
            u = row.usage.get(resource)
            if u is None or u.unavailable <= 0 or not device_plugin(resource):
                continue
            shared = row.sharing.get(resource)
            devices = shared.devices_behind(u.unavailable) if shared else u.unavailable
            out.append(
                SickDevices(
                    row.name,
                    resource,
                    devices,
                    shared.physical if shared else u.capacity,
                    u.unavailable if shared else None,
                    row.unhealthy_since[resource],
                    tuple(sorted(set(named.get((row.name, resource), ()))))[:64],
                )
            )
    return sorted(out, key=lambda s: (s.node, s.resource))
