"""Inter-pod affinity, anti-affinity and topology spread, case by case as kube-scheduler's
InterPodAffinity and PodTopologySpread filters decide them (the agreement harness checks the
same against the real scheduler)."""

from __future__ import annotations

import pytest

from app.domain.fit import NodeFacts, PodShape, Term
from app.domain.fit import Requirement as R
from app.domain.pod_affinity import (
    AFFINITY,
    ANTI,
    EXISTING_ANTI,
    NAMESPACE_SELECTOR,
    SPREAD,
    SPREAD_LABEL,
    Placed,
    PodTerms,
    TermError,
    decide,
    merge_label_keys,
    pod_term,
    spread,
)

HOST, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"
SHAPE = PodShape({"cpu": 100})


def node(name: str, zone: str | None = "a", **labels: str) -> NodeFacts:
    full = {HOST: name, **({ZONE: zone} if zone else {}), **labels}
    return NodeFacts(name, full, {"cpu": 4000, "pods": 10}, {})


def term(key: str = HOST, selector: dict | None = None, **extra) -> dict:
    return {
        "topologyKey": key,
        "labelSelector": {"matchLabels": {"app": "db"}} if selector is None else selector,
        **extra,
    }


def blocked(
    terms: PodTerms, neighbours, labels=None, namespace="default", nodes=None, shape=SHAPE
) -> dict[str, str]:
    nodes = nodes or [node("n1", "a"), node("n2", "a"), node("n3", "b")]
    verdict = decide(
        shape, namespace, labels if labels is not None else {"app": "db"}, terms, nodes, neighbours
    )
    return {name: f.reason for name, f in verdict.blocked.items()}


def test_a_placed_pods_anti_affinity_bars_its_whole_domain_to_the_pods_it_selects():
    db = Placed("n1", "default", {"app": "db"}, (pod_term(term(ZONE), "t"),))
    assert blocked(PodTerms(), [db]) == {"n1": EXISTING_ANTI, "n2": EXISTING_ANTI}
    assert blocked(PodTerms(), [db], labels={"app": "web"}) == {}
    assert blocked(PodTerms(), [db], namespace="other") == {}  # its term's namespace is its own


def test_the_pods_own_anti_affinity_and_a_node_without_the_key():
    terms = PodTerms(anti_affinity=(pod_term(term(ZONE), "t"),))
    db = Placed("n3", "default", {"app": "db"})
    nodes = [node("n1", "a"), node("n2", None), node("n3", "b")]
    assert blocked(terms, [db], nodes=nodes) == {"n3": ANTI}  # n2 has no zone: no domain to avoid


def test_affinity_needs_a_matching_pod_in_the_domain_or_is_the_first_of_its_group():
    terms = PodTerms(affinity=(pod_term(term(ZONE), "t"),))
    db = Placed("n3", "default", {"app": "db"})
    assert blocked(terms, [db]) == {"n1": AFFINITY, "n2": AFFINITY}
    # nobody matches yet, and the pod matches its own term: it may go anywhere with the key
    nodes = [node("n1", "a"), node("n2", None)]
    assert blocked(terms, [], nodes=nodes) == {"n2": AFFINITY}
    # ... but not when it does not match its own term
    assert blocked(terms, [], labels={"app": "web"}, nodes=nodes) == {"n1": AFFINITY, "n2": AFFINITY}


def test_term_namespaces_a_missing_selector_and_every_namespace():
    every = pod_term(term(HOST, namespaceSelector={}), "t")
    listed = pod_term(term(HOST, namespaces=["x"]), "t")
    nothing = pod_term({"topologyKey": HOST}, "t")
    for t, where, expected in (
        (every, "y", True),
        (listed, "x", True),
        (listed, "default", False),
        (nothing, "default", False),
    ):
        assert t.matches("default", where, {"app": "db"}) is expected, (t, where)
    labelled = pod_term(term(HOST, namespaceSelector={"matchLabels": {"team": "a"}}), "t")
    assert PodTerms(affinity=(labelled,)).undecided == (NAMESPACE_SELECTOR,)


def test_spread_counts_matching_pods_per_domain_against_the_smallest():
    c = spread(
        {
            "maxSkew": 1,
            "topologyKey": ZONE,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "db"}},
        },
        "c",
    )
    assert c is not None
    terms = PodTerms(spread=(c,))
    placed = [Placed("n1", "default", {"app": "db"}), Placed("n2", "default", {"app": "db"})]
    assert blocked(terms, placed) == {"n1": SPREAD, "n2": SPREAD}  # a has 2, b 0: a would be 3 - 0
    # terminating pods and other namespaces are not counted
    gone = [Placed("n1", "default", {"app": "db"}, terminating=True), Placed("n2", "other", {"app": "db"})]
    assert blocked(terms, gone) == {}
    # a node without the key is refused; a pod not matching its own selector adds nothing
    nodes = [node("n1", "a"), node("n2", None), node("n3", "b")]
    assert blocked(terms, placed[:1], labels={"app": "web"}, nodes=nodes) == {"n2": SPREAD_LABEL}


def hard(**extra) -> PodTerms:
    raw = {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}
    c = spread({**raw, "labelSelector": {"matchLabels": {"app": "db"}}, **extra}, "c")
    assert c is not None
    return PodTerms(spread=(c,))


def test_spread_min_domains_and_the_node_affinity_policy():
    placed = [Placed("n1", "default", {"app": "db"}), Placed("n3", "default", {"app": "db"})]
    assert blocked(hard(), placed) == {}  # 1 in each zone: 1 + 1 - 1
    # fewer domains than minDomains: the smallest counts as 0, so 1 + 1 - 0 > 1 everywhere
    assert blocked(hard(minDomains=3), placed) == {"n1": SPREAD, "n2": SPREAD, "n3": SPREAD}
    # the pod selects zone b only: zone a is not counted (Honor), and b's 1 + 1 - 1 fits
    only_b = PodShape({"cpu": 100}, affinity=(Term((R(ZONE, "In", ("b",)),)),))
    one = placed[1:]
    assert blocked(hard(), one, shape=only_b) == {}
    # with Ignore, zone a's 0 is the smallest: b's 1 + 1 - 0 > 1
    assert blocked(hard(nodeAffinityPolicy="Ignore"), one, shape=only_b) == {"n3": SPREAD}


def test_schedule_anyway_is_scoring_and_bad_constraints_are_refused():
    assert spread({"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"}, "c") is None
    with pytest.raises(TermError, match="maxSkew"):
        spread({"maxSkew": 0, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}, "c")
    with pytest.raises(TermError, match="topologyKey"):
        pod_term({"labelSelector": {}}, "t")


def test_match_label_keys_are_merged_with_the_pods_own_values():
    raw = term(HOST, matchLabelKeys=["rev"], mismatchLabelKeys=["team"])
    merged = merge_label_keys(raw, {"rev": "7", "team": "a"}, "t")
    assert "matchLabelKeys" not in merged and "mismatchLabelKeys" not in merged
    t = pod_term(merged, "t")
    assert t.matches("default", "default", {"app": "db", "rev": "7", "team": "b"})
    assert not t.matches("default", "default", {"app": "db", "rev": "6", "team": "b"})
    assert not t.matches("default", "default", {"app": "db", "rev": "7", "team": "a"})


def test_a_label_key_also_in_the_selector_is_refused_as_the_api_server_does():
    with pytest.raises(TermError, match="'app'"):
        merge_label_keys(term(HOST, matchLabelKeys=["app"]), {"app": "db"}, "t")


def test_an_empty_spread_selector_counts_no_pod_but_the_pod_matches_it():
    """kube-scheduler's countPodsMatchSelector counts nothing for an empty selector ({}): zone a's
    five pods do not count, so the pod (1 - 0 <= 1) goes anywhere with the key."""
    c = spread(
        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {}}, "c"
    )
    assert c is not None
    placed = [Placed("n1", "default", {"app": "db"}) for _ in range(5)]
    assert blocked(PodTerms(spread=(c,)), placed) == {}
