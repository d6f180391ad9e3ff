"""What the pending page and the planner keep between views is bounded, whatever is asked."""

from __future__ import annotations

import gc
import tracemalloc

import pytest

from app.domain.diagnosis import DIAGNOSES_KEPT, ShapeCache
from app.web.process import of as process_of

D = "example.com/dongle"
NODES = 300
BYTES_PER_RESULT = 700  # a node's result in a shape's index, measured: ~520 B


@pytest.mark.thorough
def test_distinct_planner_queries_keep_a_bounded_state(make_app, cluster):
    """Every link makes a new shape: the cache drops the least recently used ones past its budget
    of per-node results, and each keeps only its last few replica counts, so 400 distinct queries
    over 300 nodes leave at most the budget behind."""
    for i in range(NODES):
        cluster.node(f"n{i:03d}", {D: str(i % 5)}, labels={"zone": "abc"[i % 3]})
    app = make_app(plans_per_minute=1000)  # one user's 400 plans: past the default limit
    services = process_of(app).local
    services.shapes = ShapeCache(limit=256, budget=20 * NODES)  # room for 20 shapes here
    web = app.test_client()
    assert web.get("/plan/", query_string={"requests": f"{D}=1"}).status_code == 200  # warm
    gc.collect()
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        for i in range(400):
            query = {"requests": f"{D}={1 + i % 7}", "selector": f"q{i}=x", "replicas": str(1 + i % 50)}
            assert web.get("/plan/", query_string=query).status_code == 200
        gc.collect()
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    kept = services.shapes.indexes()
    assert len(kept) == 21 and sum(map(len, kept)) == 21 * NODES  # the budget, and the one in use
    assert all(len(index._made) <= DIAGNOSES_KEPT for index in kept)
    assert after - before < 21 * NODES * BYTES_PER_RESULT, f"{(after - before) / 2**20:.1f} MiB kept"


def test_the_pending_page_and_the_planner_share_one_index_per_shape(make_app, cluster):
    cluster.node("n1", {D: "1"})
    message = f"0/1 nodes are available: 1 Insufficient {D}."
    cluster.pod("waiting", None, {D: "2"}, message=message)
    app = make_app()
    web = app.test_client()
    assert web.get("/pending/").status_code == 200
    [pending] = process_of(app).local.shapes.indexes()
    assert web.get("/plan/", query_string={"requests": f"{D}=2"}).status_code == 200
    assert process_of(app).local.shapes.indexes() == [pending]  # the same shape, the same index


def test_the_shape_lock_is_held_only_while_an_index_is_brought_up_to_date(make_app, cluster, monkeypatch):
    """The pending page and What-if use a shape's index the one way (ShapeCache.read); the advice
    is rendered after the lock is let go, so one slow page never holds the others."""
    from app.web import render_cache

    cluster.node("n1", {D: "1"})
    cluster.pod(
        "waiting", None, {D: "3"}, message="0/1 nodes are available: 1 Insufficient example.com/dongle."
    )
    app = make_app()
    services = process_of(app).local
    seen: list[bool] = []
    real = render_cache.AdviceHTML.__call__

    def rendering(self, *args, **kwargs):
        seen.append(services.shapes.lock.locked())
        return real(self, *args, **kwargs)

    monkeypatch.setattr(render_cache.AdviceHTML, "__call__", rendering)
    web = app.test_client()
    assert web.get("/pending/").status_code == 200
    assert seen == [False]
    assert web.get("/plan/", query_string={"requests": f"{D}=2"}).status_code == 200
    assert not services.shapes.lock.locked()
