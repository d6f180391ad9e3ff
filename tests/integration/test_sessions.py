"""Token mode's session: the token unreadable in the cookie, sessions that end, no token in any log."""

from __future__ import annotations

import base64
import logging
import threading
import time
import zlib

import pytest
from flask.sessions import SecureCookieSessionInterface
from kubernetes import client

from app.settings.config import Settings
from tests.helpers import browser
from tests.kube_helpers import create_node

pytestmark = [pytest.mark.kube, pytest.mark.usefixtures("chart_roles")]
D = "example.com/dongle"


def cookie_value(resp) -> str:
    header = resp.headers["Set-Cookie"]
    return header.split(";", 1)[0].split("=", 1)[1]


def raw_payload(value: str) -> bytes:
    """What anyone holding the cookie can read without the key (itsdangerous: base64, maybe zlib)."""
    compressed = value.startswith(".")
    body = value.lstrip(".").split(".")[0]
    data = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    return zlib.decompress(data) if compressed else data


def test_the_token_is_not_readable_in_the_cookie(make_app):
    app = make_app(auth_mode="token")
    web = browser(app)
    resp = web.post("/login", data={"token": "viewer-token", "next": "/"})
    assert resp.status_code == 303
    value = cookie_value(resp)
    assert b"viewer-token" not in raw_payload(value)
    decoded = SecureCookieSessionInterface().get_signing_serializer(app).loads(value)  # with the key
    assert "viewer-token" not in repr(decoded)  # encrypted even for whoever holds the signing key
    assert web.get("/").status_code == 200


def signed_in(make_app, token="viewer-token", **settings):
    """A browser signed in through the login form, its first page seen."""
    web = browser(make_app(auth_mode="token", **settings))
    assert web.post("/login", data={"token": token, "next": "/"}).status_code == 303
    assert web.get("/").status_code == 200
    return web


@pytest.mark.parametrize(
    ("settings", "wait"), [({"session_idle_minutes": 0.02}, 1.5), ({"session_max_hours": 0.0005}, 2.0)]
)
def test_sessions_end_when_idle_or_too_old(make_app, settings, wait):
    web = signed_in(make_app, **settings)  # idle: 1.2 s; absolute: 1.8 s
    time.sleep(wait)
    resp = web.get("/")
    assert resp.status_code == 302 and "/login" in resp.headers["Location"]


def test_signing_out_ends_the_session(make_app):
    web = signed_in(make_app)
    assert web.post("/logout").status_code == 303
    assert web.get("/").status_code == 302


def test_no_token_in_any_log_line(make_app, core, uid, caplog):
    node = f"{uid}-n"
    create_node(core, node, {D: "4"})
    with caplog.at_level(logging.DEBUG):
        web = signed_in(make_app, "editor-token")
        resp = web.post(
            f"/changes/nodes/{node}/resources", data={"resource": D, "quantity": "5", "expected": "4"}
        )
        assert resp.status_code == 303
        web.post("/login", data={"token": "garbage-token-value", "next": "/"})
    assert caplog.records
    for record in caplog.records:
        text = record.getMessage()
        assert "editor-token" not in text and "garbage-token-value" not in text, text


def test_replicas_without_a_shared_secret_key_are_refused():
    with pytest.raises(ValueError, match="EXTRES_SECRET_KEY must be set when EXTRES_REPLICAS is 2"):
        Settings.from_env({"EXTRES_REPLICAS": "2"})
    assert Settings.from_env({"EXTRES_REPLICAS": "2", "EXTRES_SECRET_KEY": "k" * 32}).secret_key == "k" * 32


def test_token_mode_replicas_without_a_shared_session_store_are_refused():
    two = {"EXTRES_REPLICAS": "2", "EXTRES_SECRET_KEY": "k" * 32, "EXTRES_AUTH_MODE": "token"}
    with pytest.raises(ValueError, match="EXTRES_SESSION_STORE must be set"):
        Settings.from_env(two)
    with pytest.raises(ValueError, match="namespace/name"):
        Settings.from_env({**two, "EXTRES_SESSION_STORE": "just-a-name"})
    assert Settings.from_env({**two, "EXTRES_SESSION_STORE": "ns/cm"}).session_store == "ns/cm"


def test_sign_outs_written_at_once_by_two_replicas_are_all_kept(admin_api, uid):
    """Two replicas' revocation lists on one ConfigMap, each signing out 15 sessions at the same
    time: every write that lost the race (409) is merged again, none is lost or doubled."""
    from app.kube.api.revocations import Revocations

    store = f"default/{uid}-sessions"
    replicas = [Revocations(admin_api, store), Revocations(admin_api, store)]
    until = time.time() + 3600

    def sign_out(r: Revocations, side: str) -> None:
        for i in range(15):
            r.revoke(f"{side}-{i}", until)

    threads = [threading.Thread(target=sign_out, args=(r, s)) for r, s in zip(replicas, "ab", strict=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    core = client.CoreV1Api(admin_api)
    text = core.read_namespaced_config_map(f"{uid}-sessions", "default").data["revoked"]
    fresh = Revocations(admin_api, store)
    replicas.append(fresh)
    try:
        assert len(text.splitlines()) == 30, text
        assert all(fresh.revoked(f"{s}-{i}") for s in "ab" for i in range(15))
        assert not fresh.revoked("c-0")
    finally:
        for r in replicas:
            r.stop()
