"""The request pipeline's steps (app/web/request_pipeline.py), each alone in a request context:
what it sets, what it refuses, where it stops the rest."""

from __future__ import annotations

import pytest
from flask import g
from werkzeug.exceptions import BadRequest, Forbidden

from app.web import request_pipeline, security
from app.web.process import of as process_of


def _steps(app):
    settings = app.config["EXTRES"]
    steps = request_pipeline.pipeline(settings, security.networks(("10.0.0.1",)), process_of(app).sessions())
    return dict(steps)


def test_marked_keeps_a_trusted_proxys_request_id_and_replaces_anyone_elses(make_app):
    app = make_app(trusted_proxies="10.0.0.1")
    steps = _steps(app)
    sent = {"X-Request-Id": "from-the-proxy", "X-Forwarded-For": "192.0.2.7"}
    with app.test_request_context("/", headers=sent, environ_base={"REMOTE_ADDR": "10.0.0.1"}):
        steps["marked"]()
        assert (g.request_id, g.client, g.verified) == ("from-the-proxy", "192.0.2.7", False)
    with app.test_request_context("/", headers=sent, environ_base={"REMOTE_ADDR": "192.0.2.9"}):
        steps["marked"]()
        assert g.request_id != "from-the-proxy" and g.client == "192.0.2.9"


def test_open_endpoints_and_unknown_routes_end_the_pipeline_before_anyone_is_asked(make_app, cluster):
    app = make_app(auth_mode="token")
    steps = _steps(app)
    token = {"Authorization": "Bearer a-token"}
    for path in ("/healthz", "/no-such-page"):
        with app.test_request_context(path, headers=token):
            assert app.preprocess_request() is None  # the whole pipeline, as a request runs it
            assert not g.verified
    assert cluster.access.asked == [] and cluster.access.accepted == set()  # no TokenReview
    with app.test_request_context("/", headers=token):
        app.preprocess_request()
        assert g.verified and cluster.access.accepted == {"a-token"}
    with app.test_request_context("/"):
        steps["marked"]()
        assert steps["open_or_unrouted"]() is None  # a page: the checks go on


def test_a_write_without_the_csrf_token_or_from_another_site_is_refused_by_its_step(make_app):
    app = make_app()
    steps = _steps(app)
    with app.test_request_context("/changes/nodes/n1/resources", method="POST", data={"quantity": "1"}):
        steps["marked"]()
        with pytest.raises(BadRequest, match="CSRF"):
            steps["csrf"]()
    for token in ("é", "١٢", "²", "a" * 10_000):  # any Unicode: refused, never a 500
        with app.test_client() as client:
            client.get("/")  # a session with its nonce
            answer = client.post("/changes/nodes/n1/resources", data={"quantity": "1", "csrf_token": token})
            assert answer.status_code == 400 and b"CSRF" in answer.data
    origin = {"Origin": "https://elsewhere.example", "Host": "dashboard.example"}
    with app.test_request_context("/changes/nodes/n1/resources", method="POST", headers=origin):
        steps["marked"]()
        with pytest.raises(Forbidden, match="another site"):
            steps["same_origin"]()
    with app.test_request_context("/", method="GET", headers=origin):
        assert steps["same_origin"]() is None and steps["csrf"]() is None  # reads pass both


def test_a_host_the_dashboard_is_not_served_under_is_refused_before_anything_else(make_app, cluster):
    """DNS rebinding: a page on another site, its name pointed at this dashboard's loopback
    address, reaches it naming that site as its Host (and as its Origin, so a same-origin check
    passes): refused, reads and writes alike, with nothing read or written; the probes answer."""
    cluster.node("n1", {"example.com/dongle": "2"})
    app = make_app(read_only=False)
    web = app.test_client()
    rebound = {"Host": "rebind.attacker.example:8080", "Origin": "http://rebind.attacker.example:8080"}
    for url in ("/", "/nodes/n1", "/export.json", "/static/htmx.min.js"):
        answer = web.get(url, headers=rebound)
        assert answer.status_code == 403 and b"not served under that host name" in answer.data, url
    write = web.post("/changes/nodes/n1/resources", headers=rebound, data={"resource": "example.com/rebound"})
    assert write.status_code == 403 and cluster.apiserver is None  # no write reached the API server
    assert web.get("/healthz", headers=rebound).status_code == 200  # the kubelet names the pod's address
    for host in ("localhost", "127.0.0.1:8080", "[::1]:8080"):
        assert web.get("/", headers={"Host": host}).status_code == 200, host
    served = make_app(allowed_hosts=("gpu.example.org", ".teams.example.org")).test_client()
    assert served.get("/", headers={"Host": "gpu.example.org"}).status_code == 200
    assert served.get("/", headers={"Host": "a.teams.example.org"}).status_code == 200
    assert served.get("/", headers={"Host": "localhost"}).status_code == 403  # set: those alone


def test_an_allowed_host_that_is_not_one_stops_the_start_naming_the_setting():
    from app.settings.config import Settings

    with pytest.raises(ValueError, match="EXTRES_ALLOWED_HOSTS: 'a/b' is not a host name"):
        Settings.from_env({"EXTRES_ALLOWED_HOSTS": "localhost,a/b"})
