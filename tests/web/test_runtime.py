"""The runtime (app/runtime/cluster.py): built from Settings, one ``start`` and one ``stop`` in its listed
order, the selector evaluator given to the store, and nothing it started left running."""

from __future__ import annotations

from app.base import workers
from app.domain.devices import ClassFacts
from app.kube.wire.dra import ClassView
from app.runtime.cluster import Runtime
from app.settings.config import Settings
from tests.web.fake import FakeCluster
from tests.web.test_dra_views import GPU, R, devices
from tests.web.test_gpu_usage_views import PROMETHEUS, StandInSource


class Told(FakeCluster):
    """A cluster that says when it is started and closed (in ``said``)."""

    def __init__(self, said: list[str]) -> None:
        super().__init__()
        self.said = said

    def start(self, first_sync_wait: float = 3.0) -> None:  # once, as the real one
        if "cluster started" not in self.said:
            self.said.append("cluster started")

    def close(self) -> None:
        self.said.append("cluster closed")


def runtime(said: list[str], evaluator: str = "sandboxed") -> Runtime:
    source = StandInSource()
    asked = source.query

    def query(expr: str):  # the usage poller's first refresh
        if "usage asked" not in said:
            said.append("usage asked")
        return asked(expr)

    source.query = query  # type: ignore[method-assign]
    settings = Settings.from_env(in_cluster="false", selector_evaluator=evaluator, **PROMETHEUS)
    return Runtime(settings, Told(said), usage_source=source)


def test_start_starts_in_the_listed_order_once_and_stop_undoes_it_in_reverse():
    said: list[str] = []
    run = runtime(said)
    assert said == []  # built, nothing started: a server's master may build it before the fork
    closed = run.answers.close
    run.answers.close = lambda: (said.append("evaluator closed"), closed())[1]  # type: ignore[method-assign]
    run.start()
    assert workers.until(lambda: "usage asked" in said, 10)
    run.start()  # once, however often asked
    assert said == ["cluster started", "usage asked"]
    assert [step.name for step in run.steps()] == ["selector evaluator", "cluster", "usage poller"]
    run.stop()
    assert said[2:] == ["cluster closed", "evaluator closed"]
    assert run.usage is not None and run.usage._stop.is_set()  # the poller's loop ends at its next wake


def test_the_store_is_given_the_runtimes_evaluator_and_its_child_ends_with_the_runtime():
    cluster = FakeCluster()
    settings = Settings.from_env(in_cluster="false", selector_evaluator="sandboxed")
    run = Runtime(settings, cluster)
    assert cluster.store.devices.answers is run.answers and run.answers.kind == "sandboxed"
    cluster.node("n1", {})
    cluster.store.devices.put(
        "deviceclasses", ClassView(ClassFacts("gpus", "t", R, (f'device.driver == "{GPU}"',)))
    )
    cluster.store.devices.put("resourceslices", devices("n1", 2))  # evaluated in the runtime's child
    [child] = run.answers.close.__self__._live  # type: ignore[attr-defined]
    assert child.poll() is None
    run.stop()
    assert child.poll() is not None  # ended with the runtime, not left to the process's end
