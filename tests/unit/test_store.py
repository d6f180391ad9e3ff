"""The cache's kept state: what a reader at an older fit version is told to catch up on."""

from app.kube.state import fit_facts
from app.kube.state.store import Store
from tests import builders

D = "example.com/dongle"


def node(name, rv="1", dongles="4"):
    return builders.node(name, {D: dongles}, rv=rv)


def pod(name, node_name, dongles="1"):
    return builders.pod(name, node_name, {D: dongles})


def test_fit_changes_name_just_the_nodes_changed_since_a_version():
    state = Store()
    for name in ("a", "b", "c"):
        state.apply_node(node(name))
    start, _ = state.fit_changes(None)
    assert state.fit_changes(start) == (start, {})
    state.apply_pod(pod("p", "b"))
    state.apply_node(node("c"), deleted=True)
    version, changed = state.fit_changes(start)
    assert version > start and set(changed) == {"b", "c"}
    assert changed["c"] is None  # gone
    assert changed["b"].free(D) == 3 and changed["b"] is state.node_facts()[1]
    assert state.fit_changes(version) == (version, {})


def test_a_relist_or_a_trimmed_log_sends_readers_to_every_node(monkeypatch):
    state = Store()
    state.apply_node(node("a"))
    before, _ = state.fit_changes(None)
    state.replace_nodes([])
    assert state.fit_changes(before)[1] is None
    monkeypatch.setattr(fit_facts, "FIT_LOG_KEPT", 4)
    state.apply_node(node("a"))
    version, _ = state.fit_changes(None)
    for i in range(2, 8):
        state.apply_node(node("a", str(i), str(i)))
    assert state.fit_changes(version)[1] is None  # the log no longer reaches back
    recent, _ = state.fit_changes(None)
    state.apply_node(node("a", "9", "9"))
    assert set(state.fit_changes(recent)[1]) == {"a"}


def test_a_heartbeat_changes_nothing_shown_so_no_row_is_rebuilt_and_no_fit_rerun():
    """Kubelets renew leases and update node status (conditions, images) every few seconds: at
    5,000 nodes that is most of the watch's traffic, and it must cost close to nothing."""
    state = Store()
    state.apply_node(node("a"))
    state.apply_pod(pod("p", "a"))
    [row] = state.overview_rows()[0]
    rows, fits = state.rows_version, state.fit_version
    beat = node("a", rv="2")
    beat["status"]["conditions"] = [
        {"type": "Ready", "status": "True", "lastHeartbeatTime": "2026-12-03T10:00:00Z"}
    ]
    beat["status"]["images"] = [{"names": ["registry.example/x:1"], "sizeBytes": 1}]
    state.apply_node(beat)
    assert (state.rows_version, state.fit_version) == (rows, fits)  # no row dirtied, no fit re-run
    assert state.overview_rows()[0][0] is row  # the kept row itself, not a rebuilt one
    assert state.objects.node("a").resource_version == "2"  # the node itself is current
    changed = node("a", rv="3", dongles="5")
    state.apply_node(changed)
    assert state.rows_version == rows + 1 and state.fit_version == fits + 1
