"""DeviceClass selectors evaluated in a child process, so that whatever a driver or a class
brings costs one evaluation, never the worker.

Why a process: the CEL runtime is native code (cel-cpp). Its iteration budget bounds a runaway
expression, but a crash in it (a SIGSEGV on a value it was never meant to see) would take the
whole worker and every page with it, again on each restart while the object is there. Here the
child has an address-space limit, and each answer must come within ``ANSWER_TIMEOUT``; when the
child dies or stalls, the batch is sent again to a new child that answers one pair at a time,
so the next failure names the one pair that caused it: that pair is ``Unknown``, the others are
answered. Past ``MAX_RESTARTS`` in a minute, every pair is ``Unknown`` until the minute is over.

The protocol: the parent writes a pickled request (its own data, read only by its own child):
``("evaluate", careful, pairs)``, answered with one JSON line per pair: ``true``, ``false`` or
``[expression, why, costly]``; or ``("compile", expressions)``, one line per expression: null
(it compiles) or why not.
(``costly``: the runtime's budget stopped this evaluation, counted in the parent, whose metric
``extres_selector_too_costly`` says so, as it does for an evaluation in the worker). Which
evaluator a runtime uses is a setting (``answers``, app.domain.selector_answers).
``bench/cel_sandbox.py`` measures its cost against evaluating in the worker.
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import select
import struct
import subprocess
import sys
import threading
import time
import weakref
from typing import IO, Any

from app.domain import device_cel, selector_answers
from app.domain.device_cel import Pairs, Unknown
from app.domain.selector_answers import NOT_CHECKED
from app.sandbox import bounded_child

log = logging.getLogger(__name__)
MEMORY_LIMIT = 1 << 30  # bytes of address space the child may map
ANSWER_TIMEOUT = 5.0  # seconds between two answers: an evaluation is budgeted to microseconds
MAX_RESTARTS = 10  # a minute
CHILD = "selector evaluator"  # its name in extres_child_exits_total
SUSPECT_FOR = 60.0  # seconds a pair that stopped a child alone is answered without asking
_HEADER = struct.Struct("!I")


class Sandbox:
    """One child process at a time; callers take turns (a lock)."""

    module = "app.sandbox.cel_sandbox"

    def __init__(self, memory_limit: int = MEMORY_LIMIT, answer_timeout: float = ANSWER_TIMEOUT) -> None:
        self.answer_timeout = answer_timeout
        self.kind = bounded_child.Child(CHILD, self.module, memory_limit, restarts=MAX_RESTARTS)
        self.crashes = 0  # children lost (crashed, stalled, or past their memory), for the metrics
        self._stalled = False  # the last request went unanswered past its deadline
        self._child: subprocess.Popen[bytes] | None = None
        # the live child, also ended when the sandbox is dropped unclosed (a runtime never stopped)
        self._live: set[subprocess.Popen[bytes]] = set()
        weakref.finalize(self, _end_all, self._live)
        self._lock = threading.Lock()
        self._suspects: dict[Any, float] = {}  # pairs that stopped a child alone, until when

    @property
    def last_exit(self) -> str:
        """How the last child lost ended (bounded_child.classify)."""
        return self.kind.last_exit

    def evaluate(self, pairs: Pairs) -> list[bool | Unknown]:
        with self._lock:
            now = time.monotonic()
            self._suspects = {p: until for p, until in self._suspects.items() if until > now}
            suspects = {p: i for i, p in enumerate(pairs) if p in self._suspects}
            asked = [p for p in pairs if p not in suspects]
            answers: list[bool | Unknown] = []
            careful = False
            while len(answers) < len(asked):
                rest = asked[len(answers) :]
                child = self._running()
                if child is None:
                    why = "the selector evaluator keeps failing: not evaluated for a minute"
                    answers += [Unknown(e[0] if e else "", why, transient=True) for e, _ in rest]
                    break
                got = self._ask(child, rest, careful)
                answers += got
                if len(got) < len(rest):  # the child died or stalled
                    self._lost(child)
                    if careful:  # one pair at a time: the first unanswered one did it
                        self._suspects[rest[len(got)]] = time.monotonic() + SUSPECT_FOR
                        answers.append(_stopped(rest[len(got)]))
                    careful = True
            for pair, i in suspects.items():  # not asked again within the minute
                answers.insert(i, _stopped(pair))
            return answers

    def check(self, expressions: list[str]) -> list[str | None]:
        """Why each expression does not compile (None: it does), asked of the child; those it
        could not answer (it died or stalled, or keeps failing) are NOT_CHECKED: asked again."""
        with self._lock:
            child = self._running()
            if child is None:
                return [NOT_CHECKED] * len(expressions)
            got = self._request(child, ("compile", expressions), len(expressions))
            if len(got) < len(expressions):
                self._lost(child)
            said = [None if g is None else str(g) for g in got]
            return said + [NOT_CHECKED] * (len(expressions) - len(got))

    def _ask(self, child: subprocess.Popen[bytes], pairs: Pairs, careful: bool) -> list[bool | Unknown]:
        return [_answer(a) for a in self._request(child, ("evaluate", careful, pairs), len(pairs))]

    def _request(self, child: subprocess.Popen[bytes], request: tuple[Any, ...], count: int) -> list[Any]:
        """The child's answers to ``request``, one JSON value a line, as many as came in time."""
        assert child.stdin is not None and child.stdout is not None
        payload = pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)
        answers: list[Any] = []
        try:
            child.stdin.write(_HEADER.pack(len(payload)) + payload)
            child.stdin.flush()
            for line in _lines(child.stdout, self.answer_timeout, count):
                answers.append(json.loads(line))
        except (OSError, ValueError) as exc:
            self._stalled = isinstance(exc, Stalled)  # else it ended (its exit says how)
            log.warning("selector evaluator lost after %d of %d answers: %s", len(answers), count, exc)
        return answers

    def _running(self) -> subprocess.Popen[bytes] | None:
        if self._child is None or self._child.poll() is not None:
            # the child reads its first request after its limits are set; None past its restarts
            self._child = self.kind.start(stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            if self._child is not None:
                self._live.add(self._child)
        return self._child

    def _lost(self, child: subprocess.Popen[bytes]) -> None:
        self.crashes += 1
        self._live.discard(child)
        reason = self.kind.ended(child, self._stalled)
        self._stalled = False
        log.error("selector evaluator %s (exit %s); a new one takes over", reason, child.returncode)
        self._child = None

    def close(self) -> None:
        with self._lock:
            _end_all(self._live)
            self._child = None


def _stopped(pair: Any) -> Unknown:
    """The answer for a pair that stopped a child: not kept (it is asked again after a minute,
    so a child lost to load is not a selector judged for good)."""
    why = "stopped the selector evaluator (a crash, a stall or its memory limit); asked again in a minute"
    return Unknown(" && ".join(pair[0]), why, transient=True)


def _end_all(children: set[subprocess.Popen[bytes]]) -> None:
    for child in list(children):
        bounded_child.end(child)
    children.clear()


class Stalled(ValueError):
    """The child did not answer within its deadline (it is killed, and said to have stalled)."""


def _lines(stream: IO[bytes], timeout: float, count: int) -> Any:
    """``count`` lines from the child's stdout, each within ``timeout`` of the last; stops early
    when the child ends or stalls."""
    fd = stream.fileno()
    buffer = b""
    while count:
        while b"\n" not in buffer:
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                raise Stalled(f"no answer in {timeout:.0f} s")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise ValueError("the evaluator ended")
            buffer += chunk
        lines = buffer.split(b"\n")
        buffer = lines.pop()
        yield from lines[:count]
        count -= min(count, len(lines))


def _answer(value: Any) -> bool | Unknown:
    if isinstance(value, bool):
        return value
    expression, why, costly = value
    if costly is True:  # stopped by the budget in the child: counted here, where metrics are read
        device_cel.TOO_COSTLY.add(str(expression))
    return Unknown(str(expression), str(why))


KINDS = ("sandboxed", "in-process")


def answers(kind: str) -> selector_answers.Answers:
    """The selector evaluator ``kind`` names (``EXTRES_SELECTOR_EVALUATOR``), with its answers
    kept: a sandbox's child (started when first asked, so never before a fork; ended by the
    answers' ``close``) or this process."""
    if kind == "sandboxed":
        box = Sandbox()
        return selector_answers.Answers(
            kind, box.evaluate, box.check, close=box.close, lost=lambda: box.crashes
        )
    if kind == "in-process":
        return selector_answers.Answers()
    raise ValueError(f"no selector evaluator {kind!r}: {' or '.join(KINDS)}")


def child() -> None:  # pragma: no cover - runs in the child process (tests drive it from outside)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        header = stdin.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return
        request = pickle.loads(stdin.read(_HEADER.unpack(header)[0]))
        if request[0] == "compile":
            for error in device_cel.compile_errors_here(request[1]):
                stdout.write(json.dumps(error).encode() + b"\n")
            stdout.flush()
            continue
        _, careful, pairs = request
        for expressions, device in pairs:
            before = device_cel.TOO_COSTLY.count
            [found] = device_cel.evaluate_here([(expressions, device)])
            costly = device_cel.TOO_COSTLY.count > before
            answer = [found.expression, found.why, costly] if isinstance(found, Unknown) else found
            stdout.write(json.dumps(answer).encode() + b"\n")
            if careful:
                stdout.flush()
        stdout.flush()


if __name__ == "__main__":  # pragma: no cover
    child()
