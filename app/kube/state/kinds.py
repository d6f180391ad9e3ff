"""The kinds of object the cache lists and watches, in one place: how the cache, RBAC and a page
name each, and whether it is a DRA kind (watched only where resource.k8s.io/v1 is served). The
store keeps one table of what to do with each (``Store.put``, ``replace``, ``forget``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    name: str  # the cache's name for it
    rbac: str  # as RBAC and the API name the resource
    one: str  # one of them, in a page's words
    dra: bool = False  # watched only where the API server serves resource.k8s.io/v1
    listed: bool = False  # of those, watched only where the group lists it (newer than the group)
    kueue: bool = False  # watched only where the API server serves kueue.x-k8s.io/v1beta2


REGISTRY = {
    k.name: k
    for k in (
        Kind("nodes", "nodes", "node"),
        Kind("pods", "pods", "pod"),
        Kind("quotas", "resourcequotas", "quota"),
        Kind("deviceclasses", "deviceclasses", "DeviceClass", dra=True),
        Kind("resourceslices", "resourceslices", "ResourceSlice", dra=True),
        Kind("resourceclaims", "resourceclaims", "ResourceClaim", dra=True),
        # resource.k8s.io/v1 from Kubernetes 1.37: its taints apply to the devices it picks
        Kind("devicetaintrules", "devicetaintrules", "DeviceTaintRule", dra=True, listed=True),
        Kind("workloads", "kueue.x-k8s.io/workloads", "Workload", kueue=True),
        Kind("localqueues", "kueue.x-k8s.io/localqueues", "LocalQueue", kueue=True),
        Kind("clusterqueues", "kueue.x-k8s.io/clusterqueues", "ClusterQueue", kueue=True),
        Kind("resourceflavors", "kueue.x-k8s.io/resourceflavors", "ResourceFlavor", kueue=True),
    )
}
CORE = tuple(name for name, k in REGISTRY.items() if not k.dra and not k.kueue)  # watched everywhere
DRA = tuple(name for name, k in REGISTRY.items() if k.dra)
DRA_LISTED = tuple(name for name, k in REGISTRY.items() if k.listed)
KUEUE = tuple(name for name, k in REGISTRY.items() if k.kueue)


def kind(name: str) -> Kind:
    """The kind called ``name``; one not registered is named as it is."""
    return REGISTRY.get(name) or Kind(name, name, name)
