"""The fit model against the real kube-scheduler: seeded random clusters and pods.

CI runs 150 cases (``EXTRES_AGREEMENT_CASES`` changes it; ``bench/agreement.py`` runs 1,000);
``EXTRES_AGREEMENT_SEED`` replays a run. A disagreement prints the case as YAML.
"""

from __future__ import annotations

import os
import random

import pytest

from bench.agreement import run

pytestmark = [pytest.mark.kube, pytest.mark.scheduler, pytest.mark.compat]


def test_the_fit_model_agrees_with_the_scheduler(app, admin_api, scheduler):
    seed = int(os.environ.get("EXTRES_AGREEMENT_SEED") or random.SystemRandom().randrange(10**6))
    cases = int(os.environ.get("EXTRES_AGREEMENT_CASES", "150"))
    print(f"agreement seed {seed}")
    cache = app.extensions["extres"].cluster.cache
    report = run(admin_api, cache, cases, seed)
    print(report)
    assert report.cases == cases
    assert not report.failures, "\n---\n".join([str(report), *report.failures])
    assert report.undecided == 0  # the generator uses only modelled features
    assert report.bound and report.unschedulable  # both outcomes were exercised
