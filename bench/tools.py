"""The tools people use instead of extres, run on a cluster with wall time and peak RSS.

  * kubectl-view-allocations (crates.io, pinned ``KVA_VERSION``, built once with
    ``cargo install --locked`` into ~/.cache/extres/kva-<version>);
  * ``kubectl describe nodes`` and ``kubectl get pods -A -o json`` (the kubectl of the same
    Kubernetes version as the API server);
  * extres's cold sync as a process of its own (bench/sync_probe.py).

Each runs under a memory guard: once its resident memory (the process and its children) would
leave the machine less than 2 GiB available, it is stopped and reported as such, so that a tool
that holds the whole cluster cannot push the control plane out of memory.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import platform
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from extres_demo import testenv

ROOT = Path(__file__).resolve().parent.parent
KVA_VERSION = "3.1.0"
CACHE = Path(os.environ.get("EXTRES_CACHE_DIR", Path.home() / ".cache" / "extres"))


def header(script: str) -> None:
    """The first two lines of a control-plane bench's output: the machine and the command."""
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cpus, {mem:.0f} GiB, "
        f"Python {platform.python_version()}, Kubernetes v{testenv.version()} (etcd, kube-apiserver, "
        "kube-scheduler, kube-controller-manager, kwok) on loopback, on the same cores"
    )
    print(f"command: python bench/{script} {' '.join(sys.argv[1:])}   # commit {commit}", flush=True)


def kva() -> Path:
    """kubectl-view-allocations, built once per version outside the repository."""
    root = CACHE / f"kva-{KVA_VERSION}"
    binary = root / "bin" / "kubectl-view-allocations"
    if not binary.exists():
        print(f"building kubectl-view-allocations {KVA_VERSION} (cargo install, a few minutes)", flush=True)
        subprocess.run(
            [
                "cargo",
                "install",
                "kubectl-view-allocations",
                "--version",
                KVA_VERSION,
                "--locked",
                "--root",
                root,
            ],
            check=True,
        )
    return binary


def shipped_serve() -> list[str]:
    """``extres serve`` from the checkout, run by a venv that holds exactly what the image installs
    (requirements.lock; made once per lock, outside the repository): test-only packages weigh
    nothing in a measurement (the Kubernetes client imports kubernetes-validate, and with it
    jsonschema, whenever it is installed: ~3 MiB and ~0.05 s here). Run with ``PYTHONPATH`` at the
    checkout (``shipped_env``)."""
    lock = ROOT / "requirements.lock"
    digest = hashlib.sha256(lock.read_bytes()).hexdigest()[:12]
    where = CACHE / f"shipped-venv-{digest}"
    python = where / "bin" / "python"
    if not (where / "done").exists():
        print(f"making {where} from requirements.lock (once per lock)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(where)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--require-hashes", "-r", str(lock)], check=True
        )
        (where / "done").touch()
    return [str(python), "-c", "import sys; from app.cli import main; sys.exit(main())", "serve"]


def shipped_env(**extra: str) -> dict[str, str]:
    """The environment ``shipped_serve`` runs in: this one, the checkout on the path."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME")}
    return {**env, "PYTHONPATH": str(ROOT), **extra}


@dataclass
class Run:
    wall: float
    peak_mib: float
    stdout: str
    stopped: bool  # past the memory guard


def _tree_rss(pid: int) -> int:
    """Resident bytes of a process and its children (one level is enough here)."""
    total = 0
    for p in (pid, *children(pid)):
        try:
            status = Path(f"/proc/{p}/status").read_text()
        except OSError:
            continue
        total += next((int(x.split()[1]) * 1024 for x in status.splitlines() if x.startswith("VmRSS:")), 0)
    return total


def children(pid: int) -> list[int]:
    """The processes ``pid`` started (from its main thread)."""
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


HEADROOM = 2 * 2**30


def available() -> int:
    """MemAvailable from /proc/meminfo, in bytes."""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no MemAvailable in /proc/meminfo")


def measured(cmd: list[str], env: dict[str, str] | None = None) -> Run:
    """Wall time, peak RSS (GNU time's maximum resident set) and stdout of one command."""
    limit = available() - HEADROOM
    report = Path(os.environ.get("TMPDIR", "/tmp")) / f"extres-time-{os.getpid()}-{threading.get_ident()}"
    errors = report.with_suffix(".err")
    out = io.StringIO()
    t = time.perf_counter()
    with errors.open("w") as stderr:  # the child holds its own copy
        proc = subprocess.Popen(
            ["/usr/bin/time", "-f", "%M", "-o", str(report), *cmd],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env={**os.environ, **(env or {})},
        )
    assert proc.stdout is not None
    reader = threading.Thread(target=lambda: out.write(proc.stdout.read()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    stopped = False
    while proc.poll() is None:
        if _tree_rss(proc.pid) > limit:
            stopped = True
            for child in children(proc.pid):
                os.kill(child, 9)
        time.sleep(0.2)
    reader.join()
    wall = time.perf_counter() - t
    lines = report.read_text().strip().splitlines() if report.exists() else []
    report.unlink(missing_ok=True)
    peak_kb = float(lines[-1]) if lines and lines[-1].isdigit() else limit / 1024
    said = [line for line in errors.read_text(errors="replace").splitlines() if line.strip()][:4]
    errors.unlink(missing_ok=True)
    if proc.returncode and not stopped:
        raise RuntimeError(f"{cmd[0]} failed ({proc.returncode}): {' | '.join(said)[:600]}")
    return Run(wall, peak_kb / 1024, out.getvalue(), stopped)


TICKS = os.sysconf("SC_CLK_TCK")


def group_usage(pgid: int) -> tuple[float, int, int]:
    """(CPU seconds, RSS bytes, the largest peak RSS) of the processes in a process group (gunicorn's
    master and worker), from /proc."""
    cpu, rss, peak = 0.0, 0, 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            if int(stat[2]) != pgid:  # field 5: the process group
                continue
            cpu += (int(stat[11]) + int(stat[12])) / TICKS  # utime, stime
            status = dict(
                line.split(":", 1)
                for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                if ":" in line
            )
            rss += int(status["VmRSS"].split()[0]) * 1024
            peak = max(peak, int(status["VmHWM"].split()[0]) * 1024)
        except (OSError, KeyError, IndexError, ValueError):
            continue
    return cpu, rss, peak


def kva_requested(text: str, resources: tuple[str, ...]) -> dict[tuple[str, str], int]:
    """(node, resource) -> requested, from kubectl-view-allocations' CSV (grouped by resource, node)."""
    out = {}
    for row in csv.DictReader(io.StringIO(text)):
        if row.get("Kind") == "node" and row.get("resource") in resources and row.get("node"):
            out[(row["node"], row["resource"])] = int(float(row.get("Requested") or 0))
    return out


def describe_requested(text: str, resources: tuple[str, ...]) -> dict[tuple[str, str], int]:
    """(node, resource) -> requested, from the "Allocated resources" table of kubectl describe."""
    out, node = {}, ""
    for line in text.splitlines():
        if line.startswith("Name:"):
            node = line.split()[1]
        for r in resources:
            m = re.match(rf"\s+{re.escape(r)}\s+(\d+)\s+\d+", line)
            if m and node:
                out[(node, r)] = int(m.group(1))
    return out


def listed_requested(text: str, resources: tuple[str, ...]) -> dict[tuple[str, str], int]:
    """(node, resource) -> requested, summed from ``kubectl get pods -o json``: bound pods not
    terminated, their containers' requests against the largest init container's (the bench's pods
    have no sidecars, no pod-level resources and no overhead)."""
    out: dict[tuple[str, str], int] = {}
    for pod in json.loads(text)["items"]:
        node, phase = pod["spec"].get("nodeName"), pod.get("status", {}).get("phase")
        if not node or phase in ("Succeeded", "Failed"):
            continue
        for r in resources:
            asked = [
                [int(c.get("resources", {}).get("requests", {}).get(r, 0)) for c in pod["spec"].get(kind, [])]
                for kind in ("containers", "initContainers")
            ]
            amount = max(sum(asked[0]), max(asked[1], default=0))
            if amount:
                out[(node, r)] = out.get((node, r), 0) + amount
    return out


def extres_sync(kubeconfig: Path) -> tuple[Run, float]:
    """extres's cold sync as a process of its own (best of two), and its listing seconds."""
    cmd = [sys.executable, str(ROOT / "bench" / "sync_probe.py"), str(kubeconfig), "sync"]
    best = min((measured(cmd) for _ in range(2)), key=lambda r: r.wall)
    return best, json.loads(best.stdout.strip().splitlines()[-1])["seconds"]
