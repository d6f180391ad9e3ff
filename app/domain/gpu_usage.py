"""GPU utilization beside allocation: which allocated GPUs sit idle (pure: the Prometheus answer
and the pods are given).

A usage mapping says, per extended resource pattern, which series tell a device's utilization
and how their labels name the device, its node and the pod holding it. The default is NVIDIA's
dcgm-exporter: ``DCGM_FI_DEV_GPU_UTIL`` (percent), ``DCGM_FI_DEV_FB_USED``/``_FREE`` (MiB), labels
``Hostname``, ``gpu``, ``UUID``, ``modelName`` and, from its Kubernetes pod mapping, ``namespace``,
``pod`` and ``container``. A GPU is tied to its pod by those pod labels first (the node follows
from the pod, as the dashboard's cache knows it); ``Hostname`` is only the fallback for GPUs no
pod holds, since some deployments report a made-up host name there.

One query per window: ``avg_over_time(<utilization>[<window>])``, one series per GPU; nothing
here asks per node or per pod.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True)
class UsageMapping:
    pattern: str  # extended resource names it covers (a glob)
    utilization: str  # the metric of a device's utilization, in percent
    memory_used: str = ""  # the metric of its memory used (MiB), if any
    memory_free: str = ""
    node_label: str = "Hostname"
    device_label: str = "UUID"
    namespace_label: str = "namespace"
    pod_label: str = "pod"
    container_label: str = "container"

    def covers(self, resource: str) -> bool:
        return fnmatch.fnmatchcase(resource, self.pattern)

    def utilization_query(self, window: timedelta) -> str:
        """The one query of a window: each device's mean utilization over it."""
        minutes = max(1, int(window.total_seconds() // 60))
        return f"avg_over_time({self.utilization}[{minutes}m])"


DCGM = UsageMapping("nvidia.com/*", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE")


@dataclass(frozen=True)
class Series:
    """One device's answer: its labels and its value (a mean utilization, in percent)."""

    labels: Mapping[str, str]
    value: float


@dataclass(frozen=True)
class Holding:
    """A running pod holding devices of a covered resource, as the dashboard's cache knows it."""

    namespace: str
    pod: str
    node: str
    devices: int
    started: datetime
    owner: str = ""  # its owner workload, "Kind/name", when it has one


@dataclass(frozen=True)
class Idle:
    """A pod whose devices stayed under the threshold over the window."""

    holding: Holding
    utilization: float  # the mean over its devices and the window, percent
    since: datetime  # the later of its start and the window's start
    device_hours: float  # devices x hours held idle within the window


def pod_of(s: Series, mapping: UsageMapping) -> tuple[str, str]:
    """The (namespace, pod) a device's series names ("" where no pod holds it)."""
    return s.labels.get(mapping.namespace_label, ""), s.labels.get(mapping.pod_label, "")


def by_pod(series: Iterable[Series], mapping: UsageMapping) -> dict[tuple[str, str], list[float]]:
    """Each pod's devices' values (a device no pod holds is left out)."""
    out: dict[tuple[str, str], list[float]] = {}
    for s in series:
        key = pod_of(s, mapping)
        if all(key):
            out.setdefault(key, []).append(s.value)
    return out


def idle(
    holdings: Iterable[Holding],
    series: Iterable[Series],
    mapping: UsageMapping,
    threshold: float,
    window: timedelta,
    now: datetime,
) -> list[Idle]:
    """The pods whose devices' mean utilization over ``window`` stayed under ``threshold``
    percent, most device-hours held idle first. A pod without any series is not judged (it is
    not idle for want of data)."""
    values = by_pod(series, mapping)
    start = now - window
    out = []
    for h in holdings:
        found = values.get((h.namespace, h.pod))
        if not found:
            continue
        mean = sum(found) / len(found)
        if mean >= threshold:
            continue
        since = max(h.started, start)
        hours = h.devices * max(0.0, (now - since).total_seconds()) / 3600
        out.append(Idle(h, mean, since, hours))
    out.sort(key=lambda i: (-i.device_hours, i.holding.namespace, i.holding.pod))
    return out


def busy_by_node(
    series: Iterable[Series], mapping: UsageMapping, pod_nodes: Mapping[tuple[str, str], str]
) -> dict[str, float]:
    """Per node, its devices' mean utilization: a device on the node of the pod holding it (the
    cache's), else on its ``Hostname``."""
    sums: dict[str, list[float]] = {}
    for s in series:
        node = pod_nodes.get(pod_of(s, mapping)) or s.labels.get(mapping.node_label, "")
        if node:
            sums.setdefault(node, []).append(s.value)
    return {node: sum(v) / len(v) for node, v in sums.items()}
