"""Background starters start once however many threads ask at the same moment (the capacity
history's writer, the shared sign-out list's reader): counted, with the start itself slowed so
that every caller is inside it together."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from app.base import workers
from app.kube.api.capacity_log import CapacityLog
from app.kube.api.revocations import Revocations


@pytest.mark.parametrize(
    "make",
    [
        lambda: CapacityLog(object(), "default/extres-history", ("a key of at least thirty-two bytes!",)),
        lambda: Revocations(object(), "default/extres-sessions"),
    ],
    ids=["capacity-log", "revocations"],
)
def test_eight_threads_starting_at_once_start_one(monkeypatch, make):
    started = []

    def every(name: str, *args: Any, **kwargs: Any) -> threading.Thread:
        started.append(name)
        time.sleep(0.05)  # every caller arrives while the first is still starting
        return threading.Thread(target=lambda: None)

    monkeypatch.setattr(workers, "every", every)
    starter = make()
    gate = threading.Barrier(8)

    def start() -> None:
        gate.wait()
        starter.start()

    threads = [threading.Thread(target=start) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(started) == 1
