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

from collections.abc import Callable
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
        if self.kind == DEVICE_PLUGIN:
            return f"{need}; its device plugin advertises them (devices installed there)"
        if self.kind == DRA:
            served = f"DeviceClass {self.dra_class}" if self.dra_class else "its DeviceClass"
            return f"{need}; DRA devices of {served} serve it, published by their driver in ResourceSlices"
        return need


STATIC_OWNERSHIP = Ownership(STATIC)


def ownership_of(
    resource: str, device_plugin: Callable[[str], bool], dra_class_for: Callable[[str], str | None]
) -> Ownership:
    """The rule: a device plugin's name pattern first (the kubelet wins on the node), then a
    DeviceClass's name (implicit or ``extendedResourceName``), else static."""
    if device_plugin(resource):
        return Ownership(DEVICE_PLUGIN)
    served_by = dra_class_for(resource)
    if served_by is not None:
        return Ownership(DRA, served_by)
    if resource.startswith(IMPLICIT_PREFIX):
        return Ownership(DRA, resource[len(IMPLICIT_PREFIX) :] or None)
    return STATIC_OWNERSHIP
