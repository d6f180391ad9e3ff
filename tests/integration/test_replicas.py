"""Two replicas behind one loopback proxy (two gunicorn processes, one shared secret key): a form
loaded from one and posted to the other works; a form token from another session is refused."""

from __future__ import annotations

import http.cookiejar
import re
import urllib.error
import urllib.parse
import urllib.request

import pytest
from kubernetes import client

from tests.helpers import eventually
from tests.kube_helpers import create_node, snapshot
from tests.serving import Server
from tests.tcpproxy import TCPProxy

pytestmark = pytest.mark.kube
D = "example.com/dongle"
KEY = "replica-test-secret-key-0123456789abcdef"


class Visitor:
    """One browser session: its own cookies; every request a new connection, so the proxy hands
    consecutive requests to alternate replicas."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )

    def go(self, path: str, data: dict | None = None) -> tuple[int, str]:
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        try:
            with self.opener.open(self.base + path, data=body, timeout=30) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as exc:
            with exc:  # an error response holds its connection until closed
                return exc.code, exc.read().decode()


def served(server: Server, endpoint: str, method: str) -> float:
    with urllib.request.urlopen(server.metrics_url, timeout=10) as resp:
        text = resp.read().decode()
    m = re.search(
        rf'extres_request_duration_seconds_count{{endpoint="{re.escape(endpoint)}",method="{method}"}} (\S+)',
        text,
    )
    return float(m.group(1)) if m else 0.0


def test_a_form_from_one_replica_posts_to_the_other(control_plane, core, uid):
    name = f"{uid}-n"
    create_node(core, name, {D: "4"})
    env = {"EXTRES_SECRET_KEY": KEY, "EXTRES_REPLICAS": "2"}
    a, b = Server(control_plane, **env), Server(control_plane, **env)
    proxy = TCPProxy(a.port, b.port)
    try:
        alice, mallory = Visitor(f"http://127.0.0.1:{proxy.port}"), Visitor(f"http://127.0.0.1:{proxy.port}")
        for replica in (a, b):
            eventually(lambda r=replica: name in Visitor(r.url).go(f"/nodes/{name}")[1], timeout=30)
        before = {s: served(s, "changes.new", "GET") for s in (a, b)}
        status, form = alice.go(f"/changes/nodes/{name}/resources/new?resource={D}")
        assert status == 200
        token = re.search(r'name="csrf_token" value="([^"]+)"', form).group(1)
        loaded_on = [s for s in (a, b) if served(s, "changes.new", "GET") > before[s]]
        assert len(loaded_on) == 1
        # another session's token, posted with mallory's own cookies: refused, nothing changes
        mallory.go("/")
        rv = snapshot(core, name)
        status, text = mallory.go(
            f"/changes/nodes/{name}/resources",
            {"csrf_token": token, "resource": D, "quantity": "5", "expected": "4"},
        )
        assert status == 400 and "did not carry a valid CSRF token" in text
        assert snapshot(core, name) == rv
        # alice's own post lands on the other replica and works (the secret key is shared); the
        # refused post above is timed and counted too, so the count starts after it
        posted_before = {s: served(s, "changes.set_resource", "POST") for s in (a, b)}
        status, text = alice.go(
            f"/changes/nodes/{name}/resources",
            {"csrf_token": token, "resource": D, "quantity": "6", "expected": "4"},
        )
        assert status == 200, text[:300]
        assert core.read_node_status(name).status.capacity[D] == "6"
        posted_on = [s for s in (a, b) if served(s, "changes.set_resource", "POST") > posted_before[s]]
        # connections so far: alice's form, mallory's two, alice's post: the post went to the other one
        assert posted_on == [b if loaded_on == [a] else a]
    finally:
        proxy.close()
        a.stop()
        b.stop()


def csrf_in(page: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)


@pytest.mark.usefixtures("chart_roles")
def test_a_sign_out_on_one_replica_ends_a_copied_cookie_on_both(control_plane, core, uid):
    store = f"default/{uid}-sessions"
    env = {"EXTRES_SECRET_KEY": KEY, "EXTRES_REPLICAS": "2", "EXTRES_AUTH_MODE": "token"}
    a, b = (
        Server(control_plane, **env, EXTRES_SESSION_STORE=store),
        Server(control_plane, **env, EXTRES_SESSION_STORE=store),
    )
    try:
        alice = Visitor(a.url)
        status, page = alice.go("/login")
        status, page = alice.go("/login", {"csrf_token": csrf_in(page), "token": "viewer-token", "next": "/"})
        assert status == 200 and "Sign out" in page
        jar = alice.opener.handlers  # the same cookie, copied into a browser that talks to b
        [cookies] = [h.cookiejar for h in jar if isinstance(h, urllib.request.HTTPCookieProcessor)]
        thief = Visitor(b.url)
        [thief_jar] = [
            h.cookiejar for h in thief.opener.handlers if isinstance(h, urllib.request.HTTPCookieProcessor)
        ]
        for cookie in cookies:
            thief_jar.set_cookie(cookie)
        assert "Sign out" in thief.go("/")[1]  # the copy works on the other replica
        status, _ = alice.go("/logout", {"csrf_token": csrf_in(alice.go("/")[1])})
        assert status == 200  # followed to the sign-in page
        data = client.CoreV1Api(core.api_client).read_namespaced_config_map(f"{uid}-sessions", "default").data
        assert len(data["revoked"].splitlines()) == 1
        assert "viewer-token" not in str(data)
        ended = eventually(lambda: "Sign out" not in thief.go("/")[1], timeout=10)
        assert ended, "the copied cookie still worked on the other replica"
        assert 'name="token"' in thief.go("/")[1]  # sent to sign in
    finally:
        a.stop()
        b.stop()
