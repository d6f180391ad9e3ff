"""Every background thread: named, a daemon, never ended by an exception."""

from __future__ import annotations

import threading

from app.base import workers


def test_a_loop_goes_on_after_a_failure_and_stops_when_told():
    stop, rounds, third = threading.Event(), [], threading.Event()

    def work() -> None:
        rounds.append(1)
        if len(rounds) == 1:
            raise RuntimeError("the first round fails")
        if len(rounds) == 3:
            third.set()

    thread = workers.every("test-loop", 0.01, work, stop)
    assert thread.name == "extres-test-loop" and thread.daemon
    assert third.wait(5), "the loop died with its first failure"
    stop.set()
    thread.join(5)
    assert not thread.is_alive()


def test_a_woken_loop_runs_at_once():
    stop, wake, ran = threading.Event(), threading.Event(), threading.Event()
    thread = workers.every("test-wake", 3600, ran.set, stop, wake=wake)
    wake.set()
    assert ran.wait(5)  # not an hour later
    stop.set()
    wake.set()
    thread.join(5)
    assert not thread.is_alive()


def test_work_done_once_that_fails_is_logged(caplog):
    def fail() -> None:
        raise ValueError("boom")

    workers.start("test-once", fail).join(5)
    assert "background work test-once failed" in caplog.text
