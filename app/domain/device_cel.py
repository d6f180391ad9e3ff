"""DeviceClass selectors: CEL expressions over one device, evaluated with cel-python.

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
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import celpy
import semver
from celpy import celtypes

from app.domain.quantity import QuantityError, to_amount

MAX_EXPRESSION = 10_000  # characters: the API server's own limit on a selector is smaller


class Unknown(Exception):
    """A selector that cannot be compiled or evaluated for a device: its expression and why."""

    def __init__(self, expression: str, why: str) -> None:
        super().__init__(f"{expression[:200]}: {why[:200]}")
        self.expression = expression
        self.why = why


class Version(str):
    """A device attribute of type version: its text, read as a semantic version by selectors."""

    __slots__ = ()


class SemVer:
    """A semantic version inside CEL: ordered with other versions only (a quantity is not one)."""

    __slots__ = ("v",)

    def __init__(self, v: semver.Version) -> None:
        self.v = v

    def _other(self, other: object) -> semver.Version:
        if not isinstance(other, SemVer):
            raise TypeError("a version compares with versions only")
        return other.v

    def __lt__(self, other: object) -> bool:
        return self.v < self._other(other)

    def __gt__(self, other: object) -> bool:
        return self.v > self._other(other)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SemVer) and self.v == other.v

    def __hash__(self) -> int:
        return hash(self.v)


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


def _semver(text: Any, normalize: Any = False) -> SemVer:
    try:
        return SemVer(_parse_version(text, normalize))
    except ValueError as exc:
        raise ValueError(f"not a version: {str(text)[:40]}") from exc


def _is_semver(text: Any, normalize: Any = False) -> celtypes.BoolType:
    try:
        _parse_version(text, normalize)
    except ValueError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _part(name: str) -> Any:
    def get(v: Any) -> celtypes.IntType:
        if not isinstance(v, SemVer):
            raise TypeError(f"{name}() is for versions")
        return celtypes.IntType(getattr(v.v, name))

    return get


@dataclass(frozen=True)
class Device:
    """What a selector reads of one device (not its name: selectors cannot see it, so devices
    alike share one evaluation)."""

    driver: str
    attributes: tuple[tuple[str, int | bool | str | Version], ...]  # qualified or driver-relative name
    capacity: tuple[tuple[str, str], ...]  # name, quantity


def _milli(text: Any) -> celtypes.IntType:
    try:
        return celtypes.IntType(to_amount("cpu", str(text)))  # milli-units, exact for whole values
    except QuantityError as exc:
        raise ValueError(f"not a quantity: {str(text)[:40]}") from exc


def _compare(a: Any, b: Any) -> celtypes.IntType:
    return celtypes.IntType((a > b) - (a < b))


FUNCTIONS: dict[str, Any] = {
    "quantity": _milli,
    "compareTo": _compare,
    "isGreaterThan": lambda a, b: celtypes.BoolType(a > b),
    "isLessThan": lambda a, b: celtypes.BoolType(a < b),
    "asInteger": lambda a: celtypes.IntType(int(a) // 1000),
    "semver": _semver,
    "isSemver": _is_semver,
    "major": _part("major"),
    "minor": _part("minor"),
    "patch": _part("patch"),
}
_ENV = celpy.Environment()


@lru_cache(maxsize=512)
def _program(expression: str) -> Any:
    """The compiled program, or the compile error (kept, so a bad class costs one compile)."""
    if len(expression) > MAX_EXPRESSION:
        return Unknown(expression, "too long")
    try:
        return _ENV.program(_ENV.compile(expression), functions=FUNCTIONS)
    except Exception as exc:  # noqa: BLE001 - the library raises several kinds for bad input
        return Unknown(expression, f"does not compile: {type(exc).__name__}")


def compile_error(expression: str) -> str | None:
    found = _program(expression)
    return found.why if isinstance(found, Unknown) else None


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
        return celtypes.BoolType(value)
    if isinstance(value, int):
        return celtypes.IntType(value)
    return celtypes.StringType(str(value))


def activation(device: Device) -> dict[str, Any]:
    attributes = _as_map(_grouped(device.driver, dict(device.attributes), _attribute))
    return {
        "device": celtypes.MapType(
            {
                celtypes.StringType("driver"): celtypes.StringType(device.driver),
                celtypes.StringType("attributes"): attributes,
                celtypes.StringType("capacity"): _as_map(
                    _grouped(device.driver, dict(device.capacity), _milli)
                ),
            }
        )
    }


def _as_map(grouped: dict[str, dict[str, Any]]) -> celtypes.MapType:
    return celtypes.MapType(
        {
            celtypes.StringType(domain): celtypes.MapType(
                {celtypes.StringType(k): v for k, v in values.items()}
            )
            for domain, values in grouped.items()
        }
    )


@lru_cache(maxsize=65_536)
def _decided(expressions: tuple[str, ...], device: Device) -> bool | Unknown:
    try:
        return _matches(expressions, device)
    except Unknown as exc:
        return exc


def matches(expressions: tuple[str, ...], device: Device) -> bool:
    """Whether every selector holds for the device; raises Unknown when one cannot be decided.
    Pure-Python CEL costs ~0.2 ms an evaluation: answers are kept per selectors and device
    content (a node's identical GPUs, and every node's, share one)."""
    found = _decided(expressions, device)
    if isinstance(found, Unknown):
        raise found
    return found


def _matches(expressions: tuple[str, ...], device: Device) -> bool:
    context: dict[str, Any] | None = None
    for expression in expressions:
        program = _program(expression)
        if isinstance(program, Unknown):
            raise program
        if context is None:
            try:
                context = activation(device)
            except ValueError as exc:
                raise Unknown(expression, str(exc)) from None
        try:
            result = program.evaluate(context)
        except Exception as exc:  # noqa: BLE001 - CELEvalError and the library's own errors
            raise Unknown(expression, f"fails on a device: {type(exc).__name__}") from None
        if isinstance(result, Exception):
            raise Unknown(expression, f"fails on a device: {type(result).__name__}")
        if not isinstance(result, celtypes.BoolType):
            raise Unknown(expression, "gives neither true nor false")
        if not result:
            return False
    return True
