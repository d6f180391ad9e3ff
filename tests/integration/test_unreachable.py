"""With the API server out of reach, pages still render, marked stale."""

from __future__ import annotations

from pathlib import Path

from app import create_app
from app.web.process import of as process_of
from extres_demo import testenv
from tests.helpers import started


def _kubeconfig_to(tmp_path: Path, port: int) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(
        f"""apiVersion: v1
kind: Config
clusters: [{{name: x, cluster: {{server: "https://127.0.0.1:{port}", insecure-skip-tls-verify: true}}}}]
users: [{{name: x, user: {{token: t}}}}]
contexts: [{{name: x, context: {{cluster: x, user: x}}}}]
current-context: x
"""
    )
    return path


def test_unreachable_api_server_gives_a_banner_not_an_error(tmp_path):
    app = started(
        create_app({"kubeconfig": str(_kubeconfig_to(tmp_path, testenv.free_port())), "in_cluster": "false"})
    )
    try:
        resp = app.test_client().get("/")
        html = resp.get_data(as_text=True)
        assert resp.status_code == 200
        assert 'class="banner stale"' in html
        assert "Not connected" in html
        assert "Traceback" not in html
        assert app.test_client().get("/readyz").status_code == 503
        assert app.test_client().get("/healthz").status_code == 200
    finally:
        process_of(app).local.stop()


def test_no_cluster_configured_is_explained(tmp_path):
    app = create_app({"kubeconfig": str(tmp_path / "missing"), "in_cluster": "false"})
    resp = app.test_client().get("/")
    assert resp.status_code == 503
    assert "No cluster configured" in resp.get_data(as_text=True)
    assert "extres demo" in resp.get_data(as_text=True)
