"""Kubernetes quantities, parsed exactly with Decimal (never float).

Amounts are kept as ints in the unit the scheduler uses: millicores for
``cpu``, whole units for everything else (rounded up, as ``Quantity.Value``
does). Extended resources must be whole numbers.
"""

from __future__ import annotations

import functools
import math
import re
from decimal import Decimal, InvalidOperation

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
}
# ASCII digits only: Python's \d (and int()) also take a fullwidth or Arabic-Indic 3, which the
# API server refuses
_QUANTITY = re.compile(
    r"(?P<num>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?"
)
_MAX_EXPONENT = 30
MAX_TEXT = 100  # characters: a quantity is a few; a longer one is refused, never parsed


class QuantityError(ValueError):
    """A quantity string that Kubernetes would not accept (or not as a whole number)."""


def parse_quantity(text: str) -> Decimal:
    """Parse a Kubernetes quantity (``3``, ``1500m``, ``1Ki``, ``2e3``) to an exact Decimal."""
    if not isinstance(text, str):
        text = str(text)
    s = text.strip()
    if len(s) > MAX_TEXT:
        raise QuantityError(f"{s[:20]!r}... is {len(s)} characters long: not a quantity the API server keeps")
    match = _QUANTITY.fullmatch(s)
    if not match or not s:
        raise QuantityError(f"{text!r} is not a quantity (like 2, 500m or 64Mi)")
    number = Decimal(match["num"])
    suffix = match["suffix"] or ""
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix in _DECIMAL:
        return number * _DECIMAL[suffix]
    exponent = int(suffix[1:])
    if abs(exponent) > _MAX_EXPONENT:
        raise QuantityError(f"{text!r} has an exponent out of range")
    try:
        return number.scaleb(exponent)
    except InvalidOperation as exc:  # pragma: no cover - guarded by the bound above
        raise QuantityError(f"{text!r} is not a quantity") from exc


def parse_count(text: str, *, maximum: int | None = None) -> int:
    """Parse a quantity for an extended resource: a whole, non-negative number.

    ``3``, ``3000m`` and ``1Ki`` are fine; ``0.5``, ``1500m`` and ``-1`` are not.
    """
    value = parse_quantity(text)
    if value < 0:
        raise QuantityError(f"{text!r} is negative; extended resources are counted from 0")
    if value != value.to_integral_value():
        raise QuantityError(f"{text!r} is not a whole number; extended resources are integers")
    count = int(value)
    if maximum is not None and count > maximum:
        raise QuantityError(f"{text!r} is more than the allowed maximum of {maximum}")
    return count


_DIGITS = re.compile(r"[0-9]{1,100}")


def parse_typed_count(text: str, *, maximum: int | None = None) -> int:
    """A device count as an operator types it: plain ASCII digits (``4``), nothing else.

    Every other form Kubernetes accepts (``2Ki``, ``1e3``, ``2k``, ``1000m``) is refused with the
    integer it stands for, so a slip never advertises 2,048 devices unseen: "2Ki means 2048: type
    2048 if you mean it"."""
    s = (text or "").strip()[:100]
    if _DIGITS.fullmatch(s):
        count = int(s)
        if maximum is not None and count > maximum:
            raise QuantityError(f"{count} is more than the allowed maximum of {maximum}")
        return count
    try:
        value = parse_quantity(s)
    except QuantityError:
        raise QuantityError(f"{s!r} is not a whole number: type digits only, like 4") from None
    if value < 0:
        raise QuantityError(f"{s!r} is negative; devices are counted from 0")
    if value != value.to_integral_value():
        raise QuantityError(f"{s!r} is not a whole number of devices: type digits only, like 4")
    count = int(value)
    if maximum is not None and count > maximum:
        raise QuantityError(f"{s!r} means more than the allowed maximum of {maximum}")
    raise QuantityError(f"{s} means {count}: type {count} if you mean it")


@functools.lru_cache(maxsize=4096)  # pods repeat a few quantities ("100m", "64Mi", "1")
def to_amount(resource: str, text: str) -> int:
    """A quantity as an int in scheduler units: millicores for cpu, else rounded-up units."""
    value = parse_quantity(text)
    if resource == "cpu":
        value = value * 1000
    return math.ceil(value)


def format_amount(resource: str, amount: int) -> str:
    """Human form of an amount from ``to_amount``."""
    if resource == "cpu":  # cores; millicores only below one core ("7.8", "250m")
        if amount % 1000 == 0 or abs(amount) < 1000:
            return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
        return f"{amount / 1000:.3f}".rstrip("0").rstrip(".")
    if resource == "memory" or resource.endswith("storage") or resource.startswith("hugepages-"):
        for unit, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if amount >= size and amount % size == 0:
                return f"{amount // size}{unit}"
            if amount >= size * 10:
                return f"{amount / size:.1f}{unit}"
    return str(amount)
