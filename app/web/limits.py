"""What one worker's requests may spend, whichever cluster they read: failed sign-ins per client
and per token, What-if plans per user, and the write slots (threads a write may hold, so that
writes never take every thread from the pages)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from app.web.plan_limits import PlanLimits
from app.web.sign_in_limits import SignInLimits


@dataclass(frozen=True)
class Limits:
    write_slots: threading.BoundedSemaphore
    plans: PlanLimits
    sign_ins: SignInLimits = field(default_factory=SignInLimits)

    @classmethod
    def for_threads(cls, threads: int, plans_per_minute: int) -> Limits:
        return cls(threading.BoundedSemaphore(max(1, threads - 2)), PlanLimits(plans_per_minute))
