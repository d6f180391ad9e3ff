"""The HTTP intake, measured: each shape of tests/intake_shapes.py against each candidate server
of the same app (its cluster unreachable: no control plane is needed), with the slowest
``/healthz`` answer while the shape holds, whether a page answered, and the worker's resident
memory; then ten hostile member clusters (tests/hostile_member.py: gzip bombs, 410s) with the
Fleet page asked meanwhile, the worker's most memory; then whether what must be answered is (a
chunked body with an extension and a trailer, then two requests pipelined after it;
``Expect: 100-continue``).

Candidates (all gunicorn, one worker, the app's own options; gunicorn's ``-k`` picks the class):
  * gthread: gunicorn's threaded worker as it comes, the baseline;
  * extres: the served default (app/serving/http_worker.py), started as the image starts it
    (``gunicorn -c app/serving/gunicorn_conf.py``) and as ``extres serve``;
  * asgi+a2wsgi: gunicorn's own asyncio worker, the app behind a2wsgi's WSGI bridge (only when
    ``a2wsgi`` is installed: ``pip install a2wsgi``; not a dependency of the project);
  * gevent: gunicorn's gevent worker (only when ``gevent`` is installed; likewise);
  * before: the extres worker of ``--before REV`` (a git worktree of that commit).

  python bench/intake.py [--before REV] [--hold 3]

Seconds and MiB are this machine's; the claim is each candidate beside the baseline in one run.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from extres_demo import testenv  # noqa: E402
from tests import hostile_member, intake_shapes  # noqa: E402
from tests.helpers import UNREACHABLE, wait_until_serving  # noqa: E402

GUNICORN = [str(Path(sys.executable).parent / "gunicorn"), "-c", "app/serving/gunicorn_conf.py"]


@dataclass(frozen=True)
class Candidate:
    name: str
    command: list[str]
    cwd: Path = ROOT
    needs: str = ""  # a module that must be importable


def candidates(before: Path | None) -> list[Candidate]:
    app = "app:create_app()"
    found = [
        Candidate("gthread (baseline)", [*GUNICORN, "-k", "gthread", app]),
        Candidate("extres, as the image", [*GUNICORN, app]),
        Candidate("extres serve", [str(Path(sys.executable).parent / "extres"), "serve"]),
        Candidate(
            "asgi+a2wsgi",
            [GUNICORN[0], "-c", "python:bench.intake_asgi", "bench.intake_asgi:app"],
            needs="a2wsgi",
        ),
        Candidate("gevent", [*GUNICORN, "-k", "gevent", app], needs="gevent"),
    ]
    if before is not None:
        found.append(Candidate(f"extres before ({before.name})", [*GUNICORN, app], cwd=before))
    return found


@contextlib.contextmanager
def served(
    candidate: Candidate, kubeconfig: Path, more: dict[str, str] | None = None
) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    port = testenv.free_port()
    env = {
        **(more or {}),
        **os.environ,
        "PYTHONPATH": str(candidate.cwd),
        "EXTRES_KUBECONFIG": str(kubeconfig),
        "EXTRES_IN_CLUSTER": "false",
        "EXTRES_HOST": "127.0.0.1",
        "EXTRES_PORT": str(port),
        "EXTRES_METRICS_PORT": "0",
        "EXTRES_LOG_LEVEL": "ERROR",
        "EXTRES_TEMPLATE_CACHE": "off",
    }
    proc = subprocess.Popen(
        candidate.command,
        cwd=candidate.cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_until_serving(proc, f"http://127.0.0.1:{port}/healthz", timeout=60)
        yield port, proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


def worker_rss(master: int) -> float:
    """MiB resident in the master's children (the one worker)."""
    total = 0
    with contextlib.suppress(OSError):
        for pid in Path(f"/proc/{master}/task/{master}/children").read_text().split():
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    return total / 1024


def statuses(data: bytes) -> list[bytes]:
    return re.findall(rb"HTTP/1\.1 (\d{3}) ", data)


def answers_right(port: int) -> str:
    """What must be answered, answered: 'ok' or what went wrong."""
    chunked = (
        b"POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"3;name=value\r\nabc\r\n0\r\nX-Trailer: 1\r\n\r\n"
    )
    get = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    got = statuses(intake_shapes.exchange(port, chunked + get + get, lambda g: len(statuses(g)) >= 3, 5))
    if len(got) < 3:
        return f"chunked+trailer, then 2 pipelined: {len(got)} of 3 answered"
    head = b"POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n"
    got = statuses(intake_shapes.exchange(port, head, lambda g: b"100" in statuses(g), 3))
    if b"100" not in got:
        return "Expect: 100-continue never answered"
    return "ok"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", help="also measure the extres worker of this git revision")
    parser.add_argument("--hold", type=float, default=3.0, help="seconds each shape is held")
    parser.add_argument("--only", help="comma-separated: measure only candidates whose name contains one")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 16384)), hard))
    git = ["git", "-C", str(ROOT)]
    commit = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout
    commit = commit.strip()
    print(f"command: python bench/intake.py {' '.join(sys.argv[1:])}   # commit {commit}")
    print(f"machine: {os.cpu_count()} cpus; each shape held {args.hold} s, /healthz every 0.2 s (3 s limit)")
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        kubeconfig.write_text(UNREACHABLE)
        before = None
        if args.before:
            before = Path(tmp) / args.before
            subprocess.run([*git, "worktree", "add", "--detach", str(before), args.before], check=True)
        try:
            for candidate in candidates(before):
                if args.only and not any(part in candidate.name for part in args.only.split(",")):
                    continue
                measure(candidate, kubeconfig, args.hold)
        finally:
            if before is not None:
                subprocess.run([*git, "worktree", "remove", "--force", str(before)], check=False)


def measure(candidate: Candidate, kubeconfig: Path, hold: float) -> None:
    print(f"\n## {candidate.name}")
    if candidate.needs and importlib.util.find_spec(candidate.needs) is None:
        print(f"skipped: {candidate.needs} is not installed")
        return
    held = 0
    with served(candidate, kubeconfig) as (port, proc):
        quiet = intake_shapes.worst_probe(f"http://127.0.0.1:{port}/healthz", hold, timeout=3.0)
        page = intake_shapes.probe(f"http://127.0.0.1:{port}/", timeout=3.0)
        print(f"{'(no attack)':48} /healthz worst {quiet:6.3f} s  page {page:6.3f} s")
    for shape in intake_shapes.SHAPES:
        with served(candidate, kubeconfig) as (port, proc):  # a fresh server per shape
            start_rss = worker_rss(proc.pid)
            with intake_shapes.Attack(shape, port) as attack:
                time.sleep(0.3)
                worst = intake_shapes.worst_probe(f"http://127.0.0.1:{port}/healthz", hold, timeout=3.0)
                page = intake_shapes.probe(f"http://127.0.0.1:{port}/", timeout=3.0)
                rss = worker_rss(proc.pid)
            held += worst > 1.0
            print(
                f"{shape.name:48} /healthz worst {worst:6.3f} s  page {page:6.3f} s  "
                f"worker {start_rss:4.0f} -> {rss:4.0f} MiB  refused at connect {attack.refused}",
                flush=True,
            )
    with tempfile.TemporaryDirectory() as tmp, hostile_member.hostile(Path(tmp)) as member:
        folder = Path(tmp) / "members"
        folder.mkdir()
        for i in range(10):
            (folder / f"m{i}").write_text(member.kubeconfig(f"m{i}"))
        more = {"EXTRES_CLUSTERS_DIR": str(folder), "EXTRES_CLUSTERS_LOOPBACK": "true"}
        with served(candidate, kubeconfig, more) as (port, proc):
            start_rss, most = worker_rss(proc.pid), 0.0
            end = time.monotonic() + max(hold, 20)  # members are started by the first page
            worst = 0.0
            while time.monotonic() < end:
                intake_shapes.probe(f"http://127.0.0.1:{port}/fleet/", timeout=10.0)
                worst = max(worst, intake_shapes.probe(f"http://127.0.0.1:{port}/healthz", timeout=3.0))
                most = max(most, worker_rss(proc.pid))
            print(
                f"{'10 members sending gzip bombs (0.7 MB -> 700 MiB)':48} /healthz worst {worst:6.3f} s  "
                f"worker {start_rss:4.0f} -> {most:4.0f} MiB at most  lists asked {member.lists}",
                flush=True,
            )
    with served(candidate, kubeconfig) as (port, _):
        right = answers_right(port)
    print(f"shapes holding /healthz past 1 s: {held} of {len(intake_shapes.SHAPES)}; answers right: {right}")


if __name__ == "__main__":
    main()
