"""The usage poller never stops on an error: an unexpected one (the child could not be started,
its answer not read) is logged and said like a Prometheus failure, the last reading stays, and
the next round comes as usual, in a thread app.base.workers started."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

from app.domain.gpu_usage import Reading
from app.usage.poller import UsagePoller
from tests.helpers import eventually


def reading() -> Reading:
    return Reading(taken=datetime.now(UTC), window=timedelta(hours=1), mappings=())


def test_an_unexpected_error_is_said_and_the_next_round_comes(caplog):
    answers: list[object] = [reading(), OSError("fork failed"), reading()]
    rounds: list[bool] = []

    def fetch() -> Reading:
        answer = answers.pop(0) if answers else reading()
        if isinstance(answer, Exception):
            raise answer
        return answer

    poller = UsagePoller(fetch, refresh=0.05, on_refresh=lambda _s, ok: rounds.append(ok))
    poller.start()
    poller.start()  # once, however often it is asked
    try:
        eventually(lambda: len(rounds) >= 4, timeout=10)
    finally:
        poller.close()
    assert rounds[:3] == [True, False, True] and poller.status().state == "fresh"
    assert "usage refresh failed unexpectedly" in caplog.text and "OSError: fork failed" in caplog.text
    threads = [t.name for t in threading.enumerate()]
    assert threads.count("extres-usage") <= 1


def test_while_the_error_is_the_last_word_the_status_says_so():
    def broken() -> Reading:
        raise RuntimeError("no answer to unpickle")

    poller = UsagePoller(broken, refresh=60)
    poller.poll()
    status = poller.status()
    assert status.state == "unavailable" and "the refresh failed in the dashboard" in status.error
