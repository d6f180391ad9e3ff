"""The metrics of several clusters in one scrape: each cluster's families (its nodes, pending pods,
cache, Kueue's queues, selectors, and what its use counts: requests to its pages, its API errors,
its usage refreshes and GPU usage) with a ``cluster`` label, this cluster's too, then the
process's own counts (child exits, dropped answers, too-costly selectors) once, unlabelled.
Without members the scrape is exactly a single cluster's (app.metrics.families.Metrics.exposition),
labels and all."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from app.metrics.families import PROCESS
from app.metrics.nodes import NodeFamilies, merged
from app.runtime.fleet import Fleet


class Labelled(Collector):
    """The families of several collectors, one family per name, each sample labelled with the
    cluster it came from."""

    def __init__(self, parts: Callable[[], list[tuple[str, Collector]]]) -> None:
        self._parts = parts

    def collect(self) -> Iterator[Metric]:
        families: dict[str, Metric] = {}
        for cluster, collector in self._parts():
            for metric in collector.collect():
                into = families.get(metric.name)
                if into is None:
                    into = families[metric.name] = Metric(
                        metric.name, metric.documentation, metric.type, metric.unit
                    )
                for s in metric.samples:
                    into.add_sample(
                        s.name, {"cluster": cluster, **s.labels}, s.value, s.timestamp, s.exemplar
                    )
        yield from families.values()


class FleetMetrics:
    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet
        self._nodes: dict[str, NodeFamilies] = {}  # each cluster's per-node text, kept per row
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(Labelled(self._parts))
        self.registry.register(PROCESS)

    def _parts(self) -> list[tuple[str, Collector]]:
        """Each cluster's families and its instruments, named by the cluster."""
        return [
            (r.name, part)
            for r in self.fleet.runtimes()
            for part in (r.metrics.collector, r.metrics.instruments)
        ]

    def exposition(self) -> bytes:
        local = self.fleet.local.metrics
        if not self.fleet.members:
            return local.exposition()
        nodes = []
        for runtime in self.fleet.runtimes():
            cluster = runtime.connected
            if cluster is not None and cluster.freshness().synced:  # never from part of the pods
                kept = self._nodes.setdefault(runtime.name, NodeFamilies(runtime.name))
                nodes.append(kept.families(cluster.store))
        return merged(nodes) + generate_latest(self.registry)
