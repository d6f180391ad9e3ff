"""Settings read from the environment: a value that cannot be right stops the start with a
message naming the setting and what it takes."""

from __future__ import annotations

import pytest

from app.settings.config import Settings


@pytest.mark.parametrize("entry", ["10.0.0.0/8", "0.0.0.0/0", "fd00::/64", "not-an-address"])
def test_trusted_proxies_are_addresses_or_narrow_networks(entry):
    with pytest.raises(ValueError, match="EXTRES_TRUSTED_PROXIES"):
        Settings.from_env({"EXTRES_TRUSTED_PROXIES": f"127.0.0.1,{entry}"})


def test_a_proxy_address_and_a_24_are_trusted():
    found = Settings.from_env({"EXTRES_TRUSTED_PROXIES": "10.1.2.3,10.2.0.0/24,fd00::1/128"})
    assert found.trusted_proxies == ("10.1.2.3", "10.2.0.0/24", "fd00::1/128")


@pytest.mark.parametrize("days", ["0", "32"])
def test_history_days_past_the_stores_are_refused(days):
    with pytest.raises(ValueError, match=r"EXTRES_HISTORY_DAYS: expected an integer (<= 31|>= 1)$"):
        Settings.from_env({"EXTRES_HISTORY_DAYS": days})


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ({"EXTRES_IN_CLUSTER": "yes"}, "EXTRES_IN_CLUSTER: 'yes' is not one of auto, true, false$"),
        ({"EXTRES_PORT": "eighty"}, "EXTRES_PORT: expected an integer$"),
        ({"EXTRES_READ_ONLY": "perhaps"}, "EXTRES_READ_ONLY: expected true or false$"),
        (
            {"EXTRES_AUTH_MODE": "oidc"},
            "EXTRES_AUTH_MODE: 'oidc' is not one of service-account, impersonate, token$",
        ),
        ({"EXTRES_USAGE_MAPPINGS": "[1"}, "EXTRES_USAGE_MAPPINGS: is not JSON"),
        ({"EXTRES_PROMETHEUS_URL": "ftp://p"}, "EXTRES_PROMETHEUS_URL: must start with http:// or https://"),
        ({"EXTRES_HISTORY_STORE": "a/b/c"}, "EXTRES_HISTORY_STORE must be namespace/prefix or off"),
    ],
)
def test_a_wrong_value_is_refused_naming_its_setting(given, named):
    with pytest.raises(ValueError, match=named):
        Settings.from_env(given)


def test_overrides_are_converted_like_the_environment_and_unknown_keys_refused():
    """create_app({"trusted_proxies": "10.0.0.1"}) used to crash, port="80" stayed a string."""
    s = Settings.from_env({}, trusted_proxies="10.0.0.1, 10.0.1.0/24", port="80", read_only="false")
    assert (s.trusted_proxies, s.port, s.read_only) == (("10.0.0.1", "10.0.1.0/24"), 80, False)
    with pytest.raises(ValueError, match="EXTRES_TRUSTED_PROXY: is not a setting"):
        Settings.from_env({}, trusted_proxy="10.0.0.1")
    assert Settings.from_env({"EXTRES_KUBECONFIG": ""}).kubeconfig is None


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("EXTRES_SECRET_KEY", "x", "at least 32 bytes"),
        ("EXTRES_HISTORY_KEY", "short", "at least 32 bytes"),
        ("EXTRES_REQUEST_TIMEOUT", "nan", "expected a number > 0.0"),
        ("EXTRES_REQUEST_TIMEOUT", "0", "expected a number > 0.0"),
        ("EXTRES_SESSION_IDLE_MINUTES", "inf", "expected a number <= 10080"),
        ("EXTRES_IDLE_THRESHOLD_PERCENT", "nan", "expected a number >= 0"),
        ("EXTRES_THREADS", "0", "expected an integer >= 4"),
        ("EXTRES_LOG_LEVEL", "loud", "'LOUD' is not one of DEBUG, INFO, WARNING, ERROR"),
        ("EXTRES_PORT", "70000", "expected an integer <= 65535"),
        ("EXTRES_TRUSTED_PROXIES", "a,b", "'a' is not an address or a network"),
        ("EXTRES_FORWARDERS", "0.0.0.0/0,ingress", "'ingress' is not an address or a network"),
        ("EXTRES_CLUSTER_NAME", "Hub_1", "a DNS label"),
        ("EXTRES_CLUSTER_NAME", "hub\n", "a DNS label"),
        ("EXTRES_CLUSTERS_NAMESPACE", "../kube-system", "a namespace's name"),
        ("EXTRES_CLUSTERS_SELECTOR", "a=b&limit=1", "a label selector"),
        ("EXTRES_CLUSTERS_SELECTOR", "", "a label selector"),
        ("EXTRES_TEAM_LABEL", "team name", "a label key"),
        ("EXTRES_TEAM_LABEL", "a/b/c", "a label key"),
    ],
)
def test_a_bad_setting_stops_the_start_naming_its_variable(variable, value, said):
    with pytest.raises(ValueError) as caught:
        Settings.from_env({variable: value})
    assert variable in str(caught.value) and said in str(caught.value), str(caught.value)


def test_a_log_level_is_read_in_any_case():
    assert Settings.from_env({"EXTRES_LOG_LEVEL": "debug"}).log_level == "DEBUG"


def test_a_settings_repr_never_shows_a_key():
    s = Settings.from_env({"EXTRES_HISTORY_KEY": "h" * 40, "EXTRES_PREVIOUS_SECRET_KEYS": "p" * 40})
    shown = repr(s)
    assert s.secret_key not in shown and "h" * 40 not in shown and "p" * 40 not in shown
    assert "secret_key=<set>" in shown and "port=8080" in shown


def test_replaced_settings_are_checked_as_any_settings_are():
    s = Settings.from_env({})
    assert s.replaced(port="81").port == 81
    with pytest.raises(ValueError, match="EXTRES_PORT: expected an integer <= 65535"):
        s.replaced(port=70000)


SWITCH_WORDS = [("yes", True), ("Off", False), ("1", True), ("FALSE", False), ("on", True)]


@pytest.mark.parametrize(("word", "read_only"), SWITCH_WORDS)
def test_a_switch_takes_the_words_an_operator_writes(word, read_only):
    assert Settings.from_env({"EXTRES_READ_ONLY": word}).read_only is read_only


def test_a_huge_value_is_refused_with_a_bounded_message():
    for variable, value in (("EXTRES_LOG_LEVEL", "x" * 100_000), ("EXTRES_PORT", "9" * 5000)):
        with pytest.raises(ValueError) as caught:
            Settings.from_env({variable: value})
        said = str(caught.value)
        assert said.startswith(f"{variable}: ") and len(said) < 300, said[:400]


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("{", "EXTRES_GPU_PRICES: not JSON"),
        ("[1]", "a JSON object of at most 256 GPU models"),
        ('{"A100": -1}', "'A100': a price per GPU-hour of 0 or more, not '-1'"),
        ('{"A100": true}', "'A100': a price per GPU-hour of 0 or more"),
        ('{"": 1}', "a model's name of 1 to 128 characters"),
    ],
)
def test_gpu_prices_are_checked_naming_what_is_wrong(value, said):
    with pytest.raises(ValueError) as caught:
        Settings.from_env({"EXTRES_GPU_PRICES": value})
    assert said in str(caught.value)
    assert Settings.from_env({"EXTRES_GPU_PRICES": '{"A100": 2, "*": 1.5}'}).prices == {"A100": 2.0, "*": 1.5}
    with pytest.raises(ValueError, match="EXTRES_GPU_PRICE_CURRENCY"):
        Settings.from_env({"EXTRES_GPU_PRICE_CURRENCY": "dollars"})
