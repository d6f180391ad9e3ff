"""The wheel, installed from the lock file into a fresh venv outside the checkout, serves the
dashboard with its templates and static files, and carries its control-plane script."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.request
import venv
from pathlib import Path

import pytest

from app import testenv
from tests.conftest import eventually, repo_root

pytestmark = pytest.mark.kube


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv holding the locked dependencies and the wheel, and nothing of the checkout."""
    work = tmp_path_factory.mktemp("wheel")
    root = repo_root()
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", work, root],
        check=True,
        cwd=work,
    )
    [wheel] = work.glob("extres-*.whl")
    env_dir = work / "venv"
    venv.create(env_dir, with_pip=True)
    pip = [str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, "--require-hashes", "-r", root / "requirements.lock"], check=True, cwd=work)
    subprocess.run([*pip, "--no-deps", wheel], check=True, cwd=work)
    return env_dir


def run(env_dir: Path, *args: str, cwd: Path) -> str:
    out = subprocess.run(args, check=True, capture_output=True, text=True, cwd=cwd, env=_env(env_dir))
    return out.stdout


def _env(env_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EXTRES_", "PYTHON", "VIRTUAL_ENV"))}
    env.pop("KUBECONFIG", None)
    return {**env, "PATH": f"{env_dir / 'bin'}:{env['PATH']}"}


def test_the_wheel_serves_from_anywhere(installed, control_plane, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert run(installed, "extres", "--version", cwd=elsewhere).strip() == "extres 0.1.0"
    where = run(
        installed,
        "python",
        "-c",
        "import app, app.testenv as t; print(app.__file__); print(t.SCRIPT); print(t.SCRIPT.is_file())",
        cwd=elsewhere,
    ).split()
    assert where[0].startswith(str(installed)), "the app must come from the venv, not the checkout"
    assert where[1] == str(Path(where[0]).parent / "scripts" / "kube-testenv") and where[2] == "True"

    port = testenv.free_port()
    env = {**_env(installed), "EXTRES_PORT": str(port), "EXTRES_KUBECONFIG": str(control_plane.kubeconfig)}
    proc = subprocess.Popen(
        ["extres", "serve"],
        cwd=elsewhere,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:

        def get(path: str) -> tuple[int, bytes]:
            assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else "exited"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
                    return resp.status, resp.read()
            except OSError as exc:
                raise AssertionError(f"not serving yet: {exc}") from exc

        status, body = eventually(lambda: get("/"), timeout=60, interval=0.3)
        assert status == 200 and b"selector-error" in body and b"/static/htmx.min.js" in body
        status, js = get("/static/htmx.min.js")
        assert status == 200 and js == (repo_root() / "static" / "htmx.min.js").read_bytes()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
