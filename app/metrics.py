"""A small Prometheus text-format registry: the app's own request latency and API errors.

Cluster numbers (capacity, allocatable, requested, pending) are computed from
the cache at scrape time; only the app's own counters live here.
"""

from __future__ import annotations

import bisect
import threading
from collections import defaultdict
from collections.abc import Iterable, Mapping

BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


def _labels(labels: Mapping[str, str]) -> str:
    if not labels:
        return ""

    def esc(v: str) -> str:
        return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')

    return "{" + ",".join(f'{k}="{esc(str(v))}"' for k, v in sorted(labels.items())) + "}"


class Registry:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hist: dict[tuple[str, str], list[int]] = {}
        self._sums: dict[tuple[str, str], float] = defaultdict(float)
        self.api_errors: dict[tuple[str, str], int] = defaultdict(int)  # (operation, kind) -> count

    def observe(self, endpoint: str, method: str, seconds: float) -> None:
        key = (endpoint, method)
        with self._lock:
            counts = self._hist.setdefault(key, [0] * (len(BUCKETS) + 1))
            counts[bisect.bisect_left(BUCKETS, seconds)] += 1
            self._sums[key] += seconds

    def api_error(self, operation: str, kind: str) -> None:
        with self._lock:
            self.api_errors[(operation, kind)] += 1

    def lines(self) -> Iterable[str]:
        with self._lock:
            hist = {k: list(v) for k, v in self._hist.items()}
            sums = dict(self._sums)
            errors = dict(self.api_errors)
        yield "# HELP extres_request_duration_seconds Time to answer an HTTP request."
        yield "# TYPE extres_request_duration_seconds histogram"
        for (endpoint, method), counts in sorted(hist.items()):
            labels = {"endpoint": endpoint, "method": method}
            running = 0
            for bound, count in zip((*BUCKETS, float("inf")), counts, strict=True):
                running += count
                le = "+Inf" if bound == float("inf") else repr(bound)
                yield f"extres_request_duration_seconds_bucket{_labels({**labels, 'le': le})} {running}"
            yield f"extres_request_duration_seconds_sum{_labels(labels)} {sums[(endpoint, method)]:.6f}"
            yield f"extres_request_duration_seconds_count{_labels(labels)} {running}"
        yield "# HELP extres_api_errors_total Failed calls to the Kubernetes API server."
        yield "# TYPE extres_api_errors_total counter"
        for (operation, kind), count in sorted(errors.items()):
            yield f"extres_api_errors_total{_labels({'operation': operation, 'error': kind})} {count}"


def gauge(name: str, help_text: str, samples: Iterable[tuple[Mapping[str, str], float]]) -> Iterable[str]:
    yield f"# HELP {name} {help_text}"
    yield f"# TYPE {name} gauge"
    for labels, value in samples:
        yield f"{name}{_labels(labels)} {value}"
