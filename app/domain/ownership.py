"""Who sets an extended resource's amount, and so who may change it: the one rule every page that
offers or describes an action follows.

* static: advertised by patching the node's status; this dashboard may change it (an editor may);
* device plugin: the kubelet rewrites capacity from the devices its plugin found; a patch would
  be overwritten, so this dashboard never offers one;
* DRA: devices a driver publishes in ResourceSlices serve it (a DeviceClass's
  ``extendedResourceName``, or its implicit ``deviceclass.resource.kubernetes.io/<class>`` name);
  it never appears in node status, so there is nothing to patch.

The wording of advice follows the owner: "add 2 example.com/dongle to n1" is an action; "n1 would
need 2 more nvidia.com/gpu; its device plugin advertises them" is a fact about hardware.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from app.domain.devices import IMPLICIT_PREFIX

STATIC = "static"
DEVICE_PLUGIN = "device plugin"
DRA = "DRA"


@dataclass(frozen=True)
class Ownership:
    kind: str  # STATIC | DEVICE_PLUGIN | DRA
    dra_class: str | None = None  # the DeviceClass whose devices serve it (DRA)

    @property
    def editable(self) -> bool:
        """Whether this dashboard changes it (for a user who may change nodes)."""
        return self.kind == STATIC

    @property
    def source(self) -> str:
        """What sets its amount, as a phrase: "advertised by a device plugin; the kubelet rewrites
        it"; empty for a static resource."""
        if self.kind == DEVICE_PLUGIN:
            return "advertised by a device plugin; the kubelet rewrites it"
        if self.kind == DRA and self.dra_class is None:
            return "a DeviceClass's name for its DRA devices; their driver publishes them in ResourceSlices"
        if self.kind == DRA:
            return (
                f"served by DRA devices (DeviceClass {self.dra_class}); their driver publishes them in "
                "ResourceSlices"
            )
        return ""

    def more_needed(self, node: str, resource: str, add: int) -> str:
        """A shortfall in the owner's words, for advice that must not read as an action here."""
        need = f"{node} would need {add} more {resource}"
        if self.kind == DEVICE_PLUGIN and (profile := mig_profile(resource)):
            return (
                f"{need}; its device plugin advertises them: MIG {profile} instances, as many as the "
                "GPUs' MIG configuration there makes (a different MIG layout, or more GPUs)"
            )
        if self.kind == DEVICE_PLUGIN:
            return f"{need}; its device plugin advertises them (devices installed there)"
        if self.kind == DRA:
            served = f"DeviceClass {self.dra_class}" if self.dra_class else "its DeviceClass"
            return f"{need}; DRA devices of {served} serve it, published by their driver in ResourceSlices"
        return need


STATIC_OWNERSHIP = Ownership(STATIC)
_MIG = re.compile(r"nvidia\.com/mig-(\d+g\.\d+gb(?:\+me)?)")


def mig_profile(resource: str) -> str | None:
    """The MIG profile a resource name stands for (``nvidia.com/mig-1g.10gb`` -> "1g.10gb"): a
    slice of a GPU, as NVIDIA's device plugin names them with the mixed MIG strategy."""
    found = _MIG.fullmatch(resource)
    return found.group(1) if found else None


STATUS, DRA_HERE = "status", "dra"  # what serves a name on one node (``ownership_on``)


def ownership_on(
    resource: str,
    here: str | None,
    dra_class: str | None,
    device_plugin: Callable[[str], bool],
    dra_class_for: Callable[[str], str | None],
) -> Ownership:
    """Who serves ``resource`` on one node, as kube-scheduler decides it there: the node's status
    first (``here`` == STATUS: a device plugin's by the configured patterns, else static), else
    the DeviceClass whose devices on the node serve it (``here`` == DRA_HERE, ``dra_class``),
    else nothing there: the name's owner anywhere (``ownership_of``). So ``nvidia.com/gpu`` is a
    device plugin's on a node whose kubelet advertises it and DRA's on a node where only a
    DeviceClass's devices serve it."""
    if here == STATUS:
        return Ownership(DEVICE_PLUGIN) if device_plugin(resource) else STATIC_OWNERSHIP
    if here == DRA_HERE:
        return Ownership(DRA, dra_class or dra_class_for(resource))
    return ownership_of(resource, device_plugin, dra_class_for)


def ownership_of(
    resource: str, device_plugin: Callable[[str], bool], dra_class_for: Callable[[str], str | None]
) -> Ownership:
    """The name's owner, where no node is in question (or the node has none of it): a device
    plugin's name pattern first (the kubelet wins on a node), then a DeviceClass's name
    (implicit or ``extendedResourceName``), else static."""
    if device_plugin(resource):
        return Ownership(DEVICE_PLUGIN)
    served_by = dra_class_for(resource)
    if served_by is not None:
        return Ownership(DRA, served_by)
    if resource.startswith(IMPLICIT_PREFIX):
        return Ownership(DRA, resource[len(IMPLICIT_PREFIX) :] or None)
    return STATIC_OWNERSHIP


def served_on_row(resource: str, dra_served: bool, device_plugin: Callable[[str], bool]) -> str:
    """The kind that serves ``resource`` on one overview row (``ownership_on``): DRA where its
    usage comes from DRA devices (the status does not advertise it there), else the status's."""
    return ownership_on(
        resource, DRA_HERE if dra_served else STATUS, None, device_plugin, lambda r: None
    ).kind


def sources(kinds: Iterable[str]) -> str:
    """A column's serving kinds over its nodes, in words: "device plugin", "DRA", or "device
    plugin on 3 nodes, DRA on 2" when nodes differ; "" when every node's is static."""
    counted = Counter(kinds)
    if set(counted) <= {STATIC}:
        return ""
    if len(counted) == 1:
        return next(iter(counted))
    return ", ".join(f"{k} on {n} node{'' if n == 1 else 's'}" for k, n in sorted(counted.items()))
