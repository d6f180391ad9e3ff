"""Answers never wait on a client's reading (app/serving/http_worker.py): past the intake's budget
an answer a thread made is still held for the loop to send, never written by the thread; the loop
then cuts the stalled readers holding the most until the budget holds, and counts them. (The
served shape, a flood of slow readers on a 1,500-byte MTU, is not run here: loopback's buffers
hide it.)"""

from __future__ import annotations

import time
from types import SimpleNamespace

from app.metrics.tallies import ANSWERS_DROPPED
from app.serving.http_intake import Budget, Limits
from app.serving.http_worker import STALLED, BufferingWorker, Outbox


class NeverWritten:
    def sendall(self, data):
        raise AssertionError("a thread wrote to a client's socket")

    def settimeout(self, seconds):
        pass


def test_past_the_budget_a_threads_answer_is_held_not_written():
    budget = Budget(100)
    assert budget.take(100)  # every byte held by others
    outbox = Outbox(SimpleNamespace(sock=NeverWritten(), continued=False), budget, Limits())
    outbox.sendall(b"x" * 5000)
    assert outbox.held == 5000 and budget.held == 5100 and budget.over


def test_the_loop_cuts_the_stalled_readers_holding_the_most_until_the_budget_holds():
    now = time.monotonic()
    budget = Budget(100)
    dropped: list[str] = []

    def leaving(held: int, moved: float) -> SimpleNamespace:
        budget.force(held)
        return SimpleNamespace(held=held, moved=moved)

    worker = SimpleNamespace(budget=budget, dropped=dropped)
    worker.leaving = {
        "reading": leaving(80, now),  # its bytes still leave: never cut
        "stalled-small": leaving(30, now - STALLED - 1),
        "stalled-large": leaving(60, now - STALLED - 1),
    }

    def drop(conn: str) -> None:
        dropped.append(conn)
        budget.give(worker.leaving.pop(conn).held)

    worker._drop = drop
    before = ANSWERS_DROPPED.value
    BufferingWorker._trim(worker, now)  # type: ignore[arg-type]
    assert dropped == ["stalled-large", "stalled-small"] and budget.held == 80 and not budget.over
    assert ANSWERS_DROPPED.value - before == 2  # counted in extres_intake_answers_dropped


def test_the_dropped_answers_are_a_metric_of_the_process():
    from app.metrics.families import _ProcessCounts

    [family] = [f for f in _ProcessCounts().collect() if f.name == "extres_intake_answers_dropped"]
    assert family.samples[0].value == ANSWERS_DROPPED.value
