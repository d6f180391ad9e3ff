"""The Dockerfile: linted with hadolint, and the command it runs starts the app.

No image can be built here (no registry is reachable), so the test runs the
image's CMD from the same tree the image copies (app/, templates/, static/).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

from extres_demo import testenv
from tests.helpers import eventually, repo_root

DOCKERFILE = repo_root() / "Dockerfile"


def stages() -> list[str]:
    return re.split(r"(?m)^FROM ", DOCKERFILE.read_text())[1:]


def test_hadolint_passes():
    hadolint = shutil.which("hadolint") or str(Path(sys.executable).with_name("hadolint"))
    result = subprocess.run([hadolint, str(DOCKERFILE)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_final_stage_is_slim_and_non_root():
    final = stages()[-1]
    assert final.startswith("python:3.11-slim")
    assert re.search(r"(?m)^USER 10001", final)
    assert "apt-get" not in final and "gcc" not in final and "pip install" not in final


def test_the_image_reads_the_templates_its_build_compiled():
    build, final = stages()
    cache = re.search(r"EXTRES_TEMPLATE_CACHE=(\S+)", final).group(1)
    assert cache.startswith("/opt/extres/")  # copied with the venv
    assert f'fill_template_cache("{cache}")' in build and f"chmod -R a+rX,go-w {cache}" in build


def test_the_image_command_starts_the_app(control_plane, tmp_path):
    cmd = json.loads(re.search(r"(?m)^CMD (\[.*\])$", stages()[-1]).group(1))
    assert cmd[0] == "gunicorn"
    port = testenv.free_port()
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "EXTRES_HOST": "127.0.0.1",
        "EXTRES_PORT": str(port),
        "EXTRES_KUBECONFIG": str(control_plane.kubeconfig),
        "EXTRES_IN_CLUSTER": "false",
    }
    proc = subprocess.Popen(cmd, cwd=repo_root(), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:

        def get(path):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
                    return resp.status
            except urllib.error.HTTPError as exc:
                with exc:  # an error response holds its connection until closed
                    return exc.code
            except OSError as exc:
                assert proc.poll() is None, proc.stdout.read().decode()
                raise AssertionError(f"not up yet: {exc}") from exc

        assert eventually(lambda: get("/healthz") == 200, timeout=30)
        assert eventually(lambda: get("/readyz") == 200, timeout=30)
        assert get("/") == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    text = out.decode()
    assert "Booting worker" in text and "BufferingWorker" in text  # one threaded worker: one shared cache
    assert text.count("Booting worker") == 1
