"""KAI Scheduler's (Run:ai's) GPU fractions, read as KAI writes them (pure): NVIDIA/KAI-Scheduler
@72de64f.

* A pod asks for a part of a GPU by annotation, never by a resource: ``gpu-fraction`` (``0.5``)
  or ``gpu-memory`` (MiB), for ``gpu-fraction-num-devices`` GPUs (1 when absent)
  (pkg/common/constants, pkg/common/resources/gpu_sharing.go).
* The GPU the fractions share is held by a reservation pod KAI's binder creates in
  ``kai-resource-reservation``, asking ``nvidia.com/gpu: 1`` and labelled ``runai-gpu-group:
  <group>``; the fraction pods of that GPU carry the same label (a pod of several GPUs
  ``runai-gpu-group/<group>: <group>``) (pkg/binder/binding/resourcereservation).

So one physical GPU is one group: its reservation pod and its fractions. What does not parse is
said as what it is, never read as 0."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

FRACTION = "gpu-fraction"
MEMORY = "gpu-memory"
DEVICES = "gpu-fraction-num-devices"
GROUP = "runai-gpu-group"
RESERVATION_NAMESPACE = "kai-resource-reservation"
ANNOTATIONS = (FRACTION, MEMORY, DEVICES)  # what a pod's projection keeps of KAI's
MOST_DEVICES = 64


@dataclass(frozen=True)
class Asked:
    """What a fraction pod asks: a fraction of each of ``devices`` GPUs, or MiB of each."""

    fraction: float | None
    memory_mib: int | None
    devices: int
    problem: str = ""


def asked(annotations: Mapping[str, str]) -> Asked | None:
    """A pod's fraction request (None: it asks for none)."""
    raw_fraction, raw_memory = annotations.get(FRACTION), annotations.get(MEMORY)
    if raw_fraction is None and raw_memory is None:
        return None
    devices, problems = 1, []
    raw_devices = annotations.get(DEVICES)
    if raw_devices is not None:
        if raw_devices.isascii() and raw_devices.isdigit() and 1 <= int(raw_devices[:4]) <= MOST_DEVICES:
            devices = int(raw_devices)
        else:
            problems.append(f"{DEVICES} {raw_devices[:20]!r} is not a number of GPUs")
    fraction = memory = None
    if raw_fraction is not None:
        try:
            fraction = float(raw_fraction[:20])
        except ValueError:
            fraction = None
        if fraction is None or not 0 < fraction <= 1:
            problems.append(f"{FRACTION} {raw_fraction[:20]!r} is not a fraction of a GPU (0 to 1)")
            fraction = None
    if raw_memory is not None:
        if raw_memory.isascii() and raw_memory.isdigit() and len(raw_memory) <= 9:
            memory = int(raw_memory)
        else:
            problems.append(f"{MEMORY} {raw_memory[:20]!r} is not a number of MiB")
    return Asked(fraction, memory, devices, "; ".join(problems))


def group_of(labels: Mapping[str, str]) -> list[str]:
    """The GPU groups a pod belongs to (its single label, or one label per group)."""
    single = labels.get(GROUP)
    many = [v for k, v in labels.items() if k.startswith(GROUP + "/")]
    return ([single] if single else []) + many


def held(ask: Asked, gpu_memory_mib: int | None) -> float | None:
    """The physical GPUs a fraction pod holds: its fraction, or its memory over its GPUs' (None:
    a memory request on GPUs whose memory is not known), times its GPUs."""
    if ask.fraction is not None:
        return ask.fraction * ask.devices
    if ask.memory_mib is not None and gpu_memory_mib:
        return min(1.0, ask.memory_mib / gpu_memory_mib) * ask.devices
    return None


@dataclass
class Group:
    """One physical GPU KAI shares: the reservation pod holding it and the fractions given of it."""

    node: str
    group: str
    reservation: str = ""  # namespace/name of the reservation pod ("": none seen)
    pods: list[tuple[str, float | None]] = field(default_factory=list)  # (namespace/name, GPUs)
    problems: list[str] = field(default_factory=list)

    @property
    def given(self) -> float | None:
        """The fractions given, summed (None: one of them is not known)."""
        parts = [g for _, g in self.pods]
        return None if any(g is None for g in parts) else sum(g for g in parts if g is not None)


@dataclass(frozen=True)
class KaiPod:
    key: str  # namespace/name
    namespace: str
    labels: Mapping[str, str]
    ask: Asked | None


def groups(node: str, pods: Iterable[KaiPod], gpu_memory_mib: int | None) -> list[Group]:
    """The node's GPU groups: each reservation pod and the fraction pods of its group."""
    out: dict[str, Group] = {}
    for pod in pods:
        for name in group_of(pod.labels):
            g = out.setdefault(name, Group(node, name))
            if pod.namespace == RESERVATION_NAMESPACE:
                g.reservation = pod.key
            elif pod.ask is not None:
                each = held(pod.ask, gpu_memory_mib)
                g.pods.append((pod.key, each / pod.ask.devices if each is not None else None))
                if pod.ask.problem:
                    g.problems.append(f"{pod.key}: {pod.ask.problem}")
    for g in out.values():
        if not g.reservation:
            g.problems.append("no reservation pod holds its GPU")
        if g.given is not None and g.given > 1 + 1e-9:
            g.problems.append(f"fractions of {g.given:g} GPUs given of one")
    return sorted(out.values(), key=lambda g: g.group)


def fit(ask: Asked, groups: Iterable[Group], gpu_memory_mib: int | None) -> str:
    """Where KAI may put a waiting fraction pod, in its terms: a GPU group with that much of its GPU
    left, else a new group, which needs a whole free GPU for its reservation pod."""
    each = held(ask, gpu_memory_mib)
    if each is None:
        return "KAI: it asks for GPU memory, and the GPUs' memory is not known here"
    part = each / ask.devices
    roomy = [g for g in groups if g.given is not None and g.given + part <= 1 + 1e-9]
    if len(roomy) >= ask.devices:
        g = max(roomy, key=lambda g: 1 - (g.given or 0))
        left = 1 - (g.given or 0)
        return f"KAI: GPU group {g.group} on {g.node} has {left:g} of its GPU left, enough for its {part:g}"
    return (
        f"KAI: no GPU group has {part:g} of its GPU left; a new group needs a whole free GPU on one node for "
        "its reservation pod"
    )
