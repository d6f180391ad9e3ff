"""Shares told apart from GPUs (pure). With the NVIDIA device plugin's time-slicing or MPS, 8 GPUs
with 10 replicas each are advertised as ``nvidia.com/gpu: 80`` - or, renamed, as
``nvidia.com/gpu.shared: 80`` beside ``nvidia.com/gpu: 0``; GKE keeps ``nvidia.com/gpu`` and says
so in its own labels. What is behind the number is read from the node's labels, as their
publishers write them:

* NVIDIA's device plugin and GPU feature discovery (NVIDIA/k8s-device-plugin @1b826ac,
  internal/lm/resource.go ``baseLabeler``): ``<resource>.count`` (physical devices),
  ``<resource>.replicas`` (shares each), ``<resource>.sharing-strategy`` (``none``,
  ``time-slicing``, ``mps``: api/config/v1/sharing.go) and ``<resource>.product``, ending in
  ``-SHARED`` when shared and not renamed; the keys keep the original name when the resource is
  renamed to ``<resource>.shared`` (api/config/v1/consts.go ``DefaultSharedResourceNameSuffix``).
  Under MPS a request over 1 share is refused by default (``failRequestsGreaterThanOne``).
* GKE: ``cloud.google.com/gke-gpu-sharing-strategy`` (``time-sharing``, ``mps``) and
  ``cloud.google.com/gke-max-shared-clients-per-gpu``.

Labels can be wrong (k8s-device-plugin #732): where they disagree with the node's capacity that
is said, and allocatable stays what every scheduling number uses (the scheduler counts slots)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

SHARED_SUFFIX = ".shared"
GKE_STRATEGY = "cloud.google.com/gke-gpu-sharing-strategy"
GKE_CLIENTS = "cloud.google.com/gke-max-shared-clients-per-gpu"
GKE_RESOURCE = "nvidia.com/gpu"
STRATEGIES = ("time-slicing", "mps")
MOST_REPLICAS = 1024  # a replicas label past this is not believed


@dataclass(frozen=True)
class Sharing:
    """One shared resource on one node."""

    resource: str  # as advertised (``nvidia.com/gpu`` or ``nvidia.com/gpu.shared``)
    device: str  # the devices it is shares of (``nvidia.com/gpu``)
    # as advertised: capacity, devices x shares (allocatable, which the scheduler counts, may be less)
    slots: int
    replicas: int  # shares per device
    physical: int  # devices behind the slots (the count label, else slots / replicas)
    strategy: str  # time-slicing, mps, time-sharing (GKE), or "" when only the numbers say so
    disagree: str = ""  # how the labels disagree with the node ("" when they agree)

    def devices_behind(self, slots: int) -> int:
        """The devices ``slots`` of its shares take at the least (a device plugin marks a
        device's every share unhealthy together)."""
        return min(self.physical, -(-slots // self.replicas)) if slots > 0 else 0

    @property
    def refuses_over_one(self) -> bool:
        """A request for more than one share is refused at admission (MPS; GKE's sharing)."""
        return self.strategy in ("mps", "time-sharing")


def _whole(text: str | None) -> int | None:
    if text is None or not text.isascii() or not text.isdigit() or len(text) > 9:
        return None
    return int(text)


INTEL_GPUS = ("gpu.intel.com/i915", "gpu.intel.com/xe")


def whole_gpus(resource: str) -> bool:
    """A device plugin's whole GPUs (nvidia.com/gpu, amd.com/gpu), not their shares."""
    return resource.rsplit("/", 1)[-1] == "gpu"


def gpus(resource: str) -> bool:
    """A device plugin's GPUs, whole or their shares renamed .shared; Intel's i915 and xe."""
    return whole_gpus(resource.removesuffix(SHARED_SUFFIX)) or resource in INTEL_GPUS


MEMORY_LABEL = "nvidia.com/gpu.memory"  # GPU feature discovery's: each GPU's memory in MiB


def gpu_memory(labels: Mapping[str, str]) -> int | None:
    """Each of the node's GPUs' memory in MiB, as GPU feature discovery labels it (None: not said)."""
    return _whole(labels.get(MEMORY_LABEL))


def sharing(
    labels: Mapping[str, str], capacity: Mapping[str, int], allocatable: Mapping[str, int]
) -> dict[str, Sharing]:
    """The node's shared resources, by advertised name (none where nothing says shares)."""
    out: dict[str, Sharing] = {}
    for resource, slots in allocatable.items():
        renamed = resource.endswith(SHARED_SUFFIX)
        device = resource[: -len(SHARED_SUFFIX)] if renamed else resource
        if not renamed and resource + SHARED_SUFFIX in allocatable:
            continue  # renamed: the labels speak of the shares; the device's own count is whole GPUs
        replicas = _whole(labels.get(f"{device}.replicas"))
        strategy = labels.get(f"{device}.sharing-strategy", "")
        product = labels.get(f"{device}.product", "")
        count = _whole(labels.get(f"{device}.count"))
        if resource == GKE_RESOURCE and GKE_STRATEGY in labels:
            strategy = labels[GKE_STRATEGY][:32]
            replicas = _whole(labels.get(GKE_CLIENTS))
            count = None  # GKE says shares per device only
        said_shared = strategy in (*STRATEGIES, "time-sharing") or (replicas or 0) > 1
        if not (renamed or said_shared or product.endswith("-SHARED")):
            continue
        problems = []
        if replicas is None or not 1 <= replicas <= MOST_REPLICAS:
            problems.append("no readable replicas label")
            replicas = 1
        if product.endswith("-SHARED") and strategy == "none":
            problems.append(f"product {product} says shared, sharing-strategy says none")
        has = capacity.get(resource, slots)
        if count is not None and count * replicas != has:
            problems.append(f"{count} devices x {replicas} = {count * replicas}, the node has {has}")
        physical = count if count is not None and not problems else -(-slots // replicas)
        out[resource] = Sharing(
            resource,
            device,
            has,
            replicas,
            physical,
            strategy if strategy != "none" else "",
            "; ".join(problems),
        )
    return out


@dataclass
class Physical:
    """One device's physical count over the nodes: whole devices plus those behind shares, with the
    slots those shares are (never added to the devices)."""

    device: str
    whole: int = 0  # allocatable on nodes that do not share it
    shared: int = 0  # devices behind shares
    slots: int = 0  # the shares they are advertised as
    nodes: int = 0  # nodes sharing it
    disagree: int = 0  # of those, nodes whose labels disagree with them
    strategies: set[str] = field(default_factory=set)  # how they share it
    refusing: int = 0  # nodes where a request over one share is refused at admission
    names: set[str] = field(default_factory=set)  # the names its shares are advertised as

    @property
    def total(self) -> int:
        return self.whole + self.shared


def physical(rows: list[tuple[Mapping[str, int], Mapping[str, Sharing]]]) -> dict[str, Physical]:
    """Per device any node shares, its physical count (``rows``: each node's allocatable and
    shared resources), keyed by the device and by each advertised name of its shares."""
    found: dict[str, Physical] = {}
    devices = {s.device for _, shares in rows for s in shares.values()}
    for allocatable, shares in rows:
        shared_here = {s.device for s in shares.values()}
        for device in devices:
            p = found.setdefault(device, Physical(device))
            if device not in shared_here:
                p.whole += allocatable.get(device, 0)
        for s in shares.values():
            p = found[s.device]
            p.shared += s.physical
            p.slots += s.slots
            p.nodes += 1
            p.disagree += bool(s.disagree)
            p.strategies.add(s.strategy or "shares")
            p.refusing += s.refuses_over_one
            p.names.add(s.resource)
    names = {s.resource: found[s.device] for _, shares in rows for s in shares.values()}
    return {**found, **names}
