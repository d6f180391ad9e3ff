"""HAMi's GPU sharing, read as HAMi writes it (pure): Project-HAMi/HAMi @4707fb0.

* Its device plugin registers each node's GPUs in the node annotation
  ``hami.io/node-nvidia-register`` (pkg/device/nvidia/device.go ``RegisterAnnos``): a JSON array
  of ``{id, index, count, devmem, devcore, type, numa, mode, health}`` (pkg/device/devices.go
  ``MarshalNodeDevices``; ``count`` the vGPUs a GPU is split into, ``devmem`` its memory in MiB,
  ``devcore`` its cores in percent), older releases a ``:``-joined list of
  ``id,count,devmem,devcore,type,numa,health[,index,mode]`` (``EncodeNodeDevices``).
* Its scheduler writes what a pod was given in the pod annotation ``hami.io/vgpu-devices-allocated``
  (``SupportDevices``): per container (``;`` between them) the devices (``:`` between them), each
  ``UUID,type,MiB,cores`` (``EncodeContainerDevices``).
* ``hami.io/device-cordon`` on a node: GPU UUIDs, comma-separated, given no new allocation.

What does not parse is said as what it is, never read as 0."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

import msgspec

REGISTER = "hami.io/node-nvidia-register"
ALLOCATED = "hami.io/vgpu-devices-allocated"
CORDON = "hami.io/device-cordon"
NODE_ANNOTATIONS = (REGISTER, CORDON)  # what a node's projection keeps of HAMi's
MOST_TEXT = 64 * 1024  # an annotation read, at most (the API server allows 256 KiB for them all)
MOST_DEVICES = 256  # GPUs a node registers, or devices a pod is given, read at most


class _Registered(msgspec.Struct):
    id: str = ""
    index: int = 0
    count: int = 0
    devmem: int = 0
    devcore: int = 0
    type: str = ""
    numa: int = 0
    mode: str = ""
    health: bool = False


_REGISTERED = msgspec.json.Decoder(list[_Registered])


@dataclass(frozen=True)
class HamiGPU:
    """One physical GPU as HAMi's device plugin registered it."""

    id: str  # its UUID
    index: int
    vgpus: int  # the vGPUs it is split into (pods it may be given to at once)
    memory_mib: int
    cores: int  # percent of its cores (100: all)
    model: str
    healthy: bool
    mode: str = "hami-core"


@dataclass(frozen=True)
class HamiShare:
    """A part of one GPU a container was given."""

    gpu: str  # the GPU's UUID
    model: str
    memory_mib: int
    cores: int  # percent


@lru_cache(maxsize=256)
def parse_register(text: str) -> tuple[tuple[HamiGPU, ...], str]:
    """The GPUs a node's register annotation names, and what kept the rest from being read ("");
    parsed once per text (HAMi's device plugin writes it again every 30 s, mostly the same)."""
    text = text.strip()
    if len(text) > MOST_TEXT:
        return (), f"{REGISTER} is {len(text)} bytes, past the {MOST_TEXT} read"
    if text.startswith("["):
        try:
            found = _REGISTERED.decode(text)
        except msgspec.DecodeError as exc:
            return (), f"{REGISTER} is not HAMi's JSON list of GPUs ({str(exc)[:120]})"
        gpus = tuple(
            HamiGPU(
                d.id[:128],
                d.index,
                d.count,
                d.devmem,
                d.devcore,
                d.type[:128],
                d.health,
                d.mode[:32] or "hami-core",
            )
            for d in found[:MOST_DEVICES]
            if d.id
        )
        return gpus, "" if len(found) <= MOST_DEVICES else f"{len(found) - MOST_DEVICES} more GPUs not read"
    return _parse_joined(text)


def _parse_joined(text: str) -> tuple[tuple[HamiGPU, ...], str]:
    """The older form: ``id,count,devmem,devcore,type,numa,health[,index,mode]:`` per GPU."""
    if ":" not in text:
        return (), f"{REGISTER} is neither HAMi's JSON list nor its ':'-joined form"
    gpus: list[HamiGPU] = []
    for part in text.split(":")[:MOST_DEVICES]:
        if not part:
            continue
        items = part.split(",")
        if len(items) not in (7, 9):
            return tuple(
                gpus
            ), f"{REGISTER}: a GPU of {len(items)} fields (HAMi writes 7 or 9): {part[:80]!r}"
        try:
            count, mem, core, index = (
                int(items[1]),
                int(items[2]),
                int(items[3]),
                int(items[7]) if len(items) == 9 else 0,
            )
        except ValueError:
            return tuple(gpus), f"{REGISTER}: a number that is not one in {part[:80]!r}"
        healthy = items[6].strip().lower() in ("true", "1", "t")
        mode = items[8][:32] if len(items) == 9 else "hami-core"
        gpus.append(HamiGPU(items[0][:128], index, count, mem, core, items[4][:128], healthy, mode))
    return tuple(gpus), ""


def parse_allocated(text: str) -> tuple[list[HamiShare], str]:
    """Every GPU part a pod's containers were given, and what kept the rest from being read ("")."""
    if len(text) > MOST_TEXT:
        return [], f"{ALLOCATED} is {len(text)} bytes, past the {MOST_TEXT} read"
    shares: list[HamiShare] = []
    for container in text.split(";"):
        for part in container.split(":"):
            if "," not in part:
                continue
            items = part.split(",")
            if len(items) < 4:
                return shares, f"{ALLOCATED}: a device of {len(items)} fields (HAMi writes 4): {part[:80]!r}"
            try:
                shares.append(HamiShare(items[0][:128], items[1][:64], int(items[2]), int(items[3])))
            except ValueError:
                return shares, f"{ALLOCATED}: a number that is not one in {part[:80]!r}"
            if len(shares) >= MOST_DEVICES:
                return shares, ""
    return shares, ""


def cordoned(text: str) -> frozenset[str]:
    """The GPU UUIDs a node's cordon annotation names (stray spaces and commas skipped, as HAMi)."""
    return frozenset(u for u in (p.strip() for p in text[:MOST_TEXT].split(",")) if u)


def held(shares: Iterable[HamiShare], registered: Iterable[HamiGPU]) -> float:
    """The physical GPUs a pod's parts amount to: each the larger of its share of its GPU's cores
    and of its memory (what it keeps from others), a part of neither known 1/vGPUs of it; at most
    one GPU a part. On a GPU the node does not register, its cores alone (percent of a GPU)."""
    known = {g.id: g for g in registered}
    total = 0.0
    for s in shares:
        gpu = known.get(s.gpu)
        cores = s.cores / gpu.cores if gpu is not None and gpu.cores > 0 else s.cores / 100
        memory = s.memory_mib / gpu.memory_mib if gpu is not None and gpu.memory_mib > 0 else 0.0
        part = max(cores, memory)
        if part <= 0:
            part = 1 / gpu.vgpus if gpu is not None and gpu.vgpus > 0 else 1.0
        total += min(1.0, part)
    return total


@dataclass
class GpuRow:
    """One physical GPU and what consumes it: its pods, their memory and cores, against its own."""

    node: str
    gpu: str  # its UUID
    model: str
    memory_mib: int | None  # None: not known (a GPU no register names)
    cores: int | None
    vgpus: int | None
    healthy: bool | None
    cordoned: bool = False
    pods: list[str] = field(default_factory=list)  # namespace/name of each consumer
    memory_used_mib: int = 0
    cores_used: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def over(self) -> bool:
        """Given more than it has (memory, cores or vGPUs)."""
        return (
            (self.memory_mib is not None and self.memory_used_mib > self.memory_mib)
            or (self.cores is not None and self.cores_used > self.cores)
            or (self.vgpus is not None and len(self.pods) > self.vgpus)
        )


def rows(
    node: str, gpus: Iterable[HamiGPU], cordon: frozenset[str], given: Iterable[tuple[str, list[HamiShare]]]
) -> list[GpuRow]:
    """A row per GPU the node registers, each with the pods given a part of it (``given``: pod,
    its shares); a share naming a GPU the node does not register gets a row of its own, said."""
    out = {
        g.id: GpuRow(node, g.id, g.model, g.memory_mib, g.cores, g.vgpus, g.healthy, g.id in cordon)
        for g in gpus
    }
    for pod, shares in given:
        for s in shares:
            row = out.get(s.gpu)
            if row is None:
                row = out[s.gpu] = GpuRow(node, s.gpu, s.model, None, None, None, None, s.gpu in cordon)
                row.problems.append("not among the GPUs HAMi registers on this node")
            if pod not in row.pods:
                row.pods.append(pod)
            row.memory_used_mib += s.memory_mib
            row.cores_used += s.cores
    for row in out.values():
        if row.over:
            row.problems.append("given more than it has")
    return list(out.values())


MEMORY = "nvidia.com/gpumem"  # MiB of each GPU a container asks HAMi for
MEMORY_PERCENT = "nvidia.com/gpumem-percentage"
CORES = "nvidia.com/gpucores"  # percent of each GPU's cores
VGPUS = "nvidia.com/gpu"  # the vGPUs: one per GPU given


def asks(requests: Mapping[str, int]) -> bool:
    """A pod asks HAMi for a part of its GPUs (memory or cores by HAMi's own resource names)."""
    return any(k in requests for k in (MEMORY, MEMORY_PERCENT, CORES))


def fit(requests: Mapping[str, int], rows: Iterable[GpuRow]) -> str:
    """Whether some node has as many GPUs as the pod asks, each with the memory and cores it asks
    free and a vGPU left, said as HAMi's scheduler decides it; the most free GPU named when none."""
    gpus = max(1, requests.get(VGPUS, 1))
    memory, percent, cores = requests.get(MEMORY, 0), requests.get(MEMORY_PERCENT, 0), requests.get(CORES, 0)
    per_node: dict[str, list[GpuRow]] = {}
    for r in rows:
        per_node.setdefault(r.node, []).append(r)
    best: tuple[int, GpuRow] | None = None
    for node, found in sorted(per_node.items()):
        usable = []
        for r in found:
            if r.memory_mib is None or r.cordoned or r.healthy is False:
                continue
            free = r.memory_mib - r.memory_used_mib
            wanted = memory or (r.memory_mib * percent // 100 if percent else 0)
            left = (r.vgpus or 0) - len(r.pods)
            if best is None or free > best[0]:
                best = (free, r)
            if free >= wanted and (r.cores or 100) - r.cores_used >= cores and left > 0:
                usable.append(r)
        n = f"{gpus} GPU{'s' if gpus != 1 else ''}"
        if len(usable) >= gpus:
            return f"HAMi: {node} has {n} with that much free; its scheduler may take it there"
    asked = f"{memory / 1024:g} GiB" if memory else (f"{percent} % of the memory" if percent else "a vGPU")
    also = f" and {cores} % of the cores" if cores else ""
    said = f"HAMi: no node has {gpus} GPU{'s' if gpus != 1 else ''} with {asked}{also} free"
    if best is not None:
        free, gpu = best
        said += f" (the most memory free on one GPU: {free / 1024:g} GiB, {gpu.gpu[:12]}… on {gpu.node})"
    return said
