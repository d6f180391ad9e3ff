"""GPU-seconds held, per account, integrated from the moments holds begin and end (pure).

A pod holds GPUs from the moment the cache sees it bound and running with a GPU request until it
completes or is deleted: every bind, completion and deletion is an event of the watch, so a pod
that lived between two scrapes of the metrics counts in full. What it holds is counted in
physical GPUs (``gpus_of``): a whole GPU as 1, a time-slicing or MPS share as 1/replicas of its
GPU (the node's labels, app.domain.gpu_sharing), a MIG instance as its profile's fraction of its
GPU (``nvidia.com/mig-3g.20gb``: 3 of 7 compute slices).

The totals only grow while the process lives (counters: Prometheus stores them and takes
``increase()`` over a window, a restart read as a counter reset), so a hold is counted from when
this process saw it, never from the pod's start. The accounts kept are bounded: past ``most``,
a new account is folded into one per team ("other"), said in the metric's help."""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass

from app.domain.gpu_sharing import Sharing

MIG = re.compile(r"nvidia\.com/mig-(\d)g\.\d+gb(?:\.[a-z0-9.+-]*)?")
MIG_SLICES = 7  # compute slices of a MIG-capable GPU (A100, H100, H200, B200)
MOST_ACCOUNTS = 2000  # accounts kept apart; the next are folded into their team's "other"
OTHER = "other"


@dataclass(frozen=True, slots=True, order=True)
class Account:
    """Who a hold is charged to."""

    namespace: str
    queue: str  # Kueue's LocalQueue (the pod's kueue.x-k8s.io/queue-name label), "" when none
    owner_kind: str  # the workload (Job, ReplicaSet, ...), "" for a bare pod
    owner_name: str
    team: str  # the configured label's value, "" when none
    model: str = ""  # the GPUs' model (GPU feature discovery's nvidia.com/gpu.product), "" when not said


def gpus_of(
    requests: Mapping[str, int], shared: Mapping[str, Sharing], is_gpu: Callable[[str], bool]
) -> float:
    """The physical GPUs ``requests`` hold on a node whose shared resources are ``shared``."""
    total = 0.0
    for resource, count in requests.items():
        if count <= 0:
            continue
        if (s := shared.get(resource)) is not None:
            total += count / max(1, s.replicas)
        elif m := MIG.fullmatch(resource):
            total += count * min(int(m.group(1)), MIG_SLICES) / MIG_SLICES
        elif is_gpu(resource):
            total += count
    return total


class Ledger:
    """GPU-seconds per account: the closed holds' sum, plus each open hold up to ``now``."""

    def __init__(self, most: int = MOST_ACCOUNTS) -> None:
        self.most = most
        self._closed: dict[Account, float] = {}
        self._open: dict[Hashable, tuple[Account, float, float]] = {}  # pod -> (account, GPUs, since)
        self.folded = 0  # accounts folded into "other" since the start
        self._used: dict[Account, float] = {}  # GPU-seconds held while busy, as usage reads
        self._idle: dict[Account, float] = {}
        self._busy_at: dict[Hashable, float] = {}  # each hold's last split into used and idle

    def _kept(self, account: Account) -> Account:
        if account in self._closed or len(self._closed) < self.most:
            self._closed.setdefault(account, 0.0)
            return account
        self.folded += 1
        other = Account("", "", OTHER, "", account.team, account.model)
        self._closed.setdefault(other, 0.0)
        return other

    def hold(self, pod: Hashable, account: Account, gpus: float, at: float) -> None:
        """``pod`` holds ``gpus`` from ``at`` (a change of what it holds closes the hold before)."""
        was = self._open.get(pod)
        if was is not None and was[0] == account and was[1] == gpus:
            return
        self.release(pod, at)
        if gpus > 0:
            self._open[pod] = (self._kept(account), gpus, at)

    def release(self, pod: Hashable, at: float) -> None:
        """``pod`` holds nothing from ``at`` (completed, deleted, or no longer asking for GPUs)."""
        was = self._open.pop(pod, None)
        self._busy_at.pop(pod, None)
        if was is not None:
            account, gpus, since = was
            self._closed[account] += gpus * max(0.0, at - since)

    @property
    def any(self) -> bool:
        """Whether any account has held a GPU (every hold keeps its account)."""
        return bool(self._closed)

    def holding(self) -> Iterable[Hashable]:
        return list(self._open)

    def busy(self, reading: Callable[[Hashable], float | None], at: float) -> None:
        """Each open hold's GPU-seconds since the last call (or its start) split into used and
        idle by ``reading`` (a pod's mean utilization, 0 to 100; None: not reported, and neither
        counted)."""
        for pod, (account, gpus, since) in self._open.items():
            begin = max(since, self._busy_at.get(pod, since))
            self._busy_at[pod] = at
            utilization = reading(pod)
            if utilization is None or at <= begin:
                continue
            seconds = gpus * (at - begin)
            used = seconds * min(100.0, max(0.0, utilization)) / 100
            self._used[account] = self._used.get(account, 0.0) + used
            self._idle[account] = self._idle.get(account, 0.0) + seconds - used

    def used(self) -> tuple[dict[Account, float], dict[Account, float]]:
        """GPU-seconds used and left idle per account, as far as usage was read."""
        return dict(self._used), dict(self._idle)

    def held(self, now: float) -> dict[Account, float]:
        """GPU-seconds per account up to ``now`` (never less than at an earlier ``now``)."""
        out = dict(self._closed)
        for account, gpus, since in self._open.values():
            out[account] += gpus * max(0.0, now - since)
        return out
