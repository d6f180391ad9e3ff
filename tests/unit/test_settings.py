"""Settings read from the environment: a value that cannot be right stops the start with a
message naming the setting."""

from __future__ import annotations

import pytest

from app.config import Settings


@pytest.mark.parametrize("entry", ["10.0.0.0/8", "0.0.0.0/0", "fd00::/64", "not-an-address"])
def test_trusted_proxies_are_addresses_or_narrow_networks(entry):
    with pytest.raises(ValueError, match="EXTRES_TRUSTED_PROXIES"):
        Settings.from_env({"EXTRES_TRUSTED_PROXIES": f"127.0.0.1,{entry}"})


def test_a_proxy_address_and_a_24_are_trusted():
    found = Settings.from_env({"EXTRES_TRUSTED_PROXIES": "10.1.2.3,10.2.0.0/24,fd00::1/128"})
    assert found.trusted_proxies == ("10.1.2.3", "10.2.0.0/24", "fd00::1/128")


@pytest.mark.parametrize("days", ["0", "32"])
def test_history_days_past_the_stores_are_refused(days):
    with pytest.raises(ValueError, match="EXTRES_HISTORY_DAYS must be 1 to 31"):
        Settings.from_env({"EXTRES_HISTORY_DAYS": days})
