"""How many What-if plans one user may ask for: each costs up to half a second of the worker's
CPU (every node weighed), so one user's script must not take the worker from everyone.

Counted with the `limits` library (as sign-ins are: app/web/sign_in_limits.py), in memory, per
process, in a moving window, per verified user (per client address in service-account mode,
where everyone is the app)."""

from __future__ import annotations

from limits import RateLimitItemPerMinute
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter

PER_USER = 30  # plans a minute


class PlanLimits:
    def __init__(self, per_user: int = PER_USER) -> None:
        self.per_user = per_user
        self._window = MovingWindowRateLimiter(MemoryStorage())
        self._item = RateLimitItemPerMinute(per_user)

    def spent(self, who: str) -> str | None:
        """Count one plan for ``who``; why it waits when past the limit, else None."""
        if self._window.hit(self._item, "plan", who):
            return None
        return f"More than {self.per_user} plans in the last minute: wait a moment. Nothing was planned."
