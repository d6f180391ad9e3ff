"""First answer: a fresh ``extres serve`` beside kubectl-view-allocations, on the same cluster, in
one run; and the cold sync against its floors.

    python bench/first_answer.py                      # 5,000 pods on 100 nodes; 10,000 and 50,000 on 5,000
    python bench/first_answer.py --steps 10000 --rounds 2

Each step starts the full control plane (etcd, kube-apiserver, kube-scheduler,
kube-controller-manager; kwok as every node's kubelet) on bench/envelope.py's cached etcd
snapshot of real-sized pods, waits for every node to be Ready, and measures, alternating the
runs so that drift hits each alike (best of ``--rounds`` for every figure):
  * floors, each a fresh process (bench/sync_probe.py): the cache's own requests with each body
    read and skipped, in pages (``wire``) and streamed (``stream-wire``: a watch with
    sendInitialEvents, read up to the bookmark that ends the objects); the pages decoded by the
    cache's own decoder, nothing kept (``decode``); and the cache's own sync of nodes then pods,
    streamed and in pages (``sync``);
  * first answer: ``extres serve`` started fresh, wall time until /readyz answers 200 and the
    overview (GET /) has been served; before that, the first overview that shows the nodes
    (``partial``: pods may still be counting; asked four times a second; /readyz ten times a
    second), and the peak memory of its processes (gunicorn's master and worker): the sum of
    each one's peak RSS (pages they share counted twice) and the peak of their summed PSS
    sampled every 20 ms (each page once), with lists streamed and in pages; the app
    byte-compiled first, as the image has it; beside it kubectl-view-allocations (``-o csv``),
    its wall time and peak RSS (GNU time);
  * kube-apiserver's RSS after each, and the growth of its peak (VmHWM) over the step;
  * once, before the steps: the PSS of an ``extres serve`` holding no object (its cluster
    unreachable), the floor of the memory ratio at each step;
  * agreement: every (node, resource) requested amount kubectl-view-allocations reports for the
    bench's resources against the served app's /export.csv.
  * the targets, each checked at full precision for the default (lists in pages): exec to
    /healthz <= 0.4 s; the first complete answer (ready) <= 1.15x the wire floor + 0.5 s; the
    wall <= 1.0x kubectl-view-allocations' (below 0.5x from 50,000 pods); PSS <= 0.1x its peak.
Ratios are the claim; seconds and MiB are this machine's.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import itertools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kubernetes import client  # noqa: E402

from app.kube.api.client import ClusterConfig, api_client, load_configuration  # noqa: E402
from bench import snapshot, tools  # noqa: E402
from bench.cache_bench import RESOURCES, probe  # noqa: E402
from bench.envelope import settle  # noqa: E402
from extres_demo import testenv  # noqa: E402
from tests.helpers import UNREACHABLE  # noqa: E402

MIB = 2**20
READY_EVERY = 0.1  # seconds between two asks of /readyz


@dataclass
class Answer:
    up: float  # seconds until the process answered /healthz
    partial: float  # seconds until the overview first showed the nodes (pods maybe still counting)
    ready: float  # seconds until /readyz said ready
    wall: float  # seconds until the overview was served
    peak_mib: float  # the sum of the peaks (VmHWM) of the server's processes: shared pages twice
    pss_mib: float  # the peak of the processes' summed PSS, sampled every 20 ms: each page once
    requested: dict[tuple[str, str], int]  # from /export.csv


def _get(url: str, timeout: float = 5.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return 0, b""


def first_answer(
    plane: testenv.ControlPlane, stream: bool, poll: float = 0.25, page_size: int | None = None
) -> Answer:
    """A fresh ``extres serve``: seconds to /healthz, to ready, to the overview served; its peak.
    ``poll``: seconds between two asks of the overview while it waits (a reader reloading);
    ``page_size``: objects a list page asks for (the app's default when None)."""
    t = time.perf_counter()
    proc, base = _serve(
        plane.kubeconfig,
        {
            "EXTRES_STREAM_LISTS": "true" if stream else "false",
            **({"EXTRES_LIST_PAGE_SIZE": str(page_size)} if page_size else {}),
        },
    )
    up = partial = ready = 0.0
    sampler = _PssPeak(proc.pid)
    try:
        while True:  # /healthz, then the overview until it shows the nodes, then /readyz
            if proc.poll() is not None:
                raise RuntimeError(f"extres serve ended ({proc.returncode})")
            asked = "/readyz" if partial else "/" if up else "/healthz"
            status, page = _get(base + asked, timeout=10)
            now = time.perf_counter() - t
            if status == 200 and not up:
                up = now
            elif status == 200 and not partial:
                partial = now if b"n00000" in page else 0.0
            elif status == 200:
                ready = now
                break
            if now > 900:
                raise RuntimeError("extres serve was not ready in 900 s")
            # the overview is asked for four times a second (a page is work the sync waits on:
            # a reader reloading, not a loop), /healthz a hundred (nothing runs beside it yet),
            # /readyz ten (a kubelet asks every 2 s; a hundred asks a second, each a request
            # beside the count, held the 50,000-pod answer back by 1.5-3 s; at most 0.1 s is
            # counted against extres by asking less often)
            time.sleep(poll if asked == "/" else READY_EVERY if asked == "/readyz" else 0.01)
        status, page = _get(base + "/", timeout=60)
        wall = time.perf_counter() - t
        if status != 200 or b"n00000" not in page:
            raise RuntimeError(f"the overview answered {status} without the nodes")
        peak = _peaks(proc.pid)
        pss = sampler.stop()
        status, body = _get(base + "/export.csv", timeout=60)
        if status != 200:
            raise RuntimeError(f"/export.csv answered {status}")
    finally:
        sampler.stop()
        _stop(proc)
    requested = {
        (row["node"], row["resource"]): int(row["requested"] or 0)
        for row in csv.DictReader(io.StringIO(body.decode()))
        if row["resource"] in RESOURCES
    }
    return Answer(up, partial, ready, wall, peak / MIB, pss / MIB, requested)


def _serve(
    kubeconfig: Path, extra: dict[str, str] | None = None, stderr: IO[Any] | int = subprocess.DEVNULL
) -> tuple[subprocess.Popen[bytes], str]:
    """A fresh ``extres serve`` for ``kubeconfig`` with what the image installs
    (``tools.shipped_serve``), in its own process group, ``extra`` in its environment; its base
    URL."""
    port = testenv.free_port()
    env = tools.shipped_env(
        EXTRES_KUBECONFIG=str(kubeconfig),
        EXTRES_IN_CLUSTER="false",
        EXTRES_PORT=str(port),
        EXTRES_METRICS_PORT="0",
        EXTRES_HISTORY_STORE="off",
        EXTRES_COOKIE_SECURE="false",
        **(extra or {}),
    )
    proc = subprocess.Popen(
        tools.shipped_serve(),
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        start_new_session=True,
    )
    return proc, f"http://127.0.0.1:{port}"


def _until_healthy(proc: subprocess.Popen[bytes], base: str, within: float = 30.0) -> None:
    """Until ``/healthz`` answers 200, asked every 5 ms; raises if the server ends or ``within``
    seconds pass."""
    deadline = time.monotonic() + within
    while _get(base + "/healthz", timeout=1)[0] != 200:
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("extres serve did not answer /healthz")
        time.sleep(0.005)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """The server and every process of its group, at once."""
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def floor_pss(seconds: float = 5.0) -> float:
    """MiB: the PSS peak of an ``extres serve`` that holds no object, its cluster unreachable: it has
    loaded all it loads for a cluster (the Kubernetes client, the templates) and keeps trying."""
    with unreachable() as kubeconfig:
        proc, base = _serve(kubeconfig)
        sampler = _PssPeak(proc.pid)
        try:
            _until_healthy(proc, base)
            time.sleep(seconds)
            return sampler.stop() / MIB
        finally:
            sampler.stop()
            _stop(proc)


@contextlib.contextmanager
def unreachable() -> Iterator[Path]:
    """A kubeconfig whose cluster cannot be reached, for as long as the block runs."""
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        kubeconfig.write_text(UNREACHABLE)
        yield kubeconfig


def _group(pgid: int) -> list[str]:
    """The processes of a process group."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[2]) == pgid:
                pids.append(pid)
        except (OSError, IndexError, ValueError):
            continue
    return pids


class _PssPeak:
    """The peak of a process group's summed proportional set size (a page shared by the master
    and its worker counts once, split between them), sampled every 20 ms until ``stop``. The
    group's processes are looked up every half second, not at each sample: a walk of /proc costs
    ~1 ms of the two cores the measured processes share with the control plane."""

    SAMPLE_S = 0.02
    LOOKUP_EVERY = 25  # samples between two walks of /proc once master and worker are there

    def __init__(self, pgid: int) -> None:
        self.pgid, self.peak = pgid, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        pids: list[str] = []
        for n in itertools.count():
            if self._stop.wait(self.SAMPLE_S):
                return
            if n % self.LOOKUP_EVERY == 0 or len(pids) < 2:  # until the worker is forked: each time
                pids = _group(self.pgid)
            total = 0
            for pid in pids:
                try:
                    rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
                except OSError:
                    continue
                total += next(
                    (int(x.split()[1]) * 1024 for x in rollup.splitlines() if x.startswith("Pss:")), 0
                )
            self.peak = max(self.peak, total)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def _peaks(pgid: int) -> int:
    """The sum of each process's peak RSS (VmHWM) in a process group: at least the group's peak."""
    total = 0
    for pid in _group(pgid):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        total += next((int(x.split()[1]) * 1024 for x in status.splitlines() if x.startswith("VmHWM:")), 0)
    return total


def apiserver_memory(plane: testenv.ControlPlane) -> tuple[float, float]:
    """kube-apiserver's (RSS, peak RSS) in MiB."""
    pid = (plane.state_dir / "apiserver.pid").read_text().strip()
    status = Path(f"/proc/{pid}/status").read_text()
    field = {line.split(":")[0]: int(line.split()[1]) * 1024 for line in status.splitlines() if "kB" in line}
    return field["VmRSS"] / MIB, field["VmHWM"] / MIB


def step(
    nodes: int,
    pods: int,
    rounds: int,
    polls: tuple[float, ...] = (),
    sizes: tuple[int, ...] = (),
    floor: float = 0.0,
) -> dict[str, Any]:
    plane, restored = snapshot.restore(nodes, pods)
    label = f"{pods // 1000}k/{nodes}"
    try:
        api = api_client(load_configuration(ClusterConfig("false", str(plane.kubeconfig))))
        settled = settle(client.CoreV1Api(api), nodes, pods)
        api.close()
        base_rss, base_peak = apiserver_memory(plane)
        print(
            f"\n[{label}] {nodes} nodes, {pods} real-sized pods; control plane up in {restored:.0f}s, "
            f"settled in {settled:.0f}s; kube-apiserver RSS {base_rss:.0f} MiB",
            flush=True,
        )
        figures: dict[str, list[Any]] = {}

        def keep(name: str, value: Any) -> None:
            figures.setdefault(name, []).append(value)

        env = {"KUBECONFIG": str(plane.kubeconfig)}
        for _ in range(rounds):
            for mode, extra in (("wire", ()), ("stream-wire", ()), ("decode", ())):
                keep(mode, probe(plane.kubeconfig, mode, *extra))
            keep("sync stream", probe(plane.kubeconfig, "sync"))
            keep("sync pages", probe(plane.kubeconfig, "sync", "--pages"))
            keep("kva", kva(env))
            keep("kva apiserver", apiserver_memory(plane)[0])
            keep("extres stream", first_answer(plane, stream=True))
            keep("stream apiserver", apiserver_memory(plane)[0])
            keep("extres pages", first_answer(plane, stream=False))
            keep("pages apiserver", apiserver_memory(plane)[0])
            for poll in polls:  # the same, the overview asked less often while it waits
                keep(f"extres pages, poll {poll:g}s", first_answer(plane, stream=False, poll=poll))
                keep(f"pages, poll {poll:g}s apiserver", apiserver_memory(plane)[0])
            for size in sizes:  # the same, pages of another size
                keep(f"extres pages of {size}", first_answer(plane, stream=False, page_size=size))
                keep(f"pages of {size} apiserver", apiserver_memory(plane)[0])
        return report(label, figures, base_rss, apiserver_memory(plane)[1] - base_peak, floor, pods)
    finally:
        plane.stop()
        shutil.rmtree(plane.state_dir, ignore_errors=True)


def kva(env: dict[str, str]) -> tools.Run:
    """kubectl-view-allocations once; again once if it fails (its requests can time out while 5,000
    kwok nodes keep the API server busy), the failure printed."""
    try:
        return tools.measured([str(tools.kva()), "-o", "csv"], env)
    except RuntimeError as exc:
        print(f"  ({exc}; run again)", flush=True)
        return tools.measured([str(tools.kva()), "-o", "csv"], env)


NAMES = {"stream": "streamed", "pages": "in pages"}


def report(
    label: str, f: dict[str, list[Any]], base_rss: float, peak_growth: float, floor: float, pods: int
) -> dict[str, Any]:
    def best(name: str) -> float:
        return min(r["seconds"] for r in f[name])

    wire, streamed, decode = best("wire"), best("stream-wire"), best("decode")
    sync_stream, sync_pages = best("sync stream"), best("sync pages")
    listed = f["sync stream"][0]["pods"]
    print(
        f"[{label}] {listed} live pods. floors (nodes then pods; best of {len(f['wire'])}): bodies read and "
        f"skipped, in pages {wire:.2f}s, streamed {streamed:.2f}s ({streamed / wire:.2f}x); "
        f"pages decoded by the cache's decoder, nothing kept {decode:.2f}s"
    )
    print(
        f"[{label}] cold sync (nodes then pods, a fresh process): streamed {sync_stream:.2f}s = "
        f"{sync_stream / streamed:.2f}x its wire floor; in pages {sync_pages:.2f}s = "
        f"{sync_pages / wire:.2f}x its wire floor, {sync_pages / decode:.2f}x the decode floor; "
        f"streamed / pages {sync_stream / sync_pages:.2f}x"
    )
    kva = min(f["kva"], key=lambda r: r.wall)
    kva_peak = max(r.peak_mib for r in f["kva"])
    heads = (
        ("wall s", 7),
        ("ready s", 8),
        ("partial s", 10),
        ("up s", 6),
        ("peak MiB", 9),
        ("PSS MiB", 8),
        ("/ kva wall", 11),
        ("/ kva RSS", 10),
        ("PSS / RSS", 10),
    )
    cols = " ".join(f"{h:>{w}}" for h, w in heads)
    print(f"[{label}] {'first answer':36} {cols} {'apiserver MiB':>14}")
    print(
        f"[{label}] {'kubectl-view-allocations ' + tools.KVA_VERSION:36} {kva.wall:7.2f} "
        f"{'':>8} {'':>10} {'':>6} "
        f"{kva_peak:9.0f} {'':>8} {1:11.2f} {1:10.2f} {'':>10} {max(f['kva apiserver']):14.0f}"
        + ("  (stopped: memory)" if kva.stopped else "")
    )
    rows = {}
    polled = [k.removeprefix("extres ") for k in f if k.startswith(("extres pages, poll", "extres pages of"))]
    for mode in ("stream", "pages", *polled):
        answers = f[f"extres {mode}"]
        a = min(answers, key=lambda r: r.wall)
        peak = max(r.peak_mib for r in answers)
        pss = max(r.pss_mib for r in answers)
        rows[mode] = a
        print(
            f"[{label}] {'extres serve, lists ' + NAMES.get(mode, mode):36} "
            f"{a.wall:7.2f} {a.ready:8.2f} {a.partial:10.2f} {a.up:6.2f} {peak:9.0f} {pss:8.0f} "
            f"{a.wall / kva.wall:11.2f} "
            f"{peak / kva_peak:10.3f} {pss / kva_peak:10.3f} {max(f[mode + ' apiserver']):14.0f}"
        )
    pages = f["extres pages"]
    for line in targets(pods, wire, rows["pages"], kva.wall, max(r.pss_mib for r in pages) / kva_peak):
        print(f"[{label}] target (in pages, the default): {line}")
    print(
        f"[{label}] kube-apiserver: RSS {base_rss:.0f} MiB settled; its peak grew {peak_growth:.0f} MiB "
        "over the step"
    )
    if floor:
        print(
            f"[{label}] extres serve holding no object (its cluster unreachable): PSS {floor:.0f} MiB = "
            f"{floor / kva_peak:.3f}x kubectl-view-allocations' peak here"
        )
    said = {} if kva.stopped else tools.kva_requested(kva.stdout, RESOURCES)
    disagreements = 0
    for mode, a in rows.items():
        wrong = [(k, v, a.requested.get(k, 0)) for k, v in said.items() if a.requested.get(k, 0) != v]
        disagreements += len(wrong)
        for (node, r), theirs, mine in wrong[:5]:
            print(f"[{label}] DISAGREE ({mode}) {node} {r}: extres {mine}, kubectl-view-allocations {theirs}")
    print(
        f"[{label}] agreement with kubectl-view-allocations on {len(said)} (node, resource) amounts "
        f"({sum(said.values())} requested), both list modes: {disagreements} disagreements"
    )
    return {"disagreements": disagreements}


def targets(pods: int, wire: float, a: Answer, kva_wall: float, pss_ratio: float) -> list[str]:
    """Each target of the first answer, checked at full precision (the table rounds)."""
    bound = 1.15 * wire + 0.5
    ratio = a.wall / kva_wall
    # ahead of it at every size; at or past 50,000 pods below half its wall
    wall = ("< 0.5x", ratio < 0.5) if pods >= 50_000 else ("<= 1.0x", ratio <= 1.0)
    checks = (
        (f"exec to /healthz {a.up:.3f} s <= 0.4 s", a.up <= 0.4),
        (
            f"first complete answer {a.ready:.3f} s <= 1.15 x {wire:.3f} s + 0.5 s = {bound:.3f} s",
            a.ready <= bound,
        ),
        (f"wall {ratio:.3f}x kubectl-view-allocations' {wall[0]}", wall[1]),
        (f"PSS {pss_ratio:.3f}x kubectl-view-allocations' peak <= 0.1x", pss_ratio <= 0.1),
    )
    return [f"{text}: {'met' if ok else 'NOT MET'}" for text, ok in checks]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", type=int, default=5000)
    p.add_argument("--steps", default="100:5000,10000,50000", help="pods per step, or nodes:pods")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument(
        "--polls",
        default="",
        help="more runs in pages, the overview asked every N s while waiting (default 0.25)",
    )
    p.add_argument("--page-sizes", default="", help="more runs in pages of N objects (default 500)")
    a = p.parse_args()
    tools.header("first_answer.py")
    # the app's modules byte-compiled, as the image's pip install leaves them
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(ROOT / "app")], check=True, stdout=subprocess.DEVNULL
    )
    floor = floor_pss()
    print(f"[floor] extres serve holding no object (cluster unreachable): PSS {floor:.0f} MiB", flush=True)
    failures = 0
    for s in a.steps.split(","):  # pods, or nodes:pods
        nodes, _, pods = s.rpartition(":")
        polls = tuple(float(x) for x in a.polls.split(",") if x)
        sizes = tuple(int(x) for x in a.page_sizes.split(",") if x)
        failures += step(int(nodes or a.nodes), int(pods), a.rounds, polls, sizes, floor)["disagreements"]
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
