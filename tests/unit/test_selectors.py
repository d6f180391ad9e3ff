import pytest

from app.domain.selectors import SelectorError, parse_selector

LABELS = {"zone": "a", "pool": "gpu", "example.com/tier": "1"}


@pytest.mark.parametrize(
    ("text", "matches"),
    [
        ("", True),
        ("zone=a", True),
        ("zone==a", True),
        ("zone=b", False),
        ("zone!=b", True),
        ("zone!=a", False),
        ("pool", True),
        ("!pool", False),
        ("!missing", True),
        ("zone in (a, b)", True),
        ("zone notin (a,b)", False),
        ("zone=a,pool=gpu", True),
        ("zone=a, pool=cpu", False),
        ("example.com/tier=1", True),
        ("missing!=x", True),
    ],
)
def test_matching(text, matches):
    assert parse_selector(text).matches(LABELS) is matches


@pytest.mark.parametrize("text", ["zone=", "=a", "zone=a,", "zone in a", "zone=a b", "Zone_/x=1", "zone=a=b"])
def test_bad_selectors(text):
    if text == "zone=":
        # an empty value is legal: it matches a label with an empty value
        assert not parse_selector(text).matches(LABELS)
        return
    with pytest.raises(SelectorError):
        parse_selector(text)
