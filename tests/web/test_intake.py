"""The HTTP intake against clients that try to hold the server with few bytes
(tests/intake_shapes.py): ``extres serve`` as run directly (the image runs the same gunicorn
options, tests/integration/test_dockerfile.py), its cluster unreachable, no control plane.
Per shape: ``/healthz`` answers within 1 s throughout, and a page answers too. Then what such
a server must still answer right: trickled requests that finish, chunked bodies with extensions
and trailers, pipelining, ``Expect: 100-continue``, limits per address and in bytes."""

from __future__ import annotations

import contextlib
import os
import re
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from extres_demo import testenv
from tests import intake_shapes
from tests.helpers import UNREACHABLE, repo_root, wait_until_serving

OVER = b"c" * 70_000  # past the default body limit, 64 KiB
HOLD = 1.0  # seconds each shape is held while /healthz is asked every 0.2 s


class Served:
    def __init__(self, tmp: Path, **env: str) -> None:
        (tmp / "kubeconfig").write_text(UNREACHABLE)
        self.port = testenv.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "extres"), "serve"],
            cwd=repo_root(),
            env={
                **os.environ,
                "EXTRES_KUBECONFIG": str(tmp / "kubeconfig"),
                "EXTRES_IN_CLUSTER": "false",
                "EXTRES_HOST": "127.0.0.1",
                "EXTRES_PORT": str(self.port),
                "EXTRES_METRICS_PORT": "0",
                "EXTRES_LOG_LEVEL": "WARNING",
                "EXTRES_TEMPLATE_CACHE": "off",
                **env,
            },
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        wait_until_serving(self.proc, self.url + "/healthz", timeout=30)

    def worker_rss_mib(self) -> float:
        children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()
        rss = 0
        for pid in children:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    rss += int(line.split()[1])
        return rss / 1024

    def stop(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 8192)), hard))  # 1,000 clients
    server = Served(tmp_path_factory.mktemp("intake"))
    yield server
    server.stop()


# the fast lane holds the server with three of them (a trickle, huge heads, idle crowds); the
# whole suite with every one (each holds it for about a second and a half)
FAST_SHAPES = {"trickled head", "heads of 1 MiB, 1,000 connections", "idle, 1,000 connections"}


@pytest.mark.parametrize(
    "shape",
    [
        pytest.param(s, id=s.name, marks=() if s.name in FAST_SHAPES else pytest.mark.thorough)
        for s in intake_shapes.SHAPES
    ],
)
def test_no_shape_of_request_holds_the_server(served: Served, shape: intake_shapes.Shape) -> None:
    with intake_shapes.Attack(shape, served.port):
        time.sleep(0.3)  # every connection open and sending
        worst = intake_shapes.worst_probe(served.url + "/healthz", HOLD)
        page = intake_shapes.probe(served.url + "/")
        rss = served.worker_rss_mib()
    print(f"\n{shape.name}: /healthz at worst {worst:.3f} s, a page {page:.3f} s, worker {rss:.0f} MiB")
    assert worst <= 1.0
    assert page < 5.0
    assert rss < 250  # the intake's 32 MiB budget, the app and 1,000 connections' bookkeeping


def _statuses(data: bytes) -> list[bytes]:
    """The status codes of the answers in ``data`` (the bodies here never spell a status line)."""
    return re.findall(rb"HTTP/1\.1 (\d{3}) ", data)


def _answers(n: int):
    return lambda got: len([s for s in _statuses(got) if s != b"100"]) >= n


def test_a_request_trickled_to_its_end_is_answered(served: Served) -> None:
    with intake_shapes.connect(served.port, 0) as s:
        for byte in b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n":
            s.sendall(bytes([byte]))
            time.sleep(0.01)
        assert s.recv(100).startswith(b"HTTP/1.1 200")


def test_chunked_bodies_with_extensions_and_trailers_then_pipelined_requests_are_answered(served):
    chunked = (
        b"POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"3;name=value\r\nabc\r\n0\r\nX-Trailer: 1\r\n\r\n"
    )
    get = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    got = intake_shapes.exchange(served.port, chunked + get + get, _answers(3))
    assert _statuses(got) == [b"405", b"200", b"200"]


def test_expect_100_continue_is_answered_once_then_the_request(served: Served) -> None:
    head = b"POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n"
    with intake_shapes.connect(served.port, 0) as s:
        s.sendall(head)
        assert s.recv(100) == b"HTTP/1.1 100 Continue\r\n\r\n"
        s.sendall(b"abc")
        got = b""
        while b"\r\n\r\n" not in got:
            got += s.recv(4096)
    assert got.startswith(b"HTTP/1.1 405")  # not a second "100 Continue"


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: 1234567890123\r\n\r\n", b"413"),
        (b"POST /login HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n20000\r\n" + OVER, b"413"),
        (b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 9000 + b"\r\n\r\n", b"431"),
        (b"NOT HTTP AT ALL\r\n\r\n", b"400"),
    ],
    ids=["length over the body limit", "a chunk over the body limit", "a header line too long", "not HTTP"],
)
def test_a_request_that_can_never_be_served_is_answered_by_the_intake(served, request_bytes, status):
    got = intake_shapes.exchange(served.port, request_bytes, lambda got: b"\r\n\r\n" in got)
    assert got.startswith(b"HTTP/1.1 " + status), got[:80]


@pytest.mark.waits
def test_a_request_still_incomplete_at_its_deadline_is_cut(served: Served) -> None:
    got = intake_shapes.exchange(served.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n", lambda got: False, 15)
    assert got.startswith(b"HTTP/1.1 408")


def test_one_address_holds_at_most_its_share_of_connections(tmp_path: Path) -> None:
    server = Served(tmp_path, EXTRES_CONNECTIONS_PER_CLIENT="5")
    try:
        socks = [intake_shapes.connect(server.port, 0) for _ in range(6)]  # all from one address
        try:
            socks[-1].settimeout(5)
            assert socks[-1].recv(100).startswith(b"HTTP/1.1 429")
            assert intake_shapes.probe(server.url + "/healthz") < 1.0  # another address is served
        finally:
            for s in socks:
                s.close()
    finally:
        server.stop()


def test_at_the_connection_limit_the_oldest_idle_connection_makes_room(tmp_path: Path) -> None:
    server = Served(tmp_path, EXTRES_CONNECTIONS="16", EXTRES_CONNECTIONS_PER_CLIENT="100")
    try:
        idle = [intake_shapes.connect(server.port, i) for i in range(16)]
        try:
            time.sleep(0.2)
            assert intake_shapes.probe(server.url + "/healthz", timeout=2) < 1.0
            idle[0].settimeout(2)
            with contextlib.suppress(ConnectionResetError):  # closed to make room
                assert idle[0].recv(10) == b""
        finally:
            for s in idle:
                s.close()
    finally:
        server.stop()
