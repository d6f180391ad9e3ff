"""A stand-in for NVIDIA's dcgm-exporter on kwok nodes, as run-ai/fake-gpu-operator's status
exporter plays it (0.2.0, read from its public source; this is the test bed's own code): for
every GPU of the nodes given, ``DCGM_FI_DEV_GPU_UTIL`` (percent), ``DCGM_FI_DEV_FB_USED`` and
``DCGM_FI_DEV_FB_FREE`` (MiB), with dcgm-exporter's labels: ``gpu`` (the index), ``UUID``,
``device`` (``nvidia<index>``), ``modelName``, ``Hostname`` and, for a GPU a pod holds, that
pod's ``namespace``, ``pod`` and ``container`` (dcgm-exporter's Kubernetes pod mapping). A pod's
GPUs run at the utilization its annotation ``run.ai/simulated-gpu-utilization`` gives ("40" or
"20-60": the middle), as the simulator's; without it, 100 %. A GPU no pod holds reads 0.

Where it is used, it says so: nothing here is DCGM. ``Hostname`` is the node's name, as
dcgm-exporter reports it when it runs with the node's name (the simulator writes a made-up
host name instead; the dashboard maps GPUs to nodes through the pod labels first).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from prometheus_client.core import GaugeMetricFamily, Metric

from extres_demo.gpu_stack import GPU, MEMORY_MIB, PRODUCT, gpu_uuid

UTILIZATION_ANNOTATION = "run.ai/simulated-gpu-utilization"
LABELS = ["gpu", "UUID", "device", "modelName", "Hostname", "container", "namespace", "pod"]
_RANGE = re.compile(r"\s*(\d{1,3})\s*(?:-\s*(\d{1,3}))?\s*")


@dataclass(frozen=True)
class Holder:
    """A pod holding GPUs on a node: how many, and its utilization annotation."""

    namespace: str
    pod: str
    container: str
    gpus: int
    annotations: Mapping[str, str] = field(default_factory=dict)


def utilization(annotations: Mapping[str, str]) -> float:
    """The percent a pod's GPUs run at, from its annotation ("40", "20-60": the middle)."""
    found = _RANGE.fullmatch(annotations.get(UTILIZATION_ANNOTATION, "") or "")
    if not found:
        return 100.0
    low = int(found.group(1))
    high = int(found.group(2) or low)
    return min(100.0, (low + high) / 2)


def gpu_samples(node: str, gpus: int, holders: Iterable[Holder]) -> Iterator[tuple[list[str], float, int]]:
    """Each GPU of ``node``: its label values, utilization and framebuffer used (MiB). The holders
    take the GPUs in order, as many as each holds."""
    held: list[Holder | None] = [h for h in holders for _ in range(h.gpus)]
    owners = held[:gpus] + [None] * (gpus - len(held[:gpus]))
    for index, holder in enumerate(owners):
        who = [holder.container, holder.namespace, holder.pod] if holder else ["", "", ""]
        labels = [str(index), gpu_uuid(node, index), f"nvidia{index}", PRODUCT, node, *who]
        util = utilization(holder.annotations) if holder else 0.0
        used = int(MEMORY_MIB * util / 100)
        yield labels, util, used


def shared_gpu_samples(
    node: str, slots: int, replicas: int, holders: Iterable[Holder]
) -> Iterator[tuple[list[str], float, int]]:
    """dcgm-exporter's virtual-GPU mode on a node whose GPUs are shared ``replicas`` ways
    (``slots`` = GPUs x replicas): one series per pod holding a share, with the device's UUID and
    the share's number in ``vgpu``; a device no pod shares, one series without a pod. A device's
    utilization is its sharers' highest."""
    held: list[Holder] = [h for h in holders for _ in range(h.gpus)][:slots]
    for index in range(slots // replicas):
        sharers = held[index * replicas : (index + 1) * replicas]
        util = max((utilization(h.annotations) for h in sharers), default=0.0)
        used = int(MEMORY_MIB * util / 100)
        device = [str(index), gpu_uuid(node, index), f"nvidia{index}", PRODUCT, node]
        for share, h in enumerate(sharers):
            yield [*device, h.container, h.namespace, h.pod, str(share)], util, used
        if not sharers:
            yield [*device, "", "", "", ""], util, used


def families(
    nodes: Mapping[str, tuple[int, list[Holder]]], replicas: Mapping[str, int] | None = None
) -> list[Metric]:
    """The three families over ``nodes`` (node -> its GPU count and the pods holding them);
    ``replicas``: nodes whose GPUs are shared, each GPU that many ways (their count is slots)."""
    labels = [*LABELS, "vgpu"]
    util = GaugeMetricFamily("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", labels=labels)
    used = GaugeMetricFamily("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", labels=labels)
    free = GaugeMetricFamily("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", labels=labels)
    xid = GaugeMetricFamily(
        "DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.", labels=labels
    )
    codes = {(h.namespace, h.pod): _xid(h.annotations) for _, hs in nodes.values() for h in hs}
    for node, (gpus, holders) in sorted(nodes.items()):
        ways = (replicas or {}).get(node, 1)
        samples = (
            shared_gpu_samples(node, gpus, ways, holders)
            if ways > 1
            else (([*values, ""], u, m) for values, u, m in gpu_samples(node, gpus, holders))
        )
        for values, percent, mib in samples:
            util.add_metric(values, percent)
            used.add_metric(values, mib)
            free.add_metric(values, MEMORY_MIB - mib)
            xid.add_metric(values, codes.get((values[6], values[7]), 0))
    return [util, used, free, xid]


XID_ANNOTATION = "extres.test/xid"  # a pod whose GPUs report this XID error code (79: fell off the bus)


def _xid(annotations: Mapping[str, str]) -> int:
    text = annotations.get(XID_ANNOTATION, "")
    return int(text) if text.isascii() and text.isdigit() and len(text) < 6 else 0


def holders_from_pods(pods: Iterable[Mapping]) -> dict[str, list[Holder]]:
    """Per node, the running pods holding ``nvidia.com/gpu`` (as the API sends pods), oldest first."""
    out: dict[str, list[Holder]] = {}
    for p in sorted(pods, key=lambda p: p.get("metadata", {}).get("creationTimestamp", "")):
        spec, meta = p.get("spec") or {}, p.get("metadata") or {}
        if not spec.get("nodeName") or (p.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        for c in spec.get("containers") or ():
            asked = ((c.get("resources") or {}).get("limits") or {}).get(GPU)
            if asked and str(asked).isdigit() and int(asked) > 0:
                holder = Holder(
                    meta.get("namespace", ""),
                    meta.get("name", ""),
                    c.get("name", ""),
                    int(asked),
                    meta.get("annotations") or {},
                )
                out.setdefault(spec["nodeName"], []).append(holder)
    return out
