"""The worker serves before the Kubernetes client is loaded (~0.3 s of imports, docs/performance.md
"Start"): building the app and answering /healthz import none of it; the connection loads it
on its own thread once the worker is up."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = """
import json, sys
from app import create_app
app = create_app({"kubeconfig": sys.argv[1], "in_cluster": "false", "history_store": "off"})
status = app.test_client().get("/healthz").status_code
loaded = sorted(m for m in sys.modules if m.split(".")[0] == "kubernetes")
print(json.dumps({"status": status, "loaded": loaded}))
"""


def test_the_app_is_built_and_answers_healthz_without_the_kubernetes_client(tmp_path):
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(kubeconfig)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen == {"status": 200, "loaded": []}
