"""Which extended resources belong to a device plugin, and so are read-only here.

The kubelet rewrites the capacity of resources that a device plugin registered
(it reports the devices it found), so a manual patch of them is overwritten.
The rule: a resource is owned by a device plugin when its name matches one of
the configured glob patterns (``EXTRES_DEVICE_PLUGIN_RESOURCES``; the default
lists well-known plugins), on every node alike.
"""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase

DEFAULT_DEVICE_PLUGIN_PATTERNS: tuple[str, ...] = (
    "nvidia.com/*",
    "amd.com/*",
    "gpu.intel.com/*",
    "fpga.intel.com/*",
    "qat.intel.com/*",
    "sgx.intel.com/*",
    "dsa.intel.com/*",
    "xilinx.com/*",
    "habana.ai/*",
    "aws.amazon.com/neuron*",
    "google.com/tpu",
    "devices.kubevirt.io/*",
    "squat.ai/*",
    "smarter-devices/*",
    "rdma/*",
)


KEPT = 4096  # answers kept: names come from the cluster, and from forms (anyone's input)


class DevicePluginRule:
    def __init__(self, patterns: Iterable[str] = DEFAULT_DEVICE_PLUGIN_PATTERNS) -> None:
        self.patterns = tuple(p.strip() for p in patterns if p.strip())
        self._kept: dict[str, bool] = {}

    def owns(self, resource: str) -> bool:
        owned = self._kept.get(resource)
        if owned is None:
            owned = any(fnmatchcase(resource, p) for p in self.patterns)
            if len(self._kept) >= KEPT:
                self._kept = {}
            self._kept[resource] = owned
        return owned
