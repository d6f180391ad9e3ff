"""A cluster's state on the Fleet page, from what its freshness says of the contact with it
(app.domain.fleet.state_of): each state told apart, "since" from the figures' age, a grace for
watches that are reconnecting, no figures said where there are none."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from app.domain import fleet

NOW = datetime(2026, 12, 7, 13, 30, tzinfo=UTC)


@dataclass(frozen=True)
class Fresh:
    synced: bool = True
    stale: bool = False
    age_seconds: float | None = 1.0
    error: str | None = None
    forbidden: bool = False
    too_large: bool = False


@pytest.mark.parametrize(
    ("fresh", "state", "short"),
    [
        (Fresh(), fleet.LIVE, ""),
        (Fresh(stale=True, age_seconds=5, error="connection refused"), fleet.STALE, ""),  # in the grace
        (
            Fresh(stale=True, age_seconds=240, error="connection refused"),
            fleet.UNREACHABLE,
            "unreachable since 13:26 UTC",
        ),
        (
            Fresh(synced=False, stale=True, age_seconds=None, error="no route"),
            fleet.UNREACHABLE,
            "unreachable, no figures yet",
        ),
        (Fresh(synced=False, stale=True, age_seconds=None), fleet.COUNTING, ""),
        (Fresh(stale=True, forbidden=True, error="nodes is forbidden"), fleet.NO_ACCESS, ""),
        (
            Fresh(stale=True, too_large=True, error="a list page past 64 MiB"),
            fleet.REFUSED,
            "refused: answer too large",
        ),
    ],
)
def test_each_contact_reads_as_its_state(fresh, state, short):
    found = fleet.state_of("b", fresh, NOW, waiting=2, idle=None)
    assert (found.state, found.short) == (state, short)
    if state == fleet.UNREACHABLE and fresh.age_seconds:
        assert (
            found.said == "unreachable since 2026-12-07 13:26:00 UTC, figures from then: connection refused"
        )
        assert found.figures_from == datetime(2026, 12, 7, 13, 26, tzinfo=UTC)
    assert found.counted == (state in (fleet.LIVE, fleet.STALE))
