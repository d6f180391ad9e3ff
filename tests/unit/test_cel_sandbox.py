"""Selectors evaluated in a child process (app.sandbox.cel_sandbox): the same answers as in the worker,
and a crash, a stall or a memory blow-up costs the one pair that caused it, never the caller."""

from __future__ import annotations

import subprocess
import sys

import pytest

from app.domain import device_cel, selector_answers
from app.domain.device_cel import Device, Unknown
from app.sandbox import bounded_child, cel_sandbox

GPU = "gpu.example.com"
DEVICES = [Device(GPU, (("index", i),), (("memory", f"{8 * (i + 1)}Gi"),)) for i in range(6)]
SELECTORS = [
    (f'device.capacity["{GPU}"].memory.compareTo(quantity("20Gi")) >= 0',),
    ('device.driver == "other"',),
    ('device.attributes["x.io"].y == 1',),  # unknown: no such attribute
]
# A child that misbehaves on cue (tests/unit/cel_misbehaving.py): an expression naming "crash"
# kills it with SIGSEGV (as the native runtime did), "stall" hangs it and "hog" maps memory past
# its limit.
MISBEHAVING = "tests.unit.cel_misbehaving"


def pairs(selectors=SELECTORS, devices=DEVICES):
    return [(s, d) for s in selectors for d in devices]


def plain(answers):
    return [a if isinstance(a, bool) else ("unknown", a.why) for a in answers]


@pytest.fixture
def sandbox():
    box = cel_sandbox.Sandbox(answer_timeout=2.0)
    yield box
    box.close()


def test_the_child_answers_as_the_worker_would(sandbox):
    assert plain(sandbox.evaluate(pairs())) == plain(device_cel.evaluate_here(pairs()))
    assert sandbox.crashes == 0


@pytest.mark.parametrize("cue", ["crash", pytest.param("stall", marks=pytest.mark.waits), "hog"])
def test_a_child_lost_costs_the_one_pair_that_did_it(sandbox, monkeypatch, cue):
    monkeypatch.setattr(sandbox.kind, "module", MISBEHAVING)
    bad = (f'device.driver == "{cue}"',)
    asked = [*pairs([SELECTORS[0]], DEVICES[:3]), (bad, DEVICES[0]), *pairs([SELECTORS[1]], DEVICES[:3])]
    answers = sandbox.evaluate(asked)
    assert len(answers) == len(asked)
    assert isinstance(answers[3], Unknown) and "stopped the selector evaluator" in answers[3].why
    good = asked[:3] + asked[4:]
    assert plain(answers[:3] + answers[4:]) == plain(device_cel.evaluate_here(good))
    assert sandbox.crashes == 2  # once in a batch, once more naming the pair
    assert plain(sandbox.evaluate(pairs())) == plain(device_cel.evaluate_here(pairs()))  # a new child
    again = sandbox.evaluate(asked)  # within the minute: the pair is not asked again
    assert sandbox.crashes == 2 and again[3].transient and plain(again) == plain(answers)
    assert sandbox.last_exit == {"crash": "crashed", "stall": "stalled", "hog": "over memory"}[cue]


def test_the_evaluators_failures_are_not_kept_as_answers():
    """An answer kept is a selector judged; a transient one (the evaluator failed) is asked again."""
    calls = []

    def flaky(asked):
        calls.append(len(asked))
        return [Unknown("x", "evaluator down", transient=True) if len(calls) == 1 else True for _ in asked]

    answers = selector_answers.Answers()
    answers.evaluate = flaky
    pair = (SELECTORS[1], DEVICES[0])
    assert isinstance(answers.get([pair])[0], Unknown)
    assert answers.get([pair]) == [True] and answers.get([pair]) == [True]
    assert calls == [1, 1]  # asked again once, then kept


def test_past_its_restarts_every_pair_is_unknown_for_a_while(sandbox, monkeypatch):
    monkeypatch.setattr(sandbox.kind, "module", "tests.unit.child_exits")
    answers = sandbox.evaluate(pairs())
    assert all(isinstance(a, Unknown) for a in answers)
    assert sandbox.crashes == cel_sandbox.MAX_RESTARTS
    assert "not evaluated for a minute" in answers[-1].why


def test_a_huge_quantity_is_unknown_never_handed_to_the_runtime():
    """A slice's capacity or a class's literal of thousands of digits crashed cel-cpp (SIGSEGV);
    beyond CEL's int64 it is unknown, named, in the worker itself."""
    huge = "9" * 4300
    device = Device(GPU, (), (("memory", huge),))
    with pytest.raises(Unknown, match="characters long"):
        selector_answers.Answers().matches(
            (f'device.capacity["{GPU}"].memory.isGreaterThan(quantity("1"))',), device
        )
    literal = (f'device.capacity["{GPU}"].memory.compareTo(quantity("{huge}")) > 0',)
    with pytest.raises(Unknown, match="characters long"):
        selector_answers.Answers().matches(literal, DEVICES[0])
    beyond = Device(GPU, (("big", 2**70),), (("memory", "10E"),))  # 10E milli-units: past int64
    with pytest.raises(Unknown, match="64-bit"):
        selector_answers.Answers().matches(('device.driver != ""',), beyond)


def test_a_child_that_died_with_a_request_still_buffered_ends_quietly():
    """The evaluator can die between the write of a request and its flush: the bytes stay in
    stdin's buffer, and closing the pipe tries them again (EPIPE). Ending the child must not
    raise (it did, as a 500 from the page that asked)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    child.wait()
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(b"a request never read")  # held in the buffer: smaller than it
    bounded_child.end(child)
    assert child.stdin.closed and child.stdout.closed


def test_an_evaluation_past_the_budget_in_the_child_is_counted_in_the_parent(sandbox):
    """The metric extres_selector_too_costly is read in the worker: a selector stopped by the
    runtime's budget in the child counts there, once per evaluation, as in the worker."""
    many = ", ".join(str(i) for i in range(200))
    costly = (f"[{many}].all(x, [{many}].all(y, [{many}].all(z, x + y + z >= 0)))",)
    before = device_cel.TOO_COSTLY.count
    answers = sandbox.evaluate([(costly, DEVICES[0]), (SELECTORS[1], DEVICES[0])])
    assert isinstance(answers[0], Unknown) and "too costly" in answers[0].why and answers[1] is False
    assert device_cel.TOO_COSTLY.count == before + 1


def test_each_way_a_child_ends_is_told_apart_and_counted():
    from app.sandbox import bounded_child as bc

    assert [bc.classify(code) for code in (-11, -9, bc.OVER_MEMORY, -15, -2, 1)] == [
        "crashed",
        "crashed",
        "over memory",
        "stopped with the server",
        "stopped with the server",
        "failed",
    ]
    assert bc.classify(None, stalled=True) == "stalled"
    before = bc.EXITS.counts().get(("selector evaluator", "crashed"), 0)
    bc.EXITS.record("selector evaluator", "crashed")
    assert bc.EXITS.counts()[("selector evaluator", "crashed")] == before + 1
