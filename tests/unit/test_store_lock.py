"""The Store's one lock discipline: every public method of its parts and of the Store itself takes
the lock (the methods called with it held say so and are named here), so a reader never sees a
write half made. A new reader that forgets the lock fails here."""

import inspect
import threading

import pytest

from app.domain.selector_answers import Answers
from app.kube.state.pod_index import PodIndex
from app.kube.state.store import Store
from app.kube.wire.dra import ClaimView
from app.kube.wire.projections import NodeView, PodView, QuotaView
from tests import builders

D = "example.com/dongle"

# called with the lock already held, as their docstrings say
HELD = {"names", "set_node", "drop_node", "set_nodes", "usage", "gpu_shares"}
# arguments by parameter name
ARGS = {
    "name": "a",
    "answers": Answers(),
    "node": "a",
    "namespace": "d",
    "resource": D,
    "dra_class": "gpu",
    "read": lambda dra: None,
    "kind": "resourceclaims",
    "view": ClaimView("d", "c", (), (), True),
    "views": [],
    "key": ("d", "c"),
    "obj": builders.node("b", {D: "1"}),
    "since": None,
    "shape": None,
    "labels": {},
    "terms": (),
    "listed": [],
    "index": PodIndex(),
    "covered": lambda resource: True,
}
# where the name alone does not say
BY_METHOD = {
    "apply_pod": {"obj": builders.pod("q", "a", {D: "1"})},
    "put_node": {"view": NodeView.from_json(builders.node("b", {D: "1"}))},
    "put_pod": {"view": PodView.from_json(builders.pod("q", "a", {D: "1"}))},
    "put_quota": {"view": QuotaView("d", "q", {D: (2, 1)})},
}


class Counting:
    """An RLock that counts how often it was taken."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self.taken = 0

    def __enter__(self) -> None:
        self._lock.acquire()
        self.taken += 1

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


def _methods(part: object) -> list[str]:
    return [
        n
        for n, m in inspect.getmembers(type(part), inspect.isfunction)
        if not n.startswith("_") and n not in HELD
    ]


def _store() -> tuple[Store, Counting]:
    store = Store()
    store.apply_node(builders.node("a", {D: "4"}))
    store.apply_pod(builders.pod("p", "a", {D: "1"}, namespace="d"))
    lock = Counting()
    store._lock = store.objects.lock = store.devices._lock = lock  # type: ignore[assignment]
    return store, lock


PARTS = {"store": lambda s: s, "objects": lambda s: s.objects, "devices": lambda s: s.devices}


@pytest.mark.parametrize(
    "part,method", [(p, m) for p, of in PARTS.items() for m in _methods(of(Store()))], ids=str
)
def test_every_public_method_of_the_store_and_its_parts_takes_the_lock(part, method):
    store, lock = _store()
    bound = getattr(PARTS[part](store), method)
    given = {**ARGS, **BY_METHOD.get(method, {})}
    bound(*[given[p] for p in inspect.signature(bound).parameters if p in given])
    assert lock.taken > 0, f"{part}.{method} ran without the lock"
