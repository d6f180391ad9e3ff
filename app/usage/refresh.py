"""One usage refresh, whole: each mapping's three or four queries and the Reading made of them
(``collect``), run in a process of its own for the served app (``in_child``).

Why a process: an answer of 40,000 series decodes into tens of MiB of small objects that live
a second; in the worker they would leave its heap fragmented (measured: +44 MiB of RSS kept after
three refreshes at 5,000 nodes x 8 GPUs, for 6.5 MiB of reading; bench/gpu_usage.py). The child
does the queries and the reading and hands back the reading alone, pickled; its memory goes with
it. It is started by app/sandbox/bounded_child.py (fork and exec: the worker has threads; isolated, with
no setting or key in its environment but the proxy variables that reach Prometheus), bounded
like the selector sandbox (1 GiB of address space, no core file) and killed past its deadline.
Both ends are this app: the pickles never carry anything from a user."""

from __future__ import annotations

import pickle
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from app.domain.gpu_usage import PodKey, Reading, read
from app.domain.usage_mapping import UsageMapping
from app.sandbox import bounded_child
from app.usage.poller import Source, UsageStopped, UsageUnavailable

MEMORY_LIMIT = 1 << 30  # bytes of address space the child may map
START_ALLOWANCE = 10.0  # seconds for the child to start, on top of its queries' time
MOST_QUERIES = 4  # a mapping's queries: utilization, memory used and free, last XID
CHILD = "usage refresh"  # its name in extres_child_exits_total
# the only variables the child gets beside PATH and LANG: how the operator's network reaches
# Prometheus (requests reads them)
PROXY_ENV = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy")


@dataclass(frozen=True)
class Job:
    url: str
    token_file: str | None
    ca_file: str | None
    timeout: float
    mappings: tuple[UsageMapping, ...]
    window: timedelta
    limit: int
    pod_nodes: Mapping[PodKey, str]  # the running pods' nodes, as the cache knows them
    # per node the cache knows, the most devices an exporter may report there (Store.device_room);
    # None: not known (a test's source), every host kept
    room: Mapping[str, int] | None = None


def collect(source: Source, job: Job, now: datetime) -> Reading:
    """The queries and the reading, in this process; UsageUnavailable when a query fails."""
    answers = [
        (
            source.query(m.utilization_query(job.window)),
            source.query(m.memory_query(m.memory_used)) if m.memory_used else [],
            source.query(m.memory_query(m.memory_free)) if m.memory_free else [],
            source.query(m.xid_query(job.window)) if m.xid_errors else [],
        )
        for m in job.mappings
    ]
    return read(answers, job.mappings, job.pod_nodes.get, now, job.window, job.limit, job.room)


def child() -> bounded_child.Child:
    """The refresh's child kind: one per runtime, its starts bounded per minute."""
    return bounded_child.Child(CHILD, "app.usage.refresh", MEMORY_LIMIT, passed_env=PROXY_ENV)


def in_child(
    job: Job, kind: bounded_child.Child | None = None, start_allowance: float = START_ALLOWANCE
) -> Reading:
    """``collect`` in a child process of ``kind`` (default: a kind of its own); UsageUnavailable
    when it fails, stalls or dies."""
    deadline = start_allowance + job.timeout * MOST_QUERIES * len(job.mappings)
    try:
        out = (kind or child()).run(pickle.dumps(job, protocol=pickle.HIGHEST_PROTOCOL), deadline)
    except bounded_child.Ended as ended:
        if ended.reason == bounded_child.STALLED:
            raise UsageUnavailable(f"the refresh took longer than {deadline:g} s and was stopped") from None
        if ended.reason == bounded_child.STOPPED:
            raise UsageStopped(f"the refresh was stopped by a signal (exit {ended.returncode})") from None
        raise UsageUnavailable(f"the refresh {ended}") from None
    outcome, value = pickle.loads(out)
    if outcome != "ok":
        message, detail = value
        raise UsageUnavailable(str(message), str(detail))
    if not isinstance(value, Reading):
        raise UsageUnavailable("the refresh answered something else than a reading")
    return value


def main() -> None:
    from app.usage.prometheus import Prometheus  # its HTTP client: in the refresh's own process

    job: Job = pickle.loads(sys.stdin.buffer.read())
    source = Prometheus(job.url, job.token_file, job.ca_file, job.timeout)
    try:
        result: tuple[str, object] = ("ok", collect(source, job, datetime.now(UTC)))
    except UsageUnavailable as exc:
        result = ("unavailable", (str(exc), exc.detail))
    sys.stdout.buffer.write(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))


if __name__ == "__main__":
    main()
