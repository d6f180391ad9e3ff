"""The scheduler's "0/3 nodes are available: ..." message, parsed tolerantly (its format changed
between Kubernetes versions); Volcano's and KAI's where their shape is known (each cited below),
anything else kept verbatim."""

from __future__ import annotations

import re
from dataclasses import dataclass

# kube-scheduler: "0/3 nodes are available: ..."; Volcano: "0/3 nodes are unavailable: ...", its
# reasons counted and joined the same way (volcano-sh/volcano pkg/scheduler/api/unschedule_info.go,
# FitErrors.Error, "Insufficient <resource>" among them)
_HEAD = re.compile(
    r"^\s*(?P<avail>[0-9]{1,9})/(?P<total>[0-9]{1,9}) nodes are (?:un)?available(?::\s*(?P<rest>.*))?$", re.S
)
_REASON_SPLIT = re.compile(r",\s+(?=\d+\s)")
_REASON = re.compile(r"^(?P<count>[0-9]{1,9})\s+(?P<text>.+?)\.?$", re.S)
_INSUFFICIENT = re.compile(r"^Insufficient (?P<resource>\S+)$")
# KAI (NVIDIA/KAI-Scheduler @72de64f, pkg/scheduler/api/common_info/pod_errors.go,
# ``TasksFitErrors.Error``, and default_status_updater.go ``addNodePoolPrefixIfNeeded``): "[Node-Pool
# '<pool>': ]no nodes with enough resources were found: <count> <reason>. \n<count> <reason>.", each
# short reason "node(s) didn't have enough resources: <what>", <what> a resource's name or one of
# KAI's own words for GPUs, CPU and memory
_KAI_HEAD = re.compile(
    r"^\s*(?:Node-Pool '(?P<pool>[^']{0,253})': )?"
    r"no nodes with enough resources were found(?::\s*(?P<rest>.*))?$",
    re.S,
)
_KAI_SPLIT = re.compile(r"\.\s*\n")
_KAI_SHORT = re.compile(r"^node\(s\) didn't have enough resources: (?P<what>.+)$")
KAI_WORDS = {"GPUs": "nvidia.com/gpu", "CPU cores": "cpu", "memory": "memory"}
# KAI's queue quota refusals (pkg/scheduler/api/unschedule_info.go, ``getOverCapacityMessageDetails``
# and ``GetJobOverMaxAllowedMessageForQueue``), for GPUs
_KAI_OVER_QUOTA = re.compile(
    r"Workload requested (?P<asked>[0-9.]+) GPUs, but (?P<queue>\S+) quota is (?P<quota>[0-9.]+) GPUs, "
    r"while (?P<used>[0-9.]+) GPUs are already allocated for non-preemptible pods"
)
_KAI_OVER_LIMIT = re.compile(
    r"(?P<queue>\S+) quota has reached the allowable limit of GPUs\. Limit is (?P<quota>[0-9.]+) GPUs, "
    r"currently (?P<used>[0-9.]+) GPUs allocated and workload requested (?P<asked>[0-9.]+) GPUs"
)
# the DynamicResources plugin's filter reasons (1.34+), as kube-scheduler words them
DRA_REASONS = frozenset({"cannot allocate all claims", "still not schedulable"})
DEFAULT_SCHEDULER = "default-scheduler"
MAX_MESSAGE = 4096  # characters of a message parsed as KAI's (the condition's own limit is larger)
# scheduling gates whose owner is known, and what lifts them: Kueue's, as its source names them
# (sigs.k8s.io/kueue v0.17: pkg/controller/jobs/pod/constants, apis/kueue/v1beta2)
GATE_OWNERS = {
    "kueue.x-k8s.io/admission": "Kueue lifts it once the pod's Workload is admitted: it waits for quota",
    "kueue.x-k8s.io/topology": "Kueue lifts it once it has placed the pod in its topology",
    "kueue.x-k8s.io/elastic-job": "Kueue lifts it once the job's new size is admitted",
}


@dataclass(frozen=True)
class SchedulerMessage:
    raw: str
    total_nodes: int | None = None
    reasons: tuple[tuple[int, str], ...] = ()  # (node count, reason), scheduling part only
    preemption: str | None = None  # the "preemption: ..." clause, when present
    post_filter: tuple[str, ...] = ()  # other post-filter clauses ("no new claims to deallocate")
    cut: bool = False  # the message was cut at 1,024 characters (" ..."); its last reason left out
    node_pool: str = ""  # KAI: the node pool it speaks of
    queue_quota: KaiQuota | None = None  # KAI: its queue's GPU quota refused the pod

    @property
    def insufficient(self) -> dict[str, int]:
        """resource -> how many nodes the scheduler found short of it."""
        out: dict[str, int] = {}
        for count, text in self.reasons:
            if resource := _short_of(text):
                out[resource] = out.get(resource, 0) + count
        return out

    @property
    def devices_short(self) -> int:
        """Nodes where the scheduler's DRA plugin could not allocate the pod's claims (its
        extended resources served by DRA devices among them; the message names neither)."""
        return sum(c for c, text in self.reasons if text in DRA_REASONS)

    @property
    def other_reasons(self) -> list[tuple[int, str]]:
        return [(c, t) for c, t in self.reasons if not _short_of(t)]

    @property
    def reasons_besides_devices(self) -> list[tuple[int, str]]:
        """``other_reasons`` less the DRA plugin's, for a page that says those already."""
        return [(c, t) for c, t in self.other_reasons if t not in DRA_REASONS]


@dataclass(frozen=True)
class KaiQuota:
    """KAI's words on a queue whose GPU quota (or limit) the pod's workload would pass."""

    queue: str
    asked: str
    quota: str
    used: str
    limit: bool  # its queue's hard limit (not over quota: a preemptible workload may go over that)


def _short_of(reason: str) -> str:
    """The resource a node-count reason says nodes were short of ("" when it says none)."""
    if m := _INSUFFICIENT.match(reason):
        return m["resource"]
    if m := _KAI_SHORT.match(reason):
        return KAI_WORDS.get(m["what"], m["what"] if "/" in m["what"] else "")
    return ""


def _kai(text: str) -> SchedulerMessage | None:
    """KAI's message, or None when it is not in KAI's words."""
    for pattern, limit in ((_KAI_OVER_QUOTA, False), (_KAI_OVER_LIMIT, True)):
        if q := pattern.search(text):
            return SchedulerMessage(
                raw=text, queue_quota=KaiQuota(q["queue"], q["asked"], q["quota"], q["used"], limit)
            )
    m = _KAI_HEAD.match(text)
    if not m:
        return None
    reasons = []
    for part in _KAI_SPLIT.split((m["rest"] or "").strip()):
        if r := _REASON.match(part.strip()):
            reasons.append((int(r["count"]), r["text"].strip().rstrip(".")))
    return SchedulerMessage(raw=text, reasons=tuple(reasons), node_pool=m["pool"] or "")


def parse_scheduler_message(message: str) -> SchedulerMessage:
    """Parse ``0/N nodes are available: 3 Insufficient x, 1 node(s) didn't match ...``.

    kube-scheduler writes the filter reasons, a full stop, then what its post-filter plugins
    said, joined by ", " (``FitError.Error``): since 1.22 the preemption plugin's
    ``preemption: ...``, since 1.34 the DynamicResources plugin's ``no new claims to deallocate``
    before it. No reason contains ". " (taint keys and resource names have dots, never followed
    by a space), so the first ". " ends the reasons. Unknown shapes are kept whole in ``raw``
    with no reasons, never guessed at.
    """
    text = (message or "").strip()
    # A message too long for the condition is cut at 1,024 characters and ends " ...": the last
    # reason before the cut is partial (a resource name cut short), so it is left out.
    cut = text.endswith(" ...")
    main, _, post = (text[:-4] if cut else text).partition(". ")
    m = _HEAD.match(main)
    if not m:
        return _kai(text[:MAX_MESSAGE]) or SchedulerMessage(raw=text)
    reasons: list[tuple[int, str]] = []
    rest = (m["rest"] or "").strip()
    if rest.endswith("."):
        rest = rest[:-1]
    parts = _REASON_SPLIT.split(rest) if rest else []
    if cut and not post:  # the cut fell among the reasons
        parts = parts[:-1]
    for part in parts:
        if r := _REASON.match(part.strip()):
            reasons.append((int(r["count"]), r["text"].strip().rstrip(".")))
    others, _, preemption = post.partition("preemption: ")
    return SchedulerMessage(
        raw=text,
        total_nodes=int(m["total"]),
        reasons=tuple(reasons),
        preemption=preemption.strip().rstrip(".") or None,
        post_filter=tuple(c.strip() for c in others.split(",") if c.strip()),
        cut=cut,
    )


def gate_owner(gate: str) -> tuple[str, str]:
    """A scheduling gate and who lifts it, where its name says so ("" otherwise)."""
    return gate, GATE_OWNERS.get(gate, "")
