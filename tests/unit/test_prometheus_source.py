"""The Prometheus client (app.usage.prometheus) and the refresh in a child process
(app.usage.refresh) against a local HTTP server playing Prometheus' query API: an answer is read
whole, with the operator's bearer token; one too large, one that trickles past the deadline, an
error status, a body that is not the API's JSON and a server that is not there each become
UsageUnavailable in words, asked once (never retried); a child that stalls is stopped."""

from __future__ import annotations

import json
import logging
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from app.domain.usage_mapping import DCGM, KEY, SEPARATOR
from app.sandbox import bounded_child
from app.usage import refresh
from app.usage.poller import UsagePoller, UsageUnavailable
from app.usage.prometheus import Prometheus
from app.usage.refresh import Job, in_child

SAMPLE = {"metric": {"extres_key": "n1|g0"}, "value": [1, "42"]}


class Fake:
    """What the server answers next, and what it was asked."""

    def __init__(self) -> None:
        self.status = 200
        self.body: bytes = json.dumps({"status": "success", "data": {"result": [SAMPLE]}}).encode()
        self.trickle = 0.0  # seconds between chunks
        self.asked: list[tuple[str, str]] = []
        self.location = ""  # a Location header to send
        self.stall = 0.0  # seconds before anything is answered


@pytest.fixture
def fake() -> Iterator[tuple[Fake, str]]:
    state = Fake()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # http.server's name
            state.asked.append((self.path, self.headers.get("Authorization", "")))
            time.sleep(state.stall)
            self.send_response(state.status)
            self.send_header("Content-Type", "application/json")
            if state.location:
                self.send_header("Location", state.location)
            self.end_headers()
            chunks = [state.body[i : i + 16] for i in range(0, len(state.body), 16)]
            try:
                for chunk in chunks:
                    self.wfile.write(chunk)
                    self.wfile.flush()
                    if state.trickle:
                        time.sleep(state.trickle)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield state, f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def test_a_query_is_answered_with_the_operators_token(fake, tmp_path):
    state, url = fake
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    result = Prometheus(url, token_file=str(token)).query("up")
    assert result == [("n1|g0", 42.0)]
    [(path, auth)] = state.asked
    assert path.startswith("/api/v1/query?") and "query=up" in path and "timeout=5s" in path
    assert auth == "Bearer s3cret"
    token.write_text("rotated")  # read again at each query
    Prometheus(url, token_file=str(token)).query("up")
    assert state.asked[-1][1] == "Bearer rotated"


@pytest.mark.parametrize(
    ("setup", "words"),
    [
        (
            lambda s: setattr(
                s, "body", b'{"status": "success", "data": {"result": [' + b"1," * 600 + b"1]}}"
            ),
            "larger than",
        ),
        (lambda s: setattr(s, "status", 503), "answered the query with HTTP 503"),
        (lambda s: setattr(s, "body", b"<html>a proxy's page</html>"), "not the query API's JSON"),
        (
            lambda s: setattr(s, "body", b'{"status": "success", "data": {"result": "scalar"}}'),
            "not an instant vector",
        ),
    ],
)
def test_a_bad_answer_is_unavailable_in_words_and_asked_once(fake, setup, words):
    state, url = fake
    setup(state)
    with pytest.raises(UsageUnavailable, match=words):
        Prometheus(url, max_bytes=1024).query("up")
    assert len(state.asked) == 1  # never retried


def test_a_redirect_is_not_followed_and_what_the_server_said_is_logged_not_shown(fake):
    state, url = fake
    state.status, state.body = 302, b"internal detail: http://10.0.0.9/secret-path"
    state.location = "http://169.254.169.254/latest/meta-data/"
    with pytest.raises(UsageUnavailable) as refused:
        Prometheus(url).query("up")
    assert "HTTP 302 (a redirect, not followed" in str(refused.value)
    assert "secret-path" not in str(refused.value) and "secret-path" in refused.value.detail
    assert len(state.asked) == 1  # the target was never asked


def test_a_refusal_in_the_child_keeps_its_words_for_the_log(fake):
    state, url = fake
    state.status, state.body = 500, b"stack trace of the operator's server"
    job = Job(url, None, None, 5.0, (DCGM,), timedelta(hours=1), 1000, {})
    with pytest.raises(UsageUnavailable) as refused:
        in_child(job)
    assert "HTTP 500" in str(refused.value) and "stack trace" not in str(refused.value)
    assert "stack trace" in refused.value.detail


def test_a_value_that_is_not_a_number_is_kept_as_nan_for_the_reading_to_leave_out(fake):
    state, url = fake
    state.body = json.dumps(
        {
            "status": "success",
            "data": {
                "result": [
                    {"metric": {"extres_key": "k", "job": "x"}, "value": [1, "NaN"]},
                    {"metric": {}, "value": [1, "busy"]},
                ]
            },
        }
    ).encode()
    [(k1, v1), (k2, v2)] = Prometheus(url).query("up")
    assert (k1, k2) == ("k", "") and v1 != v1 and v2 != v2  # NaN


def test_an_answer_that_trickles_is_cut_at_the_deadline(fake):
    state, url = fake
    state.body = json.dumps({"status": "success", "data": {"result": [SAMPLE] * 4}}).encode()
    state.trickle = 0.1  # each chunk in time for the socket's timeout, the whole far past it
    with pytest.raises(UsageUnavailable, match=r"took longer than 0\.2 s"):
        Prometheus(url, timeout=0.2).query("up")


def test_a_prometheus_that_stops_answering_is_said_to_time_out_not_to_be_unreachable(fake):
    state, url = fake
    state.stall = 3.0
    with pytest.raises(UsageUnavailable, match="did not answer within 1 s"):
        Prometheus(url, timeout=1).query("up")


def test_no_server_and_no_token_file_are_said_so(tmp_path):
    with pytest.raises(UsageUnavailable, match="cannot be reached") as refused:
        Prometheus("http://127.0.0.1:9", timeout=1).query("up")
    said = str(refused.value)
    assert "no connection could be made to it" in said and "ConnectionError" not in said  # words, no class
    with pytest.raises(UsageUnavailable, match="token file cannot be read"):
        Prometheus("http://127.0.0.1:9", token_file=str(tmp_path / "missing")).query("up")


# ---- the refresh in a child process (app.usage.refresh) -------------------------------------
def job(url: str, timeout: float = 5.0, pods: dict | None = None) -> Job:
    return Job(url, None, None, timeout, (DCGM,), timedelta(hours=1), 1000, pods or {})


def test_a_refresh_in_a_child_hands_back_the_reading(fake):
    state, url = fake
    key = SEPARATOR.join(("made-up-host", "GPU-1", "0", "ml", "train", "H100"))
    state.body = json.dumps(
        {"status": "success", "data": {"result": [{"metric": {KEY: key}, "value": [1, "42"]}]}}
    ).encode()
    reading = in_child(job(url, pods={("ml", "train"): "gpu-node-1"}))
    assert reading.busy("gpu-node-1", "nvidia.com/gpu") == 42.0  # on the pod's node, as the cache knows it
    [device] = reading.devices_on("gpu-node-1")
    assert (device.uuid, device.model, device.pod) == ("GPU-1", "H100", ("ml", "train"))
    assert len(state.asked) == 4  # utilization, memory used, memory free, last XID


def test_a_refresh_that_fails_or_stalls_in_its_child_is_unavailable(fake):
    state, url = fake
    with pytest.raises(UsageUnavailable, match="cannot be reached"):
        in_child(job("http://127.0.0.1:9", timeout=1))
    state.trickle = 1.0  # the child waits on a 30 s query; the worker stops it at its deadline
    stalled = bounded_child.EXITS.counts().get((refresh.CHILD, "stalled"), 0)
    with pytest.raises(UsageUnavailable, match=r"took longer than 0\.5 s and was stopped"):
        in_child(job(url, timeout=30), start_allowance=0.5 - 30 * refresh.MOST_QUERIES)
    assert bounded_child.EXITS.counts()[(refresh.CHILD, "stalled")] == stalled + 1  # for the metric


def test_a_refresh_stopped_with_its_process_group_is_said_not_warned_of(fake, monkeypatch, caplog):
    """killpg(SIGTERM) stops the server and the refresh's child at once: the poller may see the
    child's end before its own stop. That is the server stopping, not Prometheus failing."""
    state, url = fake
    state.trickle = 1.0  # the child waits on its query until the signal
    children: list[subprocess.Popen[bytes]] = []
    spawn = subprocess.Popen

    def tracked(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        children.append(spawn(*args, **kwargs))
        return children[-1]

    monkeypatch.setattr(bounded_child.subprocess, "Popen", tracked)
    threading.Timer(1.0, lambda: children[0].send_signal(signal.SIGTERM)).start()
    poller = UsagePoller(lambda: in_child(job(url, timeout=20)), refresh=60)
    with caplog.at_level(logging.INFO, logger="app.usage.poller"):
        poller.poll()
    assert [r.levelno for r in caplog.records] == [logging.INFO]
    assert "stopped by a signal" in poller.status().error
