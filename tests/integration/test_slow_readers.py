"""Slow readers on a real link: 900 connections from 20 addresses, each sending three pipelined
requests for htmx (50 KiB) and never reading, against ``extres serve`` across a veth pair with a
1,500-byte MTU (loopback's 64 KiB MTU hides the shape: the kernel's buffers swallow whole
answers). The server listens on the host side; the clients run in a network namespace the test
makes (``ip netns``, root: CI runs as root; a developer without root runs it under ``sudo``, or it
is skipped). It holds when ``/healthz`` from another address answers at least 19 of 20 times while
the flood lasts and the worker stays under the chart's small preset (384 MiB)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from extres_demo import testenv
from tests.helpers import UNREACHABLE, repo_root, wait_until_serving

pytestmark = pytest.mark.waits
HOST, PREFIX = "10.213.7.1", "10.213.7."  # the test's own veth pair, in its own namespace
CLIENTS = [f"{PREFIX}{i}" for i in range(10, 30)]  # 20 addresses, 45 connections each
PROBE = f"{PREFIX}2"


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


@pytest.fixture
def link() -> Iterator[str]:
    """A network namespace joined to this one by a veth pair with a 1,500-byte MTU: the server's
    address on this side, the clients' on the other."""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("needs root and iproute2 to make a network namespace (run with sudo)")
    tag = uuid.uuid4().hex[:6]
    ns, host, peer = f"extres-{tag}", f"exh{tag}", f"exc{tag}"
    ip("netns", "add", ns)
    try:
        ip("link", "add", host, "mtu", "1500", "type", "veth", "peer", "name", peer, "mtu", "1500")
        ip("link", "set", peer, "netns", ns)
        ip("addr", "add", f"{HOST}/24", "dev", host)
        ip("link", "set", host, "up")
        for address in [PROBE, *CLIENTS]:
            ip("-n", ns, "addr", "add", f"{address}/24", "dev", peer)
        ip("-n", ns, "link", "set", peer, "up")
        ip("-n", ns, "link", "set", "lo", "up")
        yield ns
    finally:
        subprocess.run(["ip", "link", "del", host], capture_output=True)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


FLOOD = textwrap.dedent(
    """
    import socket, sys, time
    port, seconds, clients = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3].split(",")
    page = b"GET /static/htmx.min.js HTTP/1.1\\r\\nHost: %s:%d\\r\\n\\r\\n" % (sys.argv[4].encode(), port)
    socks = []
    for i in range(900):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a reader that barely reads
        s.bind((clients[i % len(clients)], 0))
        s.settimeout(5)
        try:
            s.connect((sys.argv[4], port))
            s.sendall(page * 3)
        except OSError:
            continue
        socks.append(s)
    print(len(socks), flush=True)
    time.sleep(seconds)
    """
)

PROBES = textwrap.dedent(
    """
    import socket, sys, time
    port, source, host = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    ok = 0
    for _ in range(20):
        start = time.monotonic()
        try:
            with socket.create_connection((host, port), timeout=5, source_address=(source, 0)) as s:
                head = b"GET /healthz HTTP/1.1\\r\\nHost: %s\\r\\nConnection: close\\r\\n\\r\\n"
                s.sendall(head % host.encode())
                ok += s.recv(12).startswith(b"HTTP/1.1 200")
        except OSError:
            pass
        time.sleep(max(0.0, 1.5 - (time.monotonic() - start)))
    print(ok, flush=True)
    """
)


def worker_rss_mib(master: int) -> float:
    rss = 0
    for pid in Path(f"/proc/{master}/task/{master}/children").read_text().split():
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss += int(line.split()[1])
    return rss / 1024


def test_a_flood_of_slow_readers_on_a_real_link_holds_no_thread_and_no_memory(link, tmp_path):
    (tmp_path / "kubeconfig").write_text(UNREACHABLE)
    port = testenv.free_port()
    env = {**os.environ, "EXTRES_KUBECONFIG": str(tmp_path / "kubeconfig"), "EXTRES_IN_CLUSTER": "false",
           "EXTRES_HOST": HOST, "EXTRES_PORT": str(port), "EXTRES_METRICS_PORT": "0",
           "EXTRES_LOG_LEVEL": "WARNING", "EXTRES_TEMPLATE_CACHE": "off"}  # fmt: skip
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "extres"), "serve"], cwd=repo_root(), env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        wait_until_serving(server, f"http://{HOST}:{port}/healthz", timeout=30)
        inside = ["ip", "netns", "exec", link, sys.executable, "-c"]
        flood = subprocess.Popen(
            [*inside, FLOOD, str(port), "35", ",".join(CLIENTS), HOST], stdout=subprocess.PIPE, text=True
        )
        try:
            opened = int(flood.stdout.readline() or 0)  # type: ignore[union-attr]
            probes = subprocess.run(
                [*inside, PROBES, str(port), PROBE, HOST], capture_output=True, text=True, timeout=120
            )
            answered = int(probes.stdout.strip() or 0)
            rss = worker_rss_mib(server.pid)
        finally:
            flood.kill()
            flood.wait(timeout=10)
            flood.stdout.close()  # type: ignore[union-attr]
        print(f"\n{opened} slow readers: /healthz answered {answered} of 20, worker {rss:.0f} MiB")
        assert opened >= 800
        assert answered >= 19
        assert rss < 384
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=30)
