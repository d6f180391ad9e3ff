"""GPU utilization beside allocation: which allocated GPUs sit idle (pure: Prometheus' answers and
the pods are given).

A usage mapping says, per extended resource pattern, which series tell a device's utilization and
memory and how their labels name the device, its node and the pod holding it. The default is
NVIDIA's dcgm-exporter: ``DCGM_FI_DEV_GPU_UTIL`` (percent), ``DCGM_FI_DEV_FB_USED``/``_FREE`` (MiB),
labels ``Hostname``, ``gpu``, ``UUID``, ``modelName`` and, from its Kubernetes pod mapping,
``namespace`` and ``pod``. A GPU is tied to a node through the pod holding it first (the node as
the dashboard's cache knows it); ``Hostname`` is only the fallback for GPUs no pod holds, since
some deployments report a made-up host name there.

Three queries a mapping per refresh, whatever the cluster's size: each device's mean utilization
over the window, and its memory used and free now, each reduced in Prometheus to the labels read
here. Nothing asks per node or per pod, and no page waits on them (app.usage polls).
"""

from __future__ import annotations

import fnmatch
import math
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from app.domain.numbers import bounded_int

PodKey = tuple[str, str]  # (namespace, pod)


@dataclass(frozen=True)
class UsageMapping:
    pattern: str  # extended resource names it covers (a glob)
    utilization: str  # the metric of a device's utilization, in percent
    memory_used: str = ""  # the metric of its memory used (MiB), if any
    memory_free: str = ""
    node_label: str = "Hostname"
    device_label: str = "UUID"
    index_label: str = "gpu"
    model_label: str = "modelName"
    namespace_label: str = "namespace"
    pod_label: str = "pod"

    def covers(self, resource: str) -> bool:
        return fnmatch.fnmatchcase(resource, self.pattern)

    @property
    def labels(self) -> tuple[str, ...]:
        return (
            self.node_label,
            self.device_label,
            self.index_label,
            self.model_label,
            self.namespace_label,
            self.pod_label,
        )

    def utilization_query(self, window: timedelta) -> str:
        """Each device's mean utilization over ``window``, with only the labels read here."""
        minutes = max(1, int(window.total_seconds() // 60))
        return f"max by ({', '.join(self.labels)}) (avg_over_time({self.utilization}[{minutes}m]))"

    def memory_query(self, metric: str) -> str:
        """Each device's memory ``metric`` now, by node and device."""
        return f"max by ({self.node_label}, {self.device_label}) ({metric})"


DCGM = UsageMapping("nvidia.com/*", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE")
MAPPING_KEYS = frozenset(UsageMapping.__dataclass_fields__)


def mappings_from(documents: Sequence[Mapping[str, Any]]) -> tuple[UsageMapping, ...]:
    """Usage mappings from the operator's settings (a list of objects with UsageMapping's keys);
    raises ValueError naming the first wrong one."""
    out = []
    for i, doc in enumerate(documents):
        if not isinstance(doc, Mapping):
            raise ValueError(f"usage mapping {i + 1}: an object with pattern and utilization")
        unknown = set(doc) - MAPPING_KEYS
        if unknown:
            raise ValueError(f"usage mapping {i + 1}: unknown key {sorted(unknown)[0]!r}")
        if not all(isinstance(v, str) for v in doc.values()):
            raise ValueError(f"usage mapping {i + 1}: every value is a string")
        if not doc.get("pattern") or not doc.get("utilization"):
            raise ValueError(f"usage mapping {i + 1}: pattern and utilization are required")
        for key, value in doc.items():
            if key != "pattern" and value and not _metric_name(value):
                raise ValueError(f"usage mapping {i + 1}: {key} {value!r} is not a metric or label name")
        out.append(UsageMapping(**doc))
    return tuple(out)


def _metric_name(text: str) -> bool:
    """Prometheus' metric and label name syntax (ASCII letters, digits, ``_`` and ``:``)."""
    first_ok = text[0].isalpha() or text[0] in "_:"
    return text.isascii() and first_ok and all(c.isalnum() or c in "_:" for c in text)


# ---- one refresh's answers ----------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Device:
    """One GPU as the exporter reports it."""

    node: str  # the node it is on: the holding pod's (the cache's), else the node label
    index: str
    uuid: str
    model: str
    pod: PodKey | None  # the pod holding it, as the exporter maps it
    utilization: float  # mean over the window, percent
    memory_used: float | None = None  # MiB, now
    memory_free: float | None = None

    @property
    def memory_total(self) -> float | None:
        if self.memory_used is None or self.memory_free is None:
            return None
        return self.memory_used + self.memory_free


def values(results: Iterable[Any], limit: int) -> Iterable[tuple[Mapping[str, str], float]]:
    """An instant vector from Prometheus' query API (``{"metric": {...}, "value": [t, "v"]}``),
    as (labels, value), at most ``limit``; a sample that is not that shape or not a finite number
    is left out."""
    for n, r in enumerate(results):
        if n >= limit:
            return
        pair = r.get("value") if isinstance(r, dict) else None
        if not isinstance(pair, list) or len(pair) != 2 or not isinstance(pair[1], str):
            continue
        try:
            labels, value = r.get("metric"), float(pair[1])
        except ValueError:
            continue
        if isinstance(labels, dict) and math.isfinite(value):
            yield labels, value


def _s(labels: Mapping[str, Any], key: str) -> str:
    value = labels.get(key, "")
    return sys.intern(value[:253]) if isinstance(value, str) else ""


@dataclass
class Reading:
    """One refresh: every covered device, with what pages ask of it kept ready (busy per node,
    per pod's devices, cluster-wide), for each mapping."""

    taken: datetime
    window: timedelta
    mappings: tuple[UsageMapping, ...]
    devices: dict[str, list[Device]] = field(default_factory=dict)  # node -> its devices
    node_busy: dict[tuple[int, str], float] = field(default_factory=dict)  # (mapping, node) -> percent
    pod_devices: dict[PodKey, list[Device]] = field(default_factory=dict)
    total_busy: dict[int, float] = field(default_factory=dict)  # mapping -> percent over all devices
    cut: bool = False  # an answer had more series than kept

    def mapping_of(self, resource: str) -> int | None:
        return next((i for i, m in enumerate(self.mappings) if m.covers(resource)), None)

    def busy(self, node: str, resource: str) -> float | None:
        """The mean utilization of ``node``'s devices of the mapping covering ``resource``."""
        i = self.mapping_of(resource)
        return None if i is None else self.node_busy.get((i, node))

    def cluster_busy(self, resource: str) -> float | None:
        i = self.mapping_of(resource)
        return None if i is None else self.total_busy.get(i)

    def pod_utilization(self, key: PodKey) -> float | None:
        """The mean utilization of the devices the pod holds (None: the exporter names none)."""
        return self.pods_utilization((key,))

    def pods_utilization(self, keys: Iterable[PodKey]) -> float | None:
        """The mean utilization over every device these pods hold."""
        found = [d.utilization for k in keys for d in self.pod_devices.get(k, ())]
        return sum(found) / len(found) if found else None


def read(
    answers: Sequence[tuple[Iterable[Any], Iterable[Any], Iterable[Any]]],
    mappings: Sequence[UsageMapping],
    pod_node: Callable[[PodKey], str | None],
    taken: datetime,
    window: timedelta,
    limit: int,
) -> Reading:
    """A Reading from each mapping's three answers (utilization, memory used, memory free), as
    Prometheus' query API sends them; ``pod_node`` gives the node the cache knows a pod on."""
    out = Reading(taken, window, tuple(mappings))
    for i, (m, (util, used, free)) in enumerate(zip(mappings, answers, strict=True)):
        memory: dict[tuple[str, str], list[float | None]] = {}
        for n, series in enumerate((used, free)):
            for labels, value in values(series, limit):
                where = (_s(labels, m.node_label), _s(labels, m.device_label))
                memory.setdefault(where, [None, None])[n] = value
        sums: dict[str, list[float]] = {}
        for count, (labels, value) in enumerate(values(util, limit + 1), 1):
            if count > limit:
                out.cut = True
                break
            host, uuid = _s(labels, m.node_label), _s(labels, m.device_label)
            ns, name = _s(labels, m.namespace_label), _s(labels, m.pod_label)
            pod = (ns, name) if ns and name else None
            node = (pod_node(pod) if pod else None) or host
            mem = memory.get((host, uuid), (None, None))
            index, model = _s(labels, m.index_label), _s(labels, m.model_label)
            device = Device(node, index, uuid, model, pod, value, *mem)
            if node:
                out.devices.setdefault(node, []).append(device)
                sums.setdefault(node, []).append(value)
            if pod:
                out.pod_devices.setdefault(pod, []).append(device)
        for node, found in sums.items():
            out.node_busy[(i, node)] = sum(found) / len(found)
        every = [v for found in sums.values() for v in found]
        if every:
            out.total_busy[i] = sum(every) / len(every)
    for on_node in out.devices.values():
        on_node.sort(key=_device_order)
    return out


def _device_order(d: Device) -> tuple[int, str, str]:
    index = bounded_int(d.index, 0, 1 << 16)
    return (1 << 16 if index is None else index, d.index, d.uuid)


# ---- idle pods -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Holding:
    """A running pod the cache knows, as the Idle page names it."""

    namespace: str
    pod: str
    node: str
    started: datetime
    owner: str = ""  # its owner workload, "Kind/name", when it has one


@dataclass(frozen=True)
class Idle:
    """A pod whose devices stayed under the threshold over the window."""

    holding: Holding
    devices: int  # the devices the exporter reports it holding
    utilization: float  # the mean over its devices and the window, percent
    since: datetime  # the later of its start and the window's start
    device_hours: float  # devices x hours held idle within the window


def idle(
    reading: Reading, holding: Callable[[PodKey], Holding | None], threshold: float, now: datetime
) -> list[Idle]:
    """The pods whose devices' mean utilization over the window stayed under ``threshold``
    percent, most device-hours held idle first. A pod the cache does not know running (gone,
    finished) is left out; so is one without series (not idle for want of data)."""
    start = now - reading.window
    out = []
    for key, found in reading.pod_devices.items():
        mean = sum(d.utilization for d in found) / len(found)
        if mean >= threshold:
            continue
        h = holding(key)
        if h is None:
            continue
        since = min(now, max(h.started, start))
        hours = len(found) * (now - since).total_seconds() / 3600
        out.append(Idle(h, len(found), mean, since, hours))
    out.sort(key=lambda i: (-i.device_hours, i.holding.namespace, i.holding.pod))
    return out
