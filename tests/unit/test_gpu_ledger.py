"""GPU-seconds held per account (app.domain.gpu_ledger): shares counted as their fraction of a GPU,
MIG instances as their profile's, a hold between two reads counted whole, the totals never
going down, the accounts kept bounded."""

from __future__ import annotations

import pytest

from app.domain.gpu_ledger import OTHER, Account, Ledger, gpus_of
from app.domain.gpu_sharing import sharing

GPU = "nvidia.com/gpu"
A = Account("team-a", "a-queue", "Job", "train", "a")
B = Account("team-b", "", "Job", "infer", "b")


def is_gpu(resource: str) -> bool:
    return resource == GPU


def test_a_share_counts_as_its_fraction_of_a_gpu_and_a_mig_instance_as_its_profiles():
    labels = {f"{GPU}.replicas": "4", f"{GPU}.count": "2", f"{GPU}.sharing-strategy": "time-slicing"}
    shared = sharing(labels, {GPU: 8}, {GPU: 8})
    assert gpus_of({GPU: 1}, shared, is_gpu) == 0.25
    assert gpus_of({GPU: 2}, {}, is_gpu) == 2
    assert gpus_of({"nvidia.com/mig-3g.20gb": 1, "nvidia.com/mig-1g.5gb": 2}, {}, is_gpu) == pytest.approx(
        5 / 7
    )
    assert gpus_of({"example.com/dongle": 3, "cpu": 2}, {}, is_gpu) == 0


def test_holds_are_integrated_from_their_events_including_one_between_two_reads():
    ledger = Ledger()
    ledger.hold(("team-a", "p"), A, 2, at=0)
    ledger.hold(("team-b", "s"), B, 0.25, at=0)
    assert ledger.held(3600) == {A: 7200, B: 900}
    ledger.hold(("team-b", "c"), B, 1, at=4000)  # 20 minutes, never seen by a read
    ledger.release(("team-b", "c"), at=5200)
    ledger.release(("team-a", "p"), at=3 * 3600)
    held = ledger.held(4 * 3600)
    assert held[A] / 3600 == pytest.approx(6.0)  # 2 GPUs for 3 h
    assert held[B] / 3600 == pytest.approx(1.0 + 1 / 3)  # a quarter for 4 h, 1 for 20 min


def test_the_totals_never_go_down_and_a_change_of_what_is_held_closes_the_hold_before():
    ledger = Ledger()
    ledger.hold("p", A, 1, at=0)
    seen = [ledger.held(t)[A] for t in (10, 20)]
    ledger.hold("p", A, 2, at=20)  # resized
    ledger.hold("p", A, 2, at=25)  # the same hold seen again: nothing moves
    seen += [ledger.held(t)[A] for t in (20, 30)]
    ledger.release("p", at=30)
    ledger.release("p", at=40)  # released twice
    seen.append(ledger.held(50)[A])
    assert seen == [10, 20, 20, 40, 40] and list(ledger.holding()) == []


def test_accounts_past_the_bound_fold_into_their_teams_other():
    ledger = Ledger(most=2)
    for i in range(4):
        ledger.hold(i, Account("ns", "", "Job", f"j{i}", "a"), 1, at=0)
    held = ledger.held(10)
    assert len(held) == 3 and held[Account("", "", OTHER, "", "a")] == 20 and ledger.folded == 2
    assert sum(held.values()) == 40


def test_each_window_spans_whole_days_and_never_past_now():
    from datetime import UTC, datetime

    from app.domain.ledger_query import LedgerQuery, parse

    now = datetime(2026, 12, 9, 15, 30, tzinfo=UTC)  # a Wednesday
    spans = {
        w: LedgerQuery("team", w, 3).span(now)
        for w in ("today", "yesterday", "this-week", "last-week", "this-month", "last-month", "days")
    }
    day = datetime(2026, 12, 9, tzinfo=UTC)
    assert spans["today"] == (day, now) and spans["yesterday"] == (datetime(2026, 12, 8, tzinfo=UTC), day)
    assert spans["this-week"] == (datetime(2026, 12, 7, tzinfo=UTC), now)
    assert spans["last-week"] == (datetime(2026, 11, 30, tzinfo=UTC), datetime(2026, 12, 7, tzinfo=UTC))
    assert spans["last-month"] == (datetime(2026, 11, 1, tzinfo=UTC), datetime(2026, 12, 1, tzinfo=UTC))
    assert spans["days"] == (datetime(2026, 12, 7, tzinfo=UTC), now)
    assert parse({"window": "fortnight", "by": "pod", "days": "x"})[1].keys() == {"window", "by"}
    assert parse({"window": "days", "days": "\uff19"})[1]["days"].startswith("Days: '\uff19'")


def test_each_usage_read_splits_the_time_held_since_the_last_into_used_and_idle():
    ledger = Ledger()
    ledger.hold("p", A, 2, at=0)
    ledger.hold("q", B, 1, at=0)
    busy = {"p": 75.0}  # q is not named by the exporter
    ledger.busy(busy.get, at=600)
    busy["p"] = 0.0
    ledger.busy(busy.get, at=1200)
    ledger.release("p", at=1500)
    ledger.busy(busy.get, at=1800)  # p released: nothing more of it
    used, idle = ledger.used()
    assert used == {A: 2 * 600 * 0.75} and idle == {A: 2 * 600 * 0.25 + 2 * 600}
    assert B not in used and B not in idle  # not reported: neither, never 0


def test_the_page_groups_name_folded_accounts_other():
    from app.domain.ledger_query import LedgerQuery, rows

    held = {Account("", "", OTHER, "", "a"): 3600.0, Account("ns", "", "Job", "j", "a"): 7200.0}
    assert [(r.group, r.hours) for r in rows(held, LedgerQuery("workload"))] == [
        ("ns Job/j", 2.0),
        ("other", 1.0),
    ]


def test_costs_price_each_model_and_say_not_known_where_one_is_unpriced():
    from app.domain.ledger_query import costs

    hours = {("a", "A100"): 2.0, ("a", "T4"): 1.0, ("b", "T4"): 4.0, ("c", "H100"): 1.0}
    assert costs(hours, {"A100": 3.0, "T4": 0.5}) == {"a": 6.5, "b": 2.0, "c": None}
    assert costs(hours, {"A100": 3.0, "*": 1.0}) == {"a": 7.0, "b": 4.0, "c": 1.0}
    assert costs(hours, None) == {"a": None, "b": None, "c": None}
