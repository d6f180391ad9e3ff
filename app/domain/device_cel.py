"""DeviceClass selectors: CEL expressions over one device, evaluated with cel-expr-python
(Google's CEL runtime, cel-cpp, for Python).

The environment is the one DRA gives a selector (resource.k8s.io, ``device``):
``device.driver``; ``device.attributes[domain].name`` with an attribute's int, bool, string or
version value (a version is a semantic version); ``device.capacity[domain].name`` as a
quantity. An attribute or capacity name without a domain belongs to the driver's. Quantities
compare with ``quantity("1Gi")``, ``a.compareTo(b)``, ``a.isGreaterThan(b)``, ``a.isLessThan(b)``
and ``a.asInteger()``; versions with ``semver("1.2.3")`` (``semver(s, true)`` normalizes "v1.2"
to "1.2.0"), ``isSemver(s)``, the same three comparisons, ``major()``, ``minor()`` and
``patch()``, parsed by the ``semver`` library (strict SemVer 2.0.0, as the API server's). Comparing
a version with a quantity fails. Anything else fails, and so does a reference to an attribute a
device does not have: a failure is never a match or a miss, it is ``Unknown``, and the numbers
that depend on it are shown as unknown with the expression.

Why this library (``bench/cel_libraries.py`` measured the three for Python side by side): it
evaluates a selector in microseconds (4 times faster than the Rust-backed one, 40 to 100 times
faster than cel-python), its regular expressions are RE2's (linear time), and it alone bounds
every evaluation, by an iteration budget (10,000, fixed in the runtime; the API server accepts
some selectors past it): a selector past it is ``Unknown`` "too costly" (counted,
``TOO_COSTLY``), never a hang. Which process evaluates, and the answers kept, are
app.domain.selector_answers'. Quantities and versions live in the expression as one-key maps (``QUANTITY``,
``VERSION``) that only the functions above read.

The runtime is loaded with the first selector compiled (``_cel``), not at import: ~6 MiB a
cluster without DRA device classes never needs (docs/performance.md, first answer).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import semver

from app.domain.numbers import within
from app.domain.quantity import QuantityError, to_amount

MAX_QUANTITY_TEXT = 64  # characters of a quantity; the API server's are far shorter
MAX_EXPRESSION = 10_000  # characters: the API server's own limit on a selector is smaller
MAX_STRING = 4096  # characters of a string attribute a selector reads (the API server allows 64)
QUANTITY, VERSION = "__quantity__", "__version__"  # a map a selector writes with these is taken as one


class Unknown(Exception):
    """A selector that cannot be compiled or evaluated for a device: its expression and why."""

    def __init__(self, expression: str, why: str, transient: bool = False) -> None:
        super().__init__(f"{expression[:200]}: {why[:200]}")
        self.expression = expression
        self.why = why
        self.transient = transient  # the evaluator failed, not the selector: asked again next time


class Version(str):
    """A device attribute of type version: its text, read as a semantic version by selectors."""

    __slots__ = ()


class Costly:
    """Evaluations past the budget, in all (a metric reads ``count``) and per expression: one
    past it on ``GIVE_UP`` devices is not evaluated again (a hostile class costs a few budgets,
    not one per device)."""

    GIVE_UP = 3

    def __init__(self) -> None:
        self.count = 0
        self._per: dict[str, int] = {}
        self._lock = threading.Lock()

    def add(self, expression: str) -> None:
        with self._lock:
            self.count += 1
            if len(self._per) < 4096 or expression in self._per:
                self._per[expression] = self._per.get(expression, 0) + 1

    def given_up(self, expression: str) -> bool:
        return self._per.get(expression, 0) >= self.GIVE_UP


TOO_COSTLY = Costly()


def _normalized(text: str) -> str:
    """As the API server's ``semver(s, true)``: no "v" prefix, missing minor and patch added,
    leading zeros dropped."""
    core, sep, rest = text.removeprefix("v").partition("-")
    if not sep:
        core, sep, rest = core.partition("+")
    parts = core.split(".")
    if not 1 <= len(parts) <= 3 or not all(p.isascii() and p.isdigit() for p in parts):
        return text
    parts = [str(int(p)) for p in parts] + ["0"] * (3 - len(parts))
    return ".".join(parts) + sep + rest


def _parse_version(text: Any, normalize: Any = False) -> semver.Version:
    raw = str(text)[:256]
    return semver.Version.parse(_normalized(raw) if normalize else raw)


def _semver(text: Any, normalize: Any = False) -> dict[str, str]:
    try:
        return {VERSION: str(_parse_version(text, normalize))}
    except ValueError as exc:
        raise ValueError(f"not a version: {str(text)[:40]}") from exc


def _is_semver(text: Any, normalize: Any = False) -> bool:
    try:
        _parse_version(text, normalize)
    except ValueError:
        return False
    return True


def _quantity(text: Any) -> dict[str, int]:
    text = str(text)
    if len(text) > MAX_QUANTITY_TEXT:
        raise ValueError(f"a quantity {len(text)} characters long: {text[:40]}...")
    try:
        amount = to_amount("cpu", text)  # milli-units, exact for whole values
    except QuantityError as exc:
        raise ValueError(f"not a quantity: {str(text)[:40]}") from exc
    if within(amount) is None:  # CEL's int64: nothing larger reaches cel-cpp (it crashes on it)
        raise ValueError(f"a quantity beyond CEL's 64-bit range: {str(text)[:40]}")
    return {QUANTITY: amount}


def _ordered(a: Any, b: Any) -> tuple[Any, Any]:
    """Two quantities or two versions, as comparable values; anything else fails."""
    for tag, read in ((QUANTITY, int), (VERSION, semver.Version.parse)):
        if isinstance(a, Mapping) and tag in a:
            if not (isinstance(b, Mapping) and tag in b):
                raise TypeError("a quantity compares with quantities, a version with versions")
            return read(a[tag]), read(b[tag])
    raise TypeError("compareTo, isGreaterThan and isLessThan are for quantities and versions")


def _compare(a: Any, b: Any) -> int:
    x, y = _ordered(a, b)
    return int(x > y) - int(x < y)


def _version_part(name: str) -> Any:
    def get(v: Any) -> int:
        if not (isinstance(v, Mapping) and VERSION in v):
            raise TypeError(f"{name}() is for versions")
        return int(getattr(semver.Version.parse(v[VERSION]), name))

    return get


def _as_integer(q: Any) -> int:
    if not (isinstance(q, Mapping) and QUANTITY in q):
        raise TypeError("asInteger() is for quantities")
    return int(q[QUANTITY]) // 1000


@lru_cache(maxsize=1)
def _cel() -> tuple[Any, Any]:
    """The CEL runtime and the environment DRA gives a selector, built once, on first use."""
    from cel_expr_python import cel

    def overload(
        name: str, impl: Any, *params: Any, member: bool = False, returns: Any = cel.Type.DYN
    ) -> Any:
        signature = "_".join([name, *(p.name().lower() for p in params)]) + ("_member" if member else "")
        return cel.Overload(signature, returns, list(params), is_member=member, impl=impl)

    s, b, d, i = cel.Type.STRING, cel.Type.BOOL, cel.Type.DYN, cel.Type.INT
    functions = [
        cel.FunctionDecl("quantity", [overload("quantity", _quantity, s)]),
        cel.FunctionDecl("semver", [overload("semver", _semver, s), overload("semver", _semver, s, b)]),
        cel.FunctionDecl(
            "isSemver",
            [
                overload("isSemver", _is_semver, s, returns=b),
                overload("isSemver", _is_semver, s, b, returns=b),
            ],
        ),
        cel.FunctionDecl("compareTo", [overload("compareTo", _compare, d, d, member=True, returns=i)]),
        cel.FunctionDecl(
            "isGreaterThan",
            [overload("isGreaterThan", lambda x, y: _compare(x, y) > 0, d, d, member=True, returns=b)],
        ),
        cel.FunctionDecl(
            "isLessThan",
            [overload("isLessThan", lambda x, y: _compare(x, y) < 0, d, d, member=True, returns=b)],
        ),
        cel.FunctionDecl("asInteger", [overload("asInteger", _as_integer, d, member=True, returns=i)]),
        *(
            cel.FunctionDecl(part, [overload(part, _version_part(part), d, member=True, returns=i)])
            for part in ("major", "minor", "patch")
        ),
    ]
    env = cel.NewEnv(variables={"device": d}, extensions=[cel.CelExtension("resource.k8s.io", functions)])
    return cel, env


@dataclass(frozen=True)
class Device:
    """What a selector reads of one device (not its name: selectors cannot see it, so devices
    alike share one evaluation)."""

    driver: str
    attributes: tuple[tuple[str, int | bool | str | Version], ...]  # qualified or driver-relative name
    capacity: tuple[tuple[str, str], ...]  # name, quantity


@lru_cache(maxsize=512)
def _program(expression: str) -> Any:
    """The compiled program, or the compile error (kept, so a bad class costs one compile)."""
    if len(expression) > MAX_EXPRESSION:
        return Unknown(expression, "too long")
    try:
        # unchecked: the checker refuses a comprehension over a map read from ``device`` (typed
        # dyn), which the API server accepts; a type mismatch fails at evaluation, as Unknown
        return _cel()[1].compile(expression, disable_check=True)
    except Exception as exc:  # noqa: BLE001 - the library raises RuntimeError with the checker's text
        first = str(exc).split("\n", 1)[0].removeprefix("INVALID_ARGUMENT: ")
        return Unknown(expression, f"does not compile: {first[:160]}")


def compile_error(expression: str) -> str | None:
    found = _program(expression)
    return found.why if isinstance(found, Unknown) else None


def compile_errors_here(expressions: list[str]) -> list[str | None]:
    """Why each expression does not compile (None: it does), in this process (the sandbox's child
    runs this)."""
    return [compile_error(e) for e in expressions]


def _grouped(driver: str, values: Mapping[str, Any], convert: Any) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name, value in values.items():
        domain, _, short = name.rpartition("/")
        out.setdefault(domain or driver, {})[short] = convert(value)
    return out


def _attribute(value: Any) -> Any:
    if isinstance(value, Version):
        return _semver(value)
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if within(value) is None:
            raise ValueError("an int attribute beyond CEL's 64-bit range")
        return value
    return str(value)[:MAX_STRING]


def activation(device: Device) -> Any:
    return _cel()[1].Activation(
        {
            "device": {
                "driver": device.driver,
                "attributes": _grouped(device.driver, dict(device.attributes), _attribute),
                "capacity": _grouped(device.driver, dict(device.capacity), _quantity),
            }
        }
    )


Pairs = list[tuple[tuple[str, ...], Device]]
Evaluate = Callable[[Pairs], list["bool | Unknown"]]


def evaluate_here(pairs: Pairs) -> list[bool | Unknown]:
    """Each pair's answer, evaluated in this process (the sandbox's child runs this)."""
    out: list[bool | Unknown] = []
    for expressions, device in pairs:
        try:
            out.append(_matches(expressions, device))
        except Unknown as exc:
            out.append(exc)
    return out


def _matches(expressions: tuple[str, ...], device: Device) -> bool:
    context: Any = None
    for expression in expressions:
        program = _program(expression)
        if isinstance(program, Unknown):
            raise program
        if TOO_COSTLY.given_up(expression):
            raise Unknown(expression, "too costly: past the evaluation budget")
        if context is None:
            try:
                context = activation(device)
            except ValueError as exc:
                raise Unknown(expression, str(exc)) from None
        try:
            result = program.eval(context)
        except Exception as exc:  # noqa: BLE001 - the budget and the runtime's own failures
            raise _failure(expression, str(exc)) from None
        if result.type() == _cel()[0].Type.ERROR:
            raise _failure(expression, str(result.value()))
        if result.type() != _cel()[0].Type.BOOL:
            raise Unknown(expression, "gives neither true nor false")
        if not result.value():
            return False
    return True


def _failure(expression: str, message: str) -> Unknown:
    if "budget exceeded" in message:
        TOO_COSTLY.add(expression)
        return Unknown(expression, "too costly: past the evaluation budget")
    return Unknown(expression, f"fails on a device: {message.split(chr(10), 1)[0][:160]}")
