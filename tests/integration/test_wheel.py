"""The wheels, installed from the lock file into fresh venvs outside the checkout: extres serves
the dashboard with its templates and static files and carries nothing of the demo; with the
``demo`` extra (the extres-demo wheel, from demo/) it also carries the control-plane script."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import urllib.request
import venv
import zipfile
from pathlib import Path

import pytest
import requests
from bs4 import BeautifulSoup

from extres_demo import testenv
from tests.helpers import eventually, repo_root, wait_until_serving
from tests.kube_helpers import create_node

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

    cache = tmp_path / "templates-compiled"  # as the image's build fills it
    fill = f"from app import fill_template_cache; fill_template_cache({str(cache)!r})"
    run(installed, "python", "-c", fill, cwd=elsewhere)
    filled = {p.name: p.stat().st_mtime_ns for p in cache.iterdir()}
    assert len(filled) > 40
    port = testenv.free_port()
    env = {
        **_env(installed),
        "EXTRES_PORT": str(port),
        "EXTRES_KUBECONFIG": str(control_plane.kubeconfig),
        "EXTRES_TEMPLATE_CACHE": str(cache),
    }
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
        assert {p.name: p.stat().st_mtime_ns for p in cache.iterdir()} == filled  # read, none compiled anew
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


def dockerfile_command() -> list[str]:
    """The image's command line, exactly as the Dockerfile's last CMD gives it."""
    text = (repo_root() / "Dockerfile").read_text()
    [*_, last] = [line for line in text.splitlines() if line.startswith("CMD ")]
    command: list[str] = json.loads(last[4:])
    return command


def test_the_images_command_writes_one_json_audit_line_per_change(installed, control_plane, core, uid):
    """The installed wheel started with the Dockerfile's CMD and environment (not ``extres serve``):
    a change made through its form leaves one "changed" audit line on stderr, in JSON; a page
    view leaves no access line (access logs are off unless asked for)."""
    name = f"{uid}-img"
    create_node(core, name, {"example.com/dongle": "4"})
    port = testenv.free_port()
    image_env = {"PYTHONUNBUFFERED": "1", "EXTRES_HOST": "127.0.0.1", "EXTRES_PORT": str(port)}
    test_env = {
        "EXTRES_KUBECONFIG": str(control_plane.kubeconfig),
        "EXTRES_READ_ONLY": "false",
        "EXTRES_COOKIE_SECURE": "false",  # plain http on loopback
        "EXTRES_METRICS_PORT": "0",
    }
    elsewhere = Path(tempfile.mkdtemp())  # the image's WORKDIR is /tmp: not the checkout
    proc = subprocess.Popen(
        dockerfile_command(),
        cwd=elsewhere,
        env={**_env(installed), **image_env, **test_env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        session = requests.Session()
        base = f"http://127.0.0.1:{port}"

        # the node page's form shows once every pod is counted (#53): /readyz says when
        wait_until_serving(proc, f"{base}/readyz", timeout=60, interval=0.3)
        page = session.get(f"{base}/nodes/{name}", timeout=5)
        assert page.status_code == 200, page.status_code
        html = page.text
        token = BeautifulSoup(html, "html.parser").select_one("input[name=csrf_token]")["value"]
        form = {"csrf_token": token, "resource": "example.com/dongle", "quantity": "6", "expected": "4"}
        sent = session.post(
            f"{base}/changes/nodes/{name}/resources", data=form, allow_redirects=False, timeout=10
        )
        assert sent.status_code == 303, sent.text
        assert core.read_node(name).status.capacity["example.com/dongle"] == "6"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    lines = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    assert len(lines) == len(err.splitlines()), f"every log line is JSON:\n{err}"
    changed = [line for line in lines if line["logger"] == "extres.audit" and line["outcome"] == "changed"]
    assert len(changed) == 1, lines
    [line] = changed
    assert (line["node"], line["resource"], line["old"], line["new"]) == (name, "example.com/dongle", 4, 6)
    assert line["client"] == "127.0.0.1" and line["request_id"] == sent.headers["X-Request-Id"]
    assert line["time"].endswith("Z") and line["action"] == "set"
    assert not [line for line in lines if line["logger"] == "gunicorn.access"]
