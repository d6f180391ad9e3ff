"""Reads beside the store: how fresh it is, what it could not read, who sets a resource, DRA's
state, GPU usage as last read and the pods sitting idle on their GPUs. Without a cluster (none
configured, or not reached) each answers with the one value that says so: stale freshness naming
why, nothing unreadable, no owner known beyond the name's rule, DRA "unknown", no idle pods."""

from __future__ import annotations

from datetime import UTC, datetime

from app.domain.gpu_ledger import Account
from app.domain.gpu_usage import PodKey, Reading
from app.domain.idle_pods import Holding, Idle, idle
from app.domain.ownership import Ownership, ownership_of, ownership_on
from app.kube.api.errors import KubeError
from app.kube.api.freshness import Freshness
from app.kube.wire.reading import Unreadable
from app.runtime.reads.kept import Handles, kept
from app.usage.poller import UsageStatus


def freshness(runtime: Handles) -> Freshness:
    try:
        return runtime.cluster.freshness()
    except KubeError as exc:
        return Freshness(synced=False, stale=True, age_seconds=None, error=exc.message)


def unreadable_named(runtime: Handles) -> list[Unreadable]:
    """A few of the objects the cache could not read (kind, name, where it failed)."""
    try:
        return runtime.cluster.unreadable_named()
    except KubeError:
        return []


def dra_state(runtime: Handles) -> str:
    try:
        return runtime.cluster.dra_state()
    except KubeError:
        return "unknown"


def ownership(runtime: Handles, resource: str, node: str | None = None) -> Ownership:
    """Who sets ``resource``'s amount (app.domain.ownership), on ``node`` when one is in question
    (as the scheduler decides there: its status first, else DRA devices there), else the name's
    owner: the one rule for every page that offers or describes a change."""

    def dra_class_for(name: str) -> str | None:
        try:
            return runtime.cluster.store.devices.class_for(name)
        except KubeError:
            return None

    owns = runtime.device_plugins.owns
    if node is None:
        return ownership_of(resource, owns, dra_class_for)
    try:
        here, dra_class = runtime.cluster.store.devices.served_on(node, resource)
    except KubeError:
        here, dra_class = None, None
    return ownership_on(resource, here, dra_class, owns, dra_class_for)


def read_only(runtime: Handles, resource: str, node: str | None = None) -> str | None:
    """What sets ``resource``'s amount (on ``node``) instead of this dashboard, if anything: a
    device plugin (the kubelet rewrites it) or DRA devices (their driver publishes them)."""
    return ownership(runtime, resource, node).source or None


def usage_status(runtime: Handles) -> UsageStatus | None:
    """GPU usage as last read (None when no Prometheus is set: pages show no usage at all)."""
    return runtime.usage.status() if runtime.usage is not None else None


def idle_pods(runtime: Handles, reading: Reading | None = None) -> list[Idle]:
    """Running pods whose GPUs stayed under the idle threshold over the window, most device-hours
    first, as of ``reading`` (a page passes the one it shows; default: the last one; none
    without one)."""
    if reading is None:
        status = usage_status(runtime)
        reading = status.reading if status is not None else None
    if reading is None:
        return []
    try:
        return _idle(runtime, reading)
    except KubeError:
        return []


@kept("rows_version", "holders_version", limit=2)  # holders come, go, move, change owner
def _idle(runtime: Handles, reading: Reading) -> list[Idle]:
    store = runtime.cluster.store

    def holding(key: PodKey) -> Holding | None:
        pod = store.objects.pod(*key)
        if pod is None or not pod.counts:
            return None
        owner = f"{pod.owner.kind}/{pod.owner.name}" if pod.owner and pod.owner.name else ""
        return Holding(pod.namespace, pod.name, pod.node_name, _time(pod.created), owner)

    return idle(reading, holding, runtime.settings.idle_threshold_percent, reading.taken)


def idle_held(runtime: Handles, reading: Reading | None = None) -> dict[str, int]:
    """Per node, the GPUs its idle pods hold (``idle_pods``; shares of one GPU add up to it)."""
    found: dict[str, float] = {}
    for i in idle_pods(runtime, reading):
        found[i.holding.node] = found.get(i.holding.node, 0) + i.devices
    return {node: round(n) for node, n in found.items() if round(n)}


def gpu_hours(runtime: Handles) -> tuple[dict[Account, float], datetime | None]:
    """GPU-seconds held per account since this process began counting, and since when (no
    cluster: nothing, and no time)."""
    try:
        part = runtime.cluster.store.gpu_hours
    except KubeError:
        return {}, None
    return part.held(), datetime.fromtimestamp(part.since, UTC)


def gpu_hours_seen(runtime: Handles) -> bool:
    """Whether any pod has held a GPU since this process began counting (no totals made)."""
    try:
        return runtime.cluster.store.gpu_hours.ledger.any
    except KubeError:
        return False


def gpu_hours_used(runtime: Handles) -> tuple[dict[Account, float], dict[Account, float]] | None:
    """Of them, the GPU-seconds used and left idle, as usage was read (None: no usage is read)."""
    if runtime.usage is None:
        return None
    try:
        return runtime.cluster.store.gpu_hours.used()
    except KubeError:
        return None


def _time(text: str) -> datetime:
    """An RFC 3339 time from the API (a pod's creation), or the epoch where it is not one."""
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return datetime.fromtimestamp(0, UTC)
