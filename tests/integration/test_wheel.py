"""The wheels, installed from the lock file into fresh venvs outside the checkout: extres serves
the dashboard with its templates and static files and carries nothing of the demo; with the
``demo`` extra (the extres-demo wheel, from demo/) it also carries the control-plane script."""

from __future__ import annotations

import os
import signal
import subprocess
import urllib.request
import venv
import zipfile
from pathlib import Path

import pytest

from extres_demo import testenv
from tests.conftest import eventually, repo_root

pytestmark = pytest.mark.kube


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The extres and extres-demo wheels, built from the checkout as the Dockerfile builds: with
    the build backend from requirements-build.lock only (no build isolation, nothing fetched)."""
    work = tmp_path_factory.mktemp("wheels")
    root = repo_root()
    builder = work / "build-venv"
    venv.create(builder, with_pip=True)
    pip = [str(builder / "bin" / "python"), "-m", "pip"]
    subprocess.run(
        [*pip, "install", "-q", "--require-hashes", "-r", root / "requirements-build.lock"], check=True
    )
    for project in (root, root / "demo"):
        subprocess.run(
            [*pip, "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", work, project],
            check=True,
            cwd=work,
        )
    return work


def _venv(wheels: Path, where: Path, requirement: str) -> Path:
    """A venv holding the locked dependencies and ``requirement`` from the built wheels only."""
    venv.create(where, with_pip=True)
    pip = [str(where / "bin" / "python"), "-m", "pip", "install", "-q"]
    lock = repo_root() / "requirements.lock"
    subprocess.run([*pip, "--require-hashes", "-r", lock], check=True, cwd=wheels)
    subprocess.run([*pip, "--no-index", "--find-links", wheels, requirement], check=True, cwd=wheels)
    return where


@pytest.fixture(scope="module")
def installed(wheels: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _venv(wheels, tmp_path_factory.mktemp("app") / "venv", "extres")


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
    found = "import app, importlib.util as u; print(app.__file__, u.find_spec('extres_demo') is None)"
    where = run(installed, "python", "-c", found, cwd=elsewhere).split()
    assert where[0].startswith(str(installed)), "the app must come from the venv, not the checkout"
    assert where[1] == "True", "the production package carries nothing of the demo"
    no_cluster = subprocess.run(
        ["extres", "serve"], capture_output=True, text=True, cwd=elsewhere, env=_env(installed), timeout=60
    )
    assert no_cluster.returncode == 2 and "extres demo" in no_cluster.stderr  # says how; starts nothing

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
        if proc.stdout is not None:
            proc.stdout.close()


def test_the_demo_extra_brings_the_control_plane_script(wheels, tmp_path):
    with_demo = _venv(wheels, tmp_path / "venv", "extres[demo]")
    found = "import extres_demo.testenv as t; print(t.SCRIPT, t.SCRIPT.is_file())"
    script, present = run(with_demo, "python", "-c", found, cwd=tmp_path).split()
    assert script.startswith(str(with_demo)) and script.endswith("extres_demo/kube-testenv")
    assert present == "True"
    assert "demo" in run(with_demo, "extres", "demo", "--help", cwd=tmp_path)


def test_the_wheel_carries_every_template_and_static_file_and_no_demo(wheels):
    [wheel] = wheels.glob("extres-0*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    root = repo_root()
    for top in ("templates", "static"):
        for path in (root / top).rglob("*"):
            if path.is_file():
                assert f"app/{path.relative_to(root)}" in names, path
    assert not [n for n in names if "extres_demo" in n or "kube-testenv" in n]
