"""Sign-out ends the session on the server: a copy of the cookie taken before stops working, a
session without an id (made before ids existed) ends, and a sign-out that cannot be recorded says
so instead of claiming success."""

from __future__ import annotations

from app.kube.api.errors import Unavailable
from app.web.process import of as process_of
from tests.helpers import browser

COOKIE = "__Host-extres_session"


def signed_in(app):
    web = browser(app)
    assert web.post("/login", data={"token": "a-token", "next": "/"}).status_code == 303
    assert web.get("/").status_code == 200
    return web


def copy_of(app, web):
    cookie = web.get_cookie(COOKIE, domain="localhost")
    assert cookie is not None
    thief = browser(app)
    thief.set_cookie(COOKIE, cookie.value, domain="localhost")
    return thief


def test_a_cookie_copied_before_sign_out_no_longer_works(make_app):
    app = make_app(auth_mode="token")
    web = signed_in(app)
    thief = copy_of(app, web)
    assert thief.get("/").status_code == 200  # the copy works while the session lives
    assert web.post("/logout").status_code == 303
    resp = thief.get("/")
    assert resp.status_code == 302 and "/login" in resp.headers["Location"]
    assert web.get("/").status_code == 302


def test_signing_out_one_session_leaves_the_others(make_app):
    app = make_app(auth_mode="token")
    first, second = signed_in(app), signed_in(app)
    assert first.post("/logout").status_code == 303
    assert second.get("/").status_code == 200


def test_a_session_without_an_id_ends(make_app):
    app = make_app(auth_mode="token")
    web = signed_in(app)
    with web.session_transaction() as sess:
        del sess["sid"]  # as a session signed before sign-outs were recorded
    assert web.get("/").status_code == 302


def test_a_sign_out_that_cannot_be_recorded_says_so(make_app, cluster, monkeypatch):
    app = make_app(auth_mode="token")
    web = signed_in(app)

    def refuse(session_id: str, until: float) -> None:
        raise Unavailable("Could not connect to the API server", 503)

    monkeypatch.setattr(cluster.revocations, "revoke", refuse)
    resp = web.post("/logout")
    html = resp.get_data(as_text=True)
    assert resp.status_code == 503
    assert "could not be recorded" in html and "stays valid until" in html
    assert web.get("/").status_code == 302  # this browser is signed out all the same


def test_while_the_sign_out_list_cannot_be_read_pages_answer_503_with_security_headers(make_app, cluster):
    """Before the shared list was ever read, no session can be verified: the designed 503 page,
    with every security header, not a bare 500 (the error page ran before anyone was known)."""
    from app.kube.api.revocations import Revocations

    app = make_app(auth_mode="token")
    web = signed_in(app)
    cluster.revocations = Revocations(None, None, unreachable=lambda: True)
    cluster.revocations._doc, cluster.revocations._loaded = object(), False  # shared, never read
    try:
        resp = web.get("/")
        assert resp.status_code == 503
        assert "cannot be verified now" in resp.get_data(as_text=True)
        assert resp.headers["Content-Security-Policy"] and resp.headers["X-Frame-Options"] == "DENY"
    finally:
        cluster.revocations.stop()


def test_sign_in_pauses_while_the_sign_out_list_is_full_and_its_age_is_a_metric(make_app, cluster):
    import time

    from app.kube.api.revocations import MAX_ENTRIES, digest

    app = make_app(auth_mode="token")
    until = int(time.time()) + 3600
    cluster.revocations._local.update({digest(str(i)): until for i in range(MAX_ENTRIES)})
    resp = browser(app).post("/login", data={"token": "a-token", "next": "/"})
    assert resp.status_code == 503 and "Sign-in is paused" in resp.get_data(as_text=True)
    text = process_of(app).local.metrics.exposition().decode()
    assert "extres_session_revocations_read_timestamp_seconds " in text
    assert "extres_session_revocations_skipped_lines 0.0" in text
