"""The worker serves before the Kubernetes client is loaded (~0.3 s of imports, docs/performance.md
"Start"): building the app and answering /healthz import none of it; the connection loads it
on its own thread once the worker is up. ``cryptography`` (~8 MiB) waits for the first session
that holds a token; gunicorn's master imports none of what only the worker uses (each module the
master holds is copied into the worker as soon as either writes to its pages)."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = """
import json, sys
from app import create_app
app = create_app({"kubeconfig": sys.argv[1], "in_cluster": "false", "history_store": "off"})
status = app.test_client().get("/healthz").status_code
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("kubernetes", "cryptography"))
print(json.dumps({"status": status, "loaded": loaded}))
"""
# what ``extres serve`` has imported when gunicorn's master forks: its options built
MASTER = """
import json, sys
from app import cli, serving
from app.settings.config import Settings
serving.gunicorn_options(Settings.from_env())
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules})))
"""
WORKER_ONLY = {"prometheus_client", "ctypes", "wsgiref", "flask", "jinja2", "kubernetes", "cryptography"}


def test_the_app_is_built_and_answers_healthz_without_the_kubernetes_client_or_cryptography(tmp_path):
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(kubeconfig)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen == {"status": 200, "loaded": []}


def test_gunicorns_master_imports_nothing_only_the_worker_uses():
    out = subprocess.run([sys.executable, "-c", MASTER], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-3000:]
    assert WORKER_ONLY.isdisjoint(json.loads(out.stdout.strip().splitlines()[-1]))


def test_a_session_seals_and_opens_its_token_once_cryptography_is_loaded():
    from app.web.sessions import TokenSession

    sessions = TokenSession("k" * 32, idle_seconds=60, max_seconds=3600)
    session: dict[str, object] = {}
    sessions.sign_in(session, "the-token")
    assert "the-token" not in str(session["token"])
    assert sessions.token(session) == "the-token"
