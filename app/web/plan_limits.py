"""How many What-if plans one user may ask for: each costs up to half a second of the worker's
CPU (every node weighed), so one user's script must not take the worker from everyone.

Counted in a moving window (app/base/rate_window.py, as sign-ins are: app/web/sign_in_limits.py), per
verified user (per client address in service-account mode,
where everyone is the app)."""

from __future__ import annotations

from app.base.rate_window import MovingWindow

PER_USER = 30  # plans a minute


class PlanLimits:
    def __init__(self, per_user: int = PER_USER) -> None:
        self.per_user = per_user
        self._window = MovingWindow()

    def spent(self, who: str) -> str | None:
        """Count one plan for ``who``; why it waits when past the limit, else None."""
        if self._window.hit(self.per_user, "plan", who):
            return None
        return f"More than {self.per_user} plans in the last minute: wait a moment. Nothing was planned."
