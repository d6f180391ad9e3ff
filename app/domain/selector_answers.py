"""DeviceClass selectors' answers, kept, and who decides them: one ``Answers`` per runtime, given
to its store, its evaluator chosen by a setting (``EXTRES_SELECTOR_EVALUATOR``: ``sandboxed``, a
child process, app.sandbox.cel_sandbox.answers, the served default; or ``in-process``,
app.domain.device_cel here, what ``Answers()`` is), for tests and the served worker alike.

Two questions are asked of it, both before a page asks (the store calls ``decide`` and
``decide_compiled`` for what an event brings, before it takes its lock): whether a class's
selectors hold for a device, and whether a class's expressions compile at all (once, when the
class arrives; pages read the kept answer, and a worker with the sandbox never loads the native
runtime). Every selector that cannot be decided is counted by reason here, in the process that
serves the metrics."""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable

from app.domain.device_cel import Device, Evaluate, Pairs, Unknown, compile_errors_here, evaluate_here

Check = Callable[[list[str]], list["str | None"]]
NOT_CHECKED = "not checked yet"  # a class whose expressions arrived, the evaluator not yet asked


def reason(why: str) -> str:
    """A metric's label for why a selector cannot be decided (its words before the first colon)."""
    head = why.split(":", 1)[0].strip()
    for known in ("does not compile", "too costly", "too long", "fails on a device", "stopped the selector"):
        if head.startswith(known):
            return known.replace("stopped the selector", "evaluator lost")
    return "other"


class Answers:
    """The answers kept per selectors and device content (a node's identical GPUs, and every
    node's, share one), most of them decided before a page asks (``decide``), and who evaluates
    the rest (``evaluate``, ``check``: in this process, or a sandbox's child)."""

    SIZE = 1 << 18  # 5,000 nodes of 8 GPUs, each with a uuid of its own, under 6 classes
    COMPILED = 1 << 14  # expressions whose compile answer is kept

    def __init__(
        self,
        kind: str = "in-process",
        evaluate: Evaluate = evaluate_here,
        check: Check = compile_errors_here,
        *,
        close: Callable[[], None] = lambda: None,
        lost: Callable[[], int] = lambda: 0,
    ) -> None:
        self.kind, self.evaluate, self.check = kind, evaluate, check
        self.close = close  # ends the evaluator's child, if it has one
        self.lost = lost  # the evaluator's children lost so far (0 in-process)
        self.unknown: Counter[str] = Counter()  # selectors not decided, by reason (kept answers)
        self._kept: OrderedDict[tuple[tuple[str, ...], Device], bool | Unknown] = OrderedDict()
        self._compiled: OrderedDict[str, str | None] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, pairs: Pairs) -> list[bool | Unknown]:
        with self._lock:
            found = {p: self._kept[p] for p in pairs if p in self._kept}
            for p in found:
                self._kept.move_to_end(p)
        missing = list(dict.fromkeys(p for p in pairs if p not in found))
        for start in range(0, len(missing), 4096):  # bounded batches to the evaluator
            chunk = missing[start : start + 4096]
            found.update(zip(chunk, self.evaluate(chunk), strict=True))
            with self._lock:
                for p in chunk:
                    answer = found[p]
                    if isinstance(answer, Unknown) and answer.transient:
                        continue
                    if isinstance(answer, Unknown) and p not in self._kept:
                        self.unknown[reason(answer.why)] += 1
                    self._kept[p] = answer
                while len(self._kept) > self.SIZE:
                    self._kept.popitem(last=False)
        return [found[p] for p in pairs]

    def matches(self, expressions: tuple[str, ...], device: Device) -> bool:
        """Whether every selector holds for the device; raises Unknown when one cannot be decided."""
        [found] = self.get([(expressions, device)])
        if isinstance(found, Unknown):
            raise found
        return found

    def decide(self, selectors: Iterable[tuple[str, ...]], devices: Iterable[Device]) -> None:
        """Evaluate every class's selectors for every device now, so that the answers are kept for
        ``matches``: the store calls this for what an event brings before it takes its lock."""
        devices = list(devices)
        self.get([(expressions, device) for expressions in selectors for device in devices])

    def decide_compiled(self, expressions: Iterable[str]) -> None:
        """Ask the evaluator once whether each new expression compiles; the answer is kept."""
        with self._lock:
            new = list(dict.fromkeys(e for e in expressions if e not in self._compiled))
        if not new:
            return
        errors = self.check(new)
        with self._lock:
            for expression, error in zip(new, errors, strict=True):
                if error == NOT_CHECKED:  # the evaluator could not say: asked again next time
                    continue
                if error is not None and expression not in self._compiled:
                    self.unknown["does not compile"] += 1
                self._compiled[expression] = error
            while len(self._compiled) > self.COMPILED:
                self._compiled.popitem(last=False)

    def compile_error(self, expression: str) -> str | None:
        """The kept answer: why the expression does not compile, None when it does, or
        ``NOT_CHECKED`` before the evaluator was asked (never compiled here on a page's time)."""
        with self._lock:
            return self._compiled.get(expression, NOT_CHECKED)
