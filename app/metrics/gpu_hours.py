"""GPU-hours per team, as counters Prometheus keeps: the seconds of physical GPUs each account has
held since this process started (app.domain.gpu_ledger), by namespace, Kueue LocalQueue, owning
workload and team. Prometheus stores and aggregates them (``increase()`` over any window; a
restart is a counter reset), so the ledger outlives the process and scales with Prometheus,
Thanos or Mimir. At most ``MOST_ACCOUNTS`` label sets per cluster: past it, new accounts are
folded into their team's ``owner_kind="other"`` (counted in extres_gpu_accounts_folded)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client.core import CounterMetricFamily, Metric

from app.domain.gpu_ledger import MOST_ACCOUNTS, Account

if TYPE_CHECKING:
    from app.kube.state.store import Store

LABELS = ["namespace", "queue", "owner_kind", "owner_name", "team", "model"]


def _values(account: Account) -> list[str]:
    """An account's label values, in LABELS' order."""
    return [
        account.namespace,
        account.queue,
        account.owner_kind,
        account.owner_name,
        account.team,
        account.model,
    ]


def families(store: Store) -> Iterator[Metric]:
    held = CounterMetricFamily(
        "extres_gpu_seconds_held",
        "GPU-seconds held by running pods since this process started, in physical GPUs (a "
        "time-slicing or MPS share is 1/replicas of a GPU, a MIG instance its profile's fraction), "
        "from every bind, completion and deletion the watch sees; take increase() over a window. "
        f'At most {MOST_ACCOUNTS} label sets: the next are folded into owner_kind="other".',
        labels=LABELS,
    )
    for account, seconds in sorted(store.gpu_hours.held().items()):
        held.add_metric(_values(account), seconds)
    yield held
    used, idle = store.gpu_hours.used()
    for name, per, what in (("used", used, "busy"), ("idle", idle, "idle")):
        family = CounterMetricFamily(
            f"extres_gpu_seconds_{name}",
            f"Of extres_gpu_seconds_held, the GPU-seconds the GPUs were {what}: each usage read splits "
            "the time held since the last by the pod's mean utilization over the usage window "
            "(pods the exporter does not name: neither).",
            labels=LABELS,
        )
        for account, value in sorted(per.items()):
            family.add_metric(_values(account), value)
        yield family
    yield CounterMetricFamily(
        "extres_gpu_accounts_folded",
        'Holds charged to a team\'s owner_kind="other" because the accounts kept were at their bound.',
        store.gpu_hours.ledger.folded,
    )
