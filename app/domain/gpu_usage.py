"""GPU utilization beside allocation (pure: Prometheus' answers and the pods are given): one
refresh's answers made a reading, every covered device with what pages ask of it kept ready
(busy per node, per pod, cluster-wide). The queries and what they read are the usage mappings'
(app.domain.usage_mapping); which pods sit idle is app.domain.idle_pods'.

A GPU is tied to a node through the pod holding it first (the node as the dashboard's cache
knows it); the node label is only the fallback for GPUs no pod holds, since some deployments
report a made-up host name there.
"""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from app.domain.numbers import bounded_int
from app.domain.usage_mapping import SEPARATOR, Sample, UsageMapping

PodKey = tuple[str, str]  # (namespace, pod)


# ---- one refresh's answers ----------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Device:
    """One GPU as the exporter reports it (made for the page that shows it)."""

    node: str  # the node it is on: the holding pod's (the cache's), else the node label
    index: str
    uuid: str
    model: str
    pod: PodKey | None  # the pod holding it, as the exporter maps it
    utilization: float  # mean over the window, percent
    memory_used: float | None = None  # MiB, now
    memory_free: float | None = None
    xid: int | None = None  # the code of its last XID error within the window (0: none; None: not read)

    @property
    def memory_total(self) -> float | None:
        if self.memory_used is None or self.memory_free is None:
            return None
        return self.memory_used + self.memory_free


Row = tuple[list[str], "PodKey | None", float, tuple[float, float, float]]  # a device while a reading is made


@dataclass(slots=True, frozen=True)
class NodeGPUs:
    """One node's devices, kept compact (a reading holds tens of thousands of devices, a page shows
    one node's): their labels as one text, the pods holding them, and one array of floats
    (utilization, memory used, memory free, last XID for each device; NaN where unknown). A few objects a
    node, not several a device: a reading at 5,000 nodes x 8 GPUs holds about 6 MiB."""

    labels: str  # index and UUID of each device, split by \x1f, devices by \x1e
    models: str  # the one model of every device, or each device's, split by \x1e
    pods: tuple[PodKey | None, ...]
    values: array[float]

    @classmethod
    def of(cls, rows: Sequence[Row]) -> NodeGPUs:
        models = {parts[5] for parts, _, _, _ in rows}
        return cls(
            "\x1e".join(f"{_plain(parts[2])}\x1f{_plain(parts[1])}" for parts, _, _, _ in rows),
            models.pop() if len(models) == 1 else "\x1e".join(_plain(parts[5]) for parts, _, _, _ in rows),
            tuple(pod for _, pod, _, _ in rows),
            array("f", [v for _, _, value, known in rows for v in (value, *known)]),
        )

    def __len__(self) -> int:
        return len(self.pods)

    def devices(self, node: str) -> list[Device]:
        models = self.models.split("\x1e") if len(self.pods) > 1 and "\x1e" in self.models else None
        out = []
        for i, text in enumerate(self.labels.split("\x1e")):
            index, uuid = [*text.split("\x1f", 1), ""][:2]
            model = models[i] if models is not None else self.models
            util, used, free, xid = self.values[STRIDE * i : STRIDE * i + STRIDE]
            code = None if math.isnan(xid) else int(xid)
            out.append(Device(node, index, uuid, model, self.pods[i], util, _known(used), _known(free), code))
        out.sort(key=_device_order)
        return out


def _plain(label: str) -> str:
    return label.translate(_SEPARATORS) if "\x1e" in label or "\x1f" in label else label


_SEPARATORS = str.maketrans("\x1e\x1f", "  ")  # never inside a label kept: they split the text


def _known(value: float) -> float | None:
    return None if math.isnan(value) else value


def _device_order(d: Device) -> tuple[int, str, str]:
    index = bounded_int(d.index, 0, 1 << 16)
    return (1 << 16 if index is None else index, d.index, d.uuid)


NAN = float("nan")
UNKNOWN = (NAN, NAN, NAN)
STRIDE = 4  # floats a device: utilization, memory used, memory free, last XID


@dataclass(frozen=True, slots=True)
class Busy:
    """A mean utilization, and how many devices it is the mean of."""

    percent: float
    devices: int


@dataclass(eq=False)  # one refresh is itself alone: hashed by identity (a read kept per reading)
class Reading:
    """One refresh: every covered device, with what pages ask of it kept ready (busy per node,
    per pod, cluster-wide), for each mapping."""

    taken: datetime
    window: timedelta
    mappings: tuple[UsageMapping, ...]
    nodes: dict[str, NodeGPUs] = field(default_factory=dict)
    # sum of utilization, devices (a device shared by several pods counts for each its share)
    pod_use: dict[PodKey, tuple[float, float]] = field(default_factory=dict)
    # mapping -> node -> (sum of utilization, devices): busy per node and over any set of nodes
    # (a resource's cluster figure is over the nodes that advertise it) are derived from it
    node_sums: dict[int, dict[str, tuple[float, float]]] = field(default_factory=dict)
    cut: bool = False  # an answer had more series than kept

    def mapping_of(self, resource: str) -> int | None:
        return next((i for i, m in enumerate(self.mappings) if m.covers(resource)), None)

    def busy(self, node: str, resource: str) -> float | None:
        """The mean utilization of ``node``'s devices of the mapping covering ``resource``."""
        found = self.busy_of(node, resource)
        return found.percent if found is not None else None

    def xid_on(self, node: str) -> int:
        """The devices on ``node`` whose exporter reports an XID error within the window."""
        found = self.nodes.get(node)
        if found is None:
            return 0
        return sum(1 for i in range(len(found)) if found.values[STRIDE * i + 3] > 0)

    def busy_of(self, node: str, resource: str) -> Busy | None:
        """``busy`` with the number of devices it is the mean of."""
        i = self.mapping_of(resource)
        found = None if i is None else self.node_sums.get(i, {}).get(node)
        return Busy(found[0] / found[1], round(found[1])) if found and found[1] else None

    def cluster_busy_of(self, resource: str, nodes: Iterable[str]) -> Busy | None:
        """``cluster_busy`` over ``nodes``, with the number of devices it is the mean of."""
        i = self.mapping_of(resource)
        sums = self.node_sums.get(i, {}) if i is not None else {}
        total, devices = 0.0, 0.0
        for node in nodes:
            if (found := sums.get(node)) is not None:
                total, devices = total + found[0], devices + found[1]
        return Busy(total / devices, round(devices)) if devices else None

    def cluster_busy(self, resource: str, nodes: Iterable[str] | None = None) -> float | None:
        """The mean utilization of the devices on ``nodes`` (those advertising ``resource``; None:
        every device the mapping covering it reads). A mapping such as ``nvidia.com/*`` covers a
        node's whole GPUs and another's MIG devices alike: each resource's mean is over its own
        nodes, so GPUs on nodes without MIG never make the MIG figure."""
        if nodes is None:
            i = self.mapping_of(resource)
            nodes = self.node_sums.get(i, {}) if i is not None else ()
        found = self.cluster_busy_of(resource, nodes)
        return found.percent if found is not None else None

    def devices_on(self, node: str) -> list[Device]:
        found = self.nodes.get(node)
        return found.devices(node) if found is not None else []

    def pod_utilization(self, key: PodKey) -> float | None:
        """The mean utilization of the devices the pod holds (None: the exporter names none)."""
        return self.pods_utilization((key,))

    def pods_utilization(self, keys: Iterable[PodKey]) -> float | None:
        """The mean utilization over every device these pods hold."""
        total, count = 0.0, 0.0
        for k in keys:
            use = self.pod_use.get(k)
            if use is not None:
                total, count = total + use[0], count + use[1]
        return total / count if count else None


def _parts(key: str, n: int) -> list[str]:
    """A key's labels (``n`` of them; the last may hold the separator), each bounded."""
    parts = key.split(SEPARATOR, n - 1)
    return [sys.intern(p[:253]) for p in parts] + [""] * (n - len(parts))


def read(
    answers: Sequence[tuple[Iterable[Sample], ...]],
    mappings: Sequence[UsageMapping],
    pod_node: Callable[[PodKey], str | None],
    taken: datetime,
    window: timedelta,
    limit: int,
    room: Mapping[str, int] | None = None,
) -> Reading:
    """A Reading from each mapping's answers (utilization, memory used, memory free, and the last
    XID where the mapping reads it) as
    (key, value) samples; ``pod_node`` gives the node the cache knows a pod on. A value that is
    not a finite number is left out; past ``limit`` devices a mapping, the rest (``cut``). With
    ``room`` (per node the cluster has, the most devices there), a device on a node the cluster
    does not have is left out, and so is one past its node's room (``cut``): an exporter cannot
    make the reading larger than the cluster."""
    if len(answers) != len(mappings):
        raise ValueError("one (utilization, used, free) answer per mapping")
    out = Reading(taken, window, tuple(mappings))
    pods: dict[PodKey, PodKey] = {}  # one tuple per pod, shared by its devices
    rows: dict[str, list[Row]] = {}
    for i, (util, used, free, *more) in enumerate(answers):
        memory: dict[str, list[float]] = {}  # node and device -> memory used, free, last XID
        for n, series in enumerate((used, free, more[0] if more else [])):
            for count, (key, value) in enumerate(series):
                if count >= limit:
                    break
                if math.isfinite(value):
                    memory.setdefault(key[:600], [NAN, NAN, NAN])[n] = value
        sums: dict[str, tuple[float, float]] = {}  # node -> (sum, devices)
        parsed: list[tuple[list[str], float]] = []
        series_of: dict[tuple[str, str], int] = {}  # (node, UUID) -> its series
        for count, (key, value) in enumerate(util):
            if count >= limit:
                out.cut = True
                break
            if math.isfinite(value):
                parts = _parts(key[:600], 6)
                parsed.append((parts, value))
                series_of[(parts[0], parts[1])] = series_of.get((parts[0], parts[1]), 0) + 1
        for parts, value in parsed:
            host, uuid, _, ns, name, _ = parts
            # dcgm-exporter's virtual-GPU mode (GPU sharing) writes one series per pod sharing a
            # device, each with the device's UUID: each counts for its share of the one device
            share = 1 / series_of[(host, uuid)] if uuid else 1.0
            pod = pods.setdefault((ns, name), (ns, name)) if ns and name else None
            node = (pod_node(pod) if pod else None) or host
            mem = memory.get(f"{host}{SEPARATOR}{uuid}")
            if node and room is not None and len(rows.get(node, ())) >= room.get(node, 0):
                out.cut = out.cut or node in room
                continue
            if node:
                rows.setdefault(node, []).append(
                    (parts, pod, value, (mem[0], mem[1], mem[2]) if mem else UNKNOWN)
                )
                total, devices = sums.get(node, (0.0, 0.0))
                sums[node] = (total + value * share, devices + share)
            if pod:
                total, devices = out.pod_use.get(pod, (0.0, 0.0))
                out.pod_use[pod] = (total + value * share, devices + share)
        out.node_sums[i] = sums
        del memory
    out.nodes = {node: NodeGPUs.of(found) for node, found in rows.items()}
    return out
