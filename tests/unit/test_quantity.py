from decimal import Decimal

import pytest

from app.domain.quantity import (
    QuantityError,
    format_amount,
    parse_count,
    parse_quantity,
    parse_typed_count,
    to_amount,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("3", Decimal(3)),
        ("3000m", Decimal(3)),
        ("1Ki", Decimal(1024)),
        ("2Mi", Decimal(2 * 2**20)),
        ("1k", Decimal(1000)),
        ("2e3", Decimal(2000)),
        ("1E2", Decimal(100)),
        ("0.5", Decimal("0.5")),
        ("1500m", Decimal("1.5")),
        ("100n", Decimal("1E-7")),
        (".5", Decimal("0.5")),
        ("+4", Decimal(4)),
    ],
)
def test_parse_quantity(text, value):
    assert parse_quantity(text) == value


# digits Python reads as numbers but the API server refuses: fullwidth 3, Arabic-Indic 3
NON_ASCII = ["\uff13", "\u0663", "1e\uff13", "1.\uff15"]


@pytest.mark.parametrize("text", ["", "abc", "1.2.3", "3 dongles", "1KB", "e3", "1e999", "Ki", *NON_ASCII])
def test_parse_quantity_rejects(text):
    with pytest.raises(QuantityError):
        parse_quantity(text)


@pytest.mark.parametrize(("text", "count"), [("3", 3), ("3000m", 3), ("1Ki", 1024), ("0", 0), ("1e3", 1000)])
def test_counts_are_whole_numbers(text, count):
    assert parse_count(text) == count


@pytest.mark.parametrize(
    ("text", "reason"),
    [("0.5", "whole number"), ("1500m", "whole number"), ("-1", "negative"), ("1n", "whole number")],
)
def test_counts_reject_fractions_and_negatives(text, reason):
    with pytest.raises(QuantityError, match=reason):
        parse_count(text)


def test_count_maximum():
    assert parse_count("1000", maximum=1000) == 1000
    with pytest.raises(QuantityError, match="maximum"):
        parse_count("1001", maximum=1000)


def test_amounts_use_scheduler_units():
    assert to_amount("cpu", "250m") == 250
    assert to_amount("cpu", "2") == 2000
    assert to_amount("cpu", "1n") == 1  # rounded up, like MilliValue
    assert to_amount("memory", "1Gi") == 2**30
    assert to_amount("example.com/dongle", "4") == 4


def test_format_amount():
    assert format_amount("cpu", 2000) == "2"
    assert format_amount("cpu", 250) == "250m"
    assert (format_amount("cpu", 7800), format_amount("cpu", 1250), format_amount("cpu", 12001)) == (
        "7.8",
        "1.25",
        "12.001",
    )
    assert format_amount("memory", 2**30) == "1Gi"
    assert format_amount("memory", 64 * 2**20) == "64Mi"
    assert format_amount("example.com/dongle", 7) == "7"


@pytest.mark.parametrize(("text", "count"), [("4", 4), (" 12 ", 12), ("0", 0), ("007", 7)])
def test_typed_device_counts_are_plain_digits(text, count):
    assert parse_typed_count(text) == count


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("2Ki", "2Ki means 2048: type 2048 if you mean it"),
        ("1e3", "1e3 means 1000: type 1000 if you mean it"),
        ("2k", "2k means 2000: type 2000 if you mean it"),
        ("1000m", "1000m means 1: type 1 if you mean it"),
        ("+3", "+3 means 3: type 3 if you mean it"),
        ("1.5", "'1.5' is not a whole number of devices: type digits only, like 4"),
        ("1500m", "not a whole number of devices"),
        ("-1", "negative"),
        ("\uff13", "is not a whole number: type digits only, like 4"),
        ("four", "is not a whole number: type digits only, like 4"),
    ],
)
def test_typed_device_counts_refuse_every_other_spelling_with_the_integer_it_means(text, message):
    with pytest.raises(QuantityError) as refused:
        parse_typed_count(text)
    assert message in str(refused.value)
    assert "Ki," not in str(refused.value) and "e3)" not in str(refused.value)  # teaches no such form


def test_typed_device_counts_keep_the_maximum():
    assert parse_typed_count("1000", maximum=1000) == 1000
    with pytest.raises(QuantityError, match="1001 is more than the allowed maximum of 1000"):
        parse_typed_count("1001", maximum=1000)
    with pytest.raises(QuantityError, match="means more than the allowed maximum"):
        parse_typed_count("1Mi", maximum=1000)
