"""The history reader never makes a page wait once it has read: past its keeping time it gives
the last read at once and reads again in the background; while the API server does not answer,
that last read is marked stale, and with none it says so at once."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import orjson
import pytest

from app.domain.history import seal
from app.kube import history as kept
from app.kube.errors import Unavailable
from app.kube.history import History

KEY = "k" * 32


def event_list(message: str) -> bytes:
    now = int(time.time())
    text = f"ann: set x.io/y 1 -> {message}"
    item = {
        "metadata": {
            "name": "e",
            "creationTimestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
            "annotations": {"extres.dev/seal": seal(KEY, "n1", text, now)},
        },
        "involvedObject": {"name": "n1"},
        "message": text,
    }
    return orjson.dumps({"metadata": {}, "items": [item]})


class SlowCore:
    def __init__(self) -> None:
        self.answer = "2"
        self.gate = threading.Event()
        self.gate.set()
        self.calls = 0

    def list_namespaced_event(self, *args, **kwargs):
        self.calls += 1
        self.gate.wait(10)
        return SimpleNamespace(data=event_list(self.answer))


def reader(unreachable=lambda: False) -> tuple[History, SlowCore]:
    h = History(SimpleNamespace(), "default", 1.0, (KEY,), unreachable)  # type: ignore[arg-type]
    core = SlowCore()
    h.core = core  # type: ignore[assignment]
    return h, core


def test_past_its_keeping_time_the_last_read_is_given_at_once(monkeypatch):
    monkeypatch.setattr(kept, "KEPT_SECONDS", 0.0)
    h, core = reader()
    assert [c.new for c in h.recent().changes] == ["2"]
    core.gate.clear()  # the API server is slow now
    core.answer = "3"
    t0 = time.monotonic()
    assert [c.new for c in h.recent().changes] == ["2"]  # the last read, not a wait
    assert time.monotonic() - t0 < 0.5
    for _ in range(20):  # while that read hangs, every page still gets the last read at once
        t0 = time.monotonic()
        assert [c.new for c in h.recent().changes] == ["2"] and time.monotonic() - t0 < 0.1
    assert core.calls == 2  # one read in the background, not one per page
    core.gate.set()
    deadline = time.monotonic() + 5
    while [c.new for c in h.recent().changes] != ["3"] and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [c.new for c in h.recent().changes] == ["3"]


def test_while_the_api_server_does_not_answer_the_last_read_is_stale(monkeypatch):
    monkeypatch.setattr(kept, "KEPT_SECONDS", 5.0)
    down = {"now": False}
    h, _core = reader(lambda: down["now"])
    assert not h.recent().stale
    down["now"] = True
    h._kept.keep_seconds = 0.0  # past its keeping time
    kept.KEPT_SECONDS = 0.0
    assert h.recent().stale
    never = reader(lambda: True)[0]
    with pytest.raises(Unavailable):
        never.recent()
