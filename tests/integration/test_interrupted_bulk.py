"""The app killed in the middle of a bulk change of 200 nodes: each node's change is one JSON
Patch (capacity and desired state together), so afterwards every node is either changed or
untouched, never half-written; the drift view agrees; running the same change again finishes
the rest and writes nothing twice."""

from __future__ import annotations

import http.cookiejar
import re
import threading
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from app.domain import changes
from tests.helpers import eventually
from tests.kube_helpers import create_node
from tests.serving import Server

pytestmark = pytest.mark.kube
D = "example.com/dongle"
NODES = 200


def session(base: str):
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def go(path: str, data: list[tuple[str, str]] | None = None, timeout: float = 120) -> tuple[int, str]:
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        try:
            with opener.open(base + path, data=body, timeout=timeout) as resp:
                go.url = resp.geturl()  # where redirects ended
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as exc:
            with exc:  # an error response holds its connection until closed
                return exc.code, exc.read().decode()

    return go


def bulk_form(go, uid: str, expected: dict[str, str]) -> list[tuple[str, str]]:
    _, page = go(f"/changes/bulk?selector=group%3D{uid}")
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    form = [
        ("csrf_token", token),
        ("action", "set"),
        ("resource", D),
        ("quantity", "7"),
        ("selector", f"group={uid}"),
    ]
    return form + [(f"expected-{n}", v) for n, v in expected.items()]


def state(core, uid: str) -> dict[str, tuple[str | None, int | None]]:
    """Each node's (capacity, desired) of the dongle."""
    out = {}
    for n in core.list_node(label_selector=f"group={uid}").items:
        desired = changes.parse_desired((n.metadata.annotations or {}).get(changes.DESIRED_ANNOTATION))
        out[n.metadata.name] = (n.status.capacity.get(D), desired.get(D))
    return out


def events(core, uid: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for e in core.list_namespaced_event("default").items:
        if e.reason == "ExtendedResourceChanged" and e.involved_object.name.startswith(f"{uid}-"):
            counts[e.involved_object.name] = counts.get(e.involved_object.name, 0) + 1
    return counts


def test_a_bulk_change_killed_midway_leaves_no_node_half_written(control_plane, core, uid):
    names = [f"{uid}-{i:03d}" for i in range(NODES)]
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda n: create_node(core, n, {D: "4"}, labels={"group": uid}), names))
    server = Server(control_plane)
    try:
        go = session(server.url)
        eventually(lambda: f"{NODES} of " in go(f"/?q={uid}-")[1], timeout=60)  # the cache has them all
        form = bulk_form(go, uid, {n: "4" for n in names})
        threading.Thread(target=lambda: go("/changes/bulk/apply", form), daemon=True).start()

        def midway() -> int:
            done = sum(1 for cap, _ in state(core, uid).values() if cap == "7")
            assert done >= 20
            return done

        eventually(midway, timeout=60, interval=0.05)
    finally:
        server.kill()
    after = state(core, uid)
    changed = [n for n, s in after.items() if s == ("7", 7)]
    untouched = [n for n, s in after.items() if s == ("4", None)]
    assert sorted(changed + untouched) == sorted(names), {
        n: s for n, s in after.items() if n not in changed + untouched
    }
    assert changed and untouched, "the kill must come in the middle of the change"

    server = Server(control_plane)
    try:
        go = session(server.url)
        eventually(lambda: f"{uid}-000" in go(f"/?q={uid}")[1], timeout=60)
        _, drift = go("/changes/reapply")
        assert uid not in drift  # no node of the change differs from its desired state
        # the change again, from what the page now shows: the rest are changed, the done ones left alone
        form = bulk_form(go, uid, {n: after[n][0] for n in names})
        status, page = go("/changes/bulk/apply", form)  # the job's page: it runs in the background
        assert status == 200, page[:300]
        job = urllib.parse.urlsplit(go.url).path
        eventually(lambda: 'data-done="true"' in go(job)[1], timeout=120)
        results = "".join(go(f"{job}?page={p}")[1] for p in (1, 2))  # 100 outcomes a page
        assert results.count("already 7; nothing changed") == len(changed)
        assert set(state(core, uid).values()) == {("7", 7)}
        # one Event per change made; none twice. The kill may fall between a node's patch and its
        # Event: at most that one node of the first run has none (the audit log has the rest)
        counted = eventually(
            lambda: events(core, uid) if all(events(core, uid).get(n) for n in untouched) else None
        )
        assert set(counted.values()) == {1}
        assert len([n for n in changed if n not in counted]) <= 1
    finally:
        server.stop()
