"""Jobs that wait for a queue's quota rather than for nodes (Kueue): what Kueue says a Workload
lacks, and who holds that quota. Pure: the views come from app/kube/wire/kueue.py.

Kueue words a Workload's QuotaReserved=False condition as "couldn't assign flavors to pod set
<name>: <reasons>", the reasons joined by ", " (sigs.k8s.io/kueue v0.17,
pkg/scheduler/flavorassigner: ``fitsResourceQuota``, ``Status.Message``):

* "insufficient unused quota for <resource> in flavor <flavor>, <quantity> more needed": the
  quota exists, others use it (waiting or preemption may free it);
* "insufficient quota for <resource> in flavor <flavor>, previously considered podsets requests
  (<a>) + current podset request (<b>) > maximum capacity (<c>)": it can never fit there.

Anything else Kueue says is quoted as it is."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

MAX_MESSAGE = 2048  # characters of Kueue's message read

_UNUSED = re.compile(
    r"insufficient unused quota for (?P<resource>\S+) in flavor (?P<flavor>\S+), (?P<more>\S+) more needed"
)
_NEVER = re.compile(
    r"insufficient quota for (?P<resource>\S+) in flavor (?P<flavor>\S+), previously considered podsets "
    r"requests \((?P<before>[^)]*)\) \+ current podset request \((?P<asked>[^)]*)\) > maximum capacity "
    r"\((?P<most>[^)]*)\)"
)


@dataclass(frozen=True)
class Shortfall:
    resource: str
    flavor: str
    more: str  # Kueue's quantity, as it wrote it ("" when it can never fit)
    never: str = ""  # the maximum capacity, when the request can never fit in this queue


def shortfalls(message: str) -> list[Shortfall]:
    """What Kueue's message says the Workload lacks, per resource and flavor (none when its words
    are not these)."""
    text = message[:MAX_MESSAGE]
    found = [Shortfall(m["resource"], m["flavor"], m["more"]) for m in _UNUSED.finditer(text)]
    found += [Shortfall(m["resource"], m["flavor"], "", m["most"]) for m in _NEVER.finditer(text)]
    return found


@dataclass(frozen=True)
class Condition:
    status: str
    reason: str
    message: str


@dataclass(frozen=True)
class Workload:
    """What the page reads of a Kueue Workload."""

    namespace: str
    name: str
    queue: str  # its LocalQueue
    owner: tuple[str, str]  # (kind, name) of the job it stands for, ("", "") when none
    conditions: Mapping[str, Condition]
    cluster_queue: str = ""  # where it is admitted (status.admission), "" when not
    usage: Mapping[tuple[str, str], str] = field(default_factory=dict)  # (flavor, resource) -> quantity
    requests: Mapping[str, str] = field(default_factory=dict)  # resource -> quantity, its pod sets

    def state(self, kind: str) -> str:
        found = self.conditions.get(kind)
        return found.status if found is not None else ""

    @property
    def waiting_for_quota(self) -> bool:
        """No quota reserved for it yet, and not finished."""
        return self.state("QuotaReserved") != "True" and self.state("Finished") != "True"


@dataclass(frozen=True)
class Holder:
    namespace: str
    name: str
    owner: tuple[str, str]
    amount: str  # of the resource, in the flavor


@dataclass(frozen=True)
class QuotaWait:
    workload: Workload
    cluster_queue: str  # through its LocalQueue ("" when the LocalQueue is not known)
    reason: Condition
    lacks: list[Shortfall]
    holders: dict[tuple[str, str], list[Holder]]  # (flavor, resource) -> admitted workloads using it


def waiting(
    workloads: Iterable[Workload], cluster_queue_of: Mapping[tuple[str, str], str], max_holders: int = 8
) -> list[QuotaWait]:
    """Each Workload waiting for quota, what it lacks in Kueue's words, and the admitted
    Workloads of its ClusterQueue that use that resource in that flavor, by namespace (the most
    first). ``cluster_queue_of``: (namespace, LocalQueue) -> its ClusterQueue."""
    every: Sequence[Workload] = list(workloads)
    out = []
    for w in sorted(every, key=lambda w: (w.namespace, w.name)):
        if not w.waiting_for_quota:
            continue
        reason = w.conditions.get("QuotaReserved") or Condition("", "", "")
        cq = cluster_queue_of.get((w.namespace, w.queue), "")
        lacks = shortfalls(reason.message)
        holders: dict[tuple[str, str], list[Holder]] = {}
        for s in lacks:
            using = [
                Holder(a.namespace, a.name, a.owner, a.usage[(s.flavor, s.resource)])
                for a in every
                if cq and a.cluster_queue == cq and (s.flavor, s.resource) in (a.usage or {})
            ]
            holders[(s.flavor, s.resource)] = sorted(using, key=lambda h: (h.namespace, h.name))[:max_holders]
        out.append(QuotaWait(w, cq, reason, lacks, holders))
    return out
