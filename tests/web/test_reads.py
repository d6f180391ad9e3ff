"""The read model (app/runtime/reads.py): each read names store versions that exist, is kept while they
hold, made again when one moves, and kept apart per runtime (two clusters never share a value)."""

from __future__ import annotations

import inspect

import pytest

from app.domain.overview import Filters
from app.kube.state.store import Store
from app.runtime import reads
from app.runtime.cluster import Runtime
from app.settings.config import Settings
from tests.web.fake import FakeCluster

R = "example.com/dongle"
READS = [f for _, f in inspect.getmembers(reads, inspect.isfunction) if reads.versions_of(f)]


def runtime_of(cluster: FakeCluster) -> Runtime:
    return Runtime(Settings.from_env(in_cluster="false", selector_evaluator="in-process"), cluster)


@pytest.mark.parametrize("read", READS, ids=lambda f: f.__name__)
def test_every_kept_read_names_versions_the_store_has(read):
    store = Store()
    assert all(isinstance(getattr(store, v), int) for v in reads.versions_of(read))


def test_a_read_is_kept_while_its_versions_hold_and_made_again_when_one_moves():
    cluster = FakeCluster()
    cluster.node("a", {R: "4"})
    runtime = runtime_of(cluster)
    first = reads.grid(runtime, Filters(), True)
    assert reads.grid(runtime, Filters(), True) is first  # kept
    assert reads.grid(runtime, Filters(), False) is not first  # another key
    cluster.node("b", {R: "2"})  # a row moves
    again = reads.grid(runtime, Filters(), True)
    assert again is not first and [r.name for r in again.rows] == ["a", "b"]
    names = reads.known_names(runtime, True)
    cluster.pod("w", None, {"example.com/other": "1"}, message="0/2 nodes are available: 2 Insufficient x.")
    assert reads.known_names(runtime, True) is not names  # the pending version moved
    assert "example.com/other" in reads.known_names(runtime, True)


def test_two_runtimes_never_share_a_kept_value():
    one, two = FakeCluster(), FakeCluster()
    one.node("a", {R: "4"})
    two.node("z", {R: "8"})
    first, second = runtime_of(one), runtime_of(two)
    assert one.store.rows_version == two.store.rows_version  # the same versions, other stores
    assert [r.name for r in reads.grid(first, Filters(), True).rows] == ["a"]
    assert [r.name for r in reads.grid(second, Filters(), True).rows] == ["z"]
