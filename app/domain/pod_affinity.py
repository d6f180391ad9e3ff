"""Inter-pod affinity, anti-affinity and topology spread, decided for one pod over every node at
once, as kube-scheduler's InterPodAffinity and PodTopologySpread filters do (their PreFilter
counts, then Filter per node). Unlike the other filters, a node's answer depends on the pods on
the other nodes of its topology domain, so it is worked out per pod here and handed to the
per-node filters as ``NodeFacts.blocked``.

Hand-written from pkg/scheduler/framework/plugins/interpodaffinity and podtopologyspread, because
no library evaluates them:

* A term's namespaces: those it lists, or the owning pod's own when it lists none and has no
  namespace selector; an empty namespace selector (``{}``) means every namespace. A non-empty one
  needs the namespaces' labels, which are not read here: such a term is named, not decided.
* A term without a label selector matches no pod; ``{}`` matches every pod.
* Required anti-affinity of the pods already placed: a node in the same domain (the value of the
  term's topology key) as a pod whose term matches the new pod is refused.
* The new pod's anti-affinity: refused where its domain holds a pod a term matches. Its
  affinity: every term needs the node to carry the key and a matching pod in that domain, except
  that when no pod anywhere matches any term and the pod matches all its own terms, the first pod
  of such a group may go anywhere with the keys.
* Topology spread (``DoNotSchedule`` only; ``ScheduleAnyway`` is scoring): matching pods in the
  pod's namespace, not terminating, counted on the nodes that pass the pod's node selector and
  required node affinity (``nodeAffinityPolicy: Honor``, the default) and, with
  ``nodeTaintsPolicy: Honor``, its taints, and that carry every constraint's key (an empty
  selector, ``{}``, counts no pod, though the pod matches it itself). A node without
  the key is refused; otherwise the count of its domain, plus one if the pod matches its own
  selector, minus the smallest count over the domains (0 when fewer than ``minDomains``
  domains exist) may not pass ``maxSkew``.
* The pods counted are those the node's resources count (placed and not finished); terminating
  ones count for affinity, not for spread.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from app.domain.fit import Failure, NodeFacts, PodShape, Requirement, selects_node, untolerated
from app.domain.numbers import within

EXISTING_ANTI = "node(s) didn't satisfy existing pods anti-affinity rules"
AFFINITY = "node(s) didn't match pod affinity rules"
ANTI = "node(s) didn't match pod anti-affinity rules"
SPREAD = "node(s) didn't match pod topology spread constraints"
SPREAD_LABEL = SPREAD + " (missing required label)"
NAMESPACE_SELECTOR = "inter-pod affinity terms with a namespace selector (namespace labels are not read)"

Labels = Mapping[str, str]
Selector = tuple[Requirement, ...] | None  # None: matches no pod


class TermError(ValueError):
    """A term or constraint the API server would refuse: the field, in words."""


def selector(raw: Any, where: str) -> Selector:
    """A metav1.LabelSelector (matchLabels and matchExpressions) as requirements."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise TermError(f"{where} must be a mapping.")
    out = []
    labels = raw.get("matchLabels") or {}
    if not isinstance(labels, Mapping):
        raise TermError(f"{where}.matchLabels must be a mapping.")
    for k, v in labels.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TermError(f"{where}.matchLabels must map strings to strings.")
        out.append(Requirement(k, "In", (v,)))
    for e in raw.get("matchExpressions") or ():
        if not isinstance(e, Mapping):
            raise TermError(f"{where}.matchExpressions[] must be a mapping.")
        key, op, values = e.get("key"), e.get("operator"), e.get("values") or []
        if not isinstance(key, str) or op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            raise TermError(f"{where}.matchExpressions: a key and In, NotIn, Exists or DoesNotExist.")
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise TermError(f"{where}.matchExpressions values must be a list of strings.")
        if (op in ("In", "NotIn")) != bool(values):
            raise TermError(
                f"{where}.matchExpressions: In and NotIn take values, Exists and DoesNotExist none."
            )
        out.append(Requirement(key, op, tuple(values)))
    return tuple(out)


def selects(sel: Selector, labels: Labels) -> bool:
    return sel is not None and all(r.matches(labels.get(r.key)) for r in sel)


@dataclass(frozen=True, slots=True)
class PodTerm:
    """A required pod (anti-)affinity term, its namespaces not yet resolved against its pod's."""

    selector: Selector
    topology_key: str
    namespaces: tuple[str, ...] = ()
    every_namespace: bool = False  # namespaceSelector {}
    namespace_labels: bool = False  # a non-empty namespaceSelector: not decided here

    def matches(self, own_namespace: str, namespace: str, labels: Labels) -> bool:
        """Whether the term of a pod in ``own_namespace`` matches a pod in ``namespace``."""
        if not self.every_namespace:
            listed = self.namespaces or (() if self.namespace_labels else (own_namespace,))
            if namespace not in listed:
                return False  # (a namespace selector's labels: undecided, and named so)
        return selects(self.selector, labels)


def pod_term(raw: Any, where: str) -> PodTerm:
    if not isinstance(raw, Mapping):
        raise TermError(f"{where} must be a mapping.")
    key = raw.get("topologyKey")
    if not isinstance(key, str) or not key:
        raise TermError(f"{where}.topologyKey is required.")
    names = raw.get("namespaces") or []
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise TermError(f"{where}.namespaces must be a list of names.")
    ns_selector = raw.get("namespaceSelector")
    if ns_selector is not None and not isinstance(ns_selector, Mapping):
        raise TermError(f"{where}.namespaceSelector must be a mapping.")
    every = (
        ns_selector is not None
        and not ns_selector.get("matchLabels")
        and not ns_selector.get("matchExpressions")
    )
    return PodTerm(
        selector(raw.get("labelSelector"), f"{where}.labelSelector"),
        key,
        tuple(names),
        every,
        ns_selector is not None and not every,
    )


@dataclass(frozen=True, slots=True)
class Spread:
    """A topology spread constraint with ``whenUnsatisfiable: DoNotSchedule``."""

    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int = 1
    honor_affinity: bool = True  # nodeAffinityPolicy: Honor (the default)
    honor_taints: bool = False  # nodeTaintsPolicy: Ignore (the default)


def _at_least_one(value: Any, where: str) -> int:
    found = within(value, 1, 2**31 - 1)  # the API server's int32
    if found is None:
        raise TermError(f"{where} must be a whole number of at least 1.")
    return found


def spread(raw: Any, where: str) -> Spread | None:
    """The constraint, or None for ``ScheduleAnyway`` (scoring only)."""
    if not isinstance(raw, Mapping):
        raise TermError(f"{where} must be a mapping.")
    if raw.get("whenUnsatisfiable") != "DoNotSchedule":
        return None
    skew = _at_least_one(raw.get("maxSkew"), f"{where}.maxSkew")
    least = _at_least_one(raw.get("minDomains", 1), f"{where}.minDomains")
    key = raw.get("topologyKey")
    if not isinstance(key, str) or not key:
        raise TermError(f"{where}.topologyKey is required.")
    return Spread(
        skew,
        key,
        selector(raw.get("labelSelector"), f"{where}.labelSelector"),
        least,
        raw.get("nodeAffinityPolicy", "Honor") != "Ignore",
        raw.get("nodeTaintsPolicy", "Ignore") == "Honor",
    )


@dataclass(frozen=True, slots=True)
class PodTerms:
    """What of a pod these filters read: its required (anti-)affinity terms and hard spread."""

    affinity: tuple[PodTerm, ...] = ()
    anti_affinity: tuple[PodTerm, ...] = ()
    spread: tuple[Spread, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.affinity or self.anti_affinity or self.spread)

    @property
    def undecided(self) -> tuple[str, ...]:
        if any(t.namespace_labels for t in (*self.affinity, *self.anti_affinity)):
            return (NAMESPACE_SELECTOR,)
        return ()


NO_TERMS = PodTerms()


def merge_label_keys(raw: Mapping[str, Any], labels: Labels, where: str) -> dict[str, Any]:
    """A term or constraint as the API server stores it: ``matchLabelKeys`` (and, for affinity,
    ``mismatchLabelKeys``) merged into its label selector with the pod's values for the keys
    the pod carries (In, NotIn), the lists then dropped."""
    match, mismatch = raw.get("matchLabelKeys") or [], raw.get("mismatchLabelKeys") or []
    if not match and not mismatch:
        return dict(raw)
    for keys, name in ((match, "matchLabelKeys"), (mismatch, "mismatchLabelKeys")):
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise TermError(f"{where}.{name} must be a list of label keys.")
    out = {k: v for k, v in raw.items() if k not in ("matchLabelKeys", "mismatchLabelKeys")}
    sel = dict(out.get("labelSelector") or {})
    if out.get("labelSelector") is None:
        return out  # no selector: the keys are not merged (the term matches no pod)
    taken = {
        *(sel.get("matchLabels") or {}),
        *(e.get("key") for e in sel.get("matchExpressions") or () if isinstance(e, Mapping)),
    }
    if clash := sorted({*match, *mismatch} & taken) or sorted(set(match) & set(mismatch)):
        raise TermError(
            f"{where}: {clash[0]!r} is in both the label keys and the label selector (or in both key lists)."
        )
    exprs = list(sel.get("matchExpressions") or [])
    exprs += [{"key": k, "operator": "In", "values": [labels[k]]} for k in match if k in labels]
    exprs += [{"key": k, "operator": "NotIn", "values": [labels[k]]} for k in mismatch if k in labels]
    sel["matchExpressions"] = exprs
    out["labelSelector"] = sel
    return out


class Neighbour(Protocol):
    """A pod placed on a node, as these filters read it (a watched pod's view is one)."""

    @property
    def node_name(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    @property
    def labels(self) -> Labels: ...
    @property
    def anti_affinity(self) -> tuple[PodTerm, ...]: ...
    @property
    def terminating(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class Placed:
    """A neighbour given by value (tests, and pods not yet watched)."""

    node_name: str
    namespace: str
    labels: Labels
    anti_affinity: tuple[PodTerm, ...] = ()
    terminating: bool = False


@dataclass
class InterPod:
    """The two filters' verdict for one incoming pod: ``blocked`` maps each node they refuse to
    the reason (kube-scheduler runs PodTopologySpread before InterPodAffinity)."""

    blocked: dict[str, Failure] = field(default_factory=dict)
    undecided: tuple[str, ...] = ()
    one_per: tuple[str, ...] = ()  # topology keys the pod's anti-affinity allows one such pod per domain

    def applied(self, nodes: Iterable[NodeFacts]) -> list[NodeFacts]:
        """The nodes' facts with this verdict in them, and the existing pods' anti-affinity
        decided (not left to name)."""
        return [replace(n, blocked=self.blocked.get(n.name), repelling=0) for n in nodes]


def decide(
    shape: PodShape,
    namespace: str,
    labels: Labels,
    terms: PodTerms,
    nodes: Sequence[NodeFacts],
    neighbours: Iterable[Neighbour],
) -> InterPod:
    """The verdict for a pod of ``shape`` in ``namespace`` with ``labels`` and ``terms``,
    the ``neighbours`` placed as they are."""

    def eligible(node: NodeFacts, honor_affinity: bool, honor_taints: bool) -> bool:
        """A node topology spread counts on, as far as the constraint's policies ask."""
        if honor_affinity and not selects_node(shape, node):
            return False
        return not (honor_taints and untolerated(shape, node) is not None)

    by_name = {n.name: n for n in nodes}
    forbidden: set[tuple[str, str]] = set()  # (key, value) domains existing anti-affinity forbids
    wanted: list[dict[str, int]] = [{} for _ in terms.affinity]  # per term: domain value -> pods
    avoided: list[set[str]] = [set() for _ in terms.anti_affinity]  # per term: domain values
    matched_any = False
    keys = [c.topology_key for c in terms.spread]
    counted = [  # per constraint: the nodes it counts on, and the pods in each domain
        {
            n.name
            for n in nodes
            if all(k in n.labels for k in keys) and eligible(n, c.honor_affinity, c.honor_taints)
        }
        for c in terms.spread
    ]
    spread_counts: list[dict[str, int]] = [{} for _ in terms.spread]
    for pod in neighbours:
        node = by_name.get(pod.node_name)
        if node is None:
            continue
        for t in pod.anti_affinity:
            if t.topology_key in node.labels and t.matches(pod.namespace, namespace, labels):
                forbidden.add((t.topology_key, node.labels[t.topology_key]))
        for i, t in enumerate(terms.affinity):
            if t.topology_key in node.labels and t.matches(namespace, pod.namespace, pod.labels):
                value = node.labels[t.topology_key]
                wanted[i][value] = wanted[i].get(value, 0) + 1
                matched_any = True
        for i, t in enumerate(terms.anti_affinity):
            if t.topology_key in node.labels and t.matches(namespace, pod.namespace, pod.labels):
                avoided[i].add(node.labels[t.topology_key])
        if pod.terminating or pod.namespace != namespace:
            continue
        for i, c in enumerate(terms.spread):
            # an empty selector ({}) counts no pod (the scheduler's countPodsMatchSelector), though
            # the pod itself matches it
            if pod.node_name in counted[i] and c.selector and selects(c.selector, pod.labels):
                value = node.labels[c.topology_key]
                spread_counts[i][value] = spread_counts[i].get(value, 0) + 1
    least = []
    for i, c in enumerate(terms.spread):
        domains = {by_name[n].labels[c.topology_key] for n in counted[i]}
        fewest = min((spread_counts[i].get(d, 0) for d in domains), default=0)
        least.append(0 if len(domains) < c.min_domains else fewest)
    first_of_group = not matched_any and all(t.matches(namespace, namespace, labels) for t in terms.affinity)
    out = InterPod(undecided=terms.undecided)
    out.one_per = tuple(
        t.topology_key for t in terms.anti_affinity if t.matches(namespace, namespace, labels)
    )
    for node in nodes:
        if (reason := _spread_reason(node, terms.spread, spread_counts, least, labels)) is not None:
            out.blocked[node.name] = Failure("PodTopologySpread", reason)
        elif (
            reason := _affinity_reason(node, terms, forbidden, wanted, avoided, first_of_group)
        ) is not None:
            out.blocked[node.name] = Failure("InterPodAffinity", reason)
    return out


def _spread_reason(
    node: NodeFacts,
    constraints: tuple[Spread, ...],
    counts: list[dict[str, int]],
    least: list[int],
    labels: Labels,
) -> str | None:
    for i, c in enumerate(constraints):
        value = node.labels.get(c.topology_key)
        if value is None:
            return SPREAD_LABEL
        if counts[i].get(value, 0) + selects(c.selector, labels) - least[i] > c.max_skew:
            return SPREAD
    return None


def _affinity_reason(
    node: NodeFacts,
    terms: PodTerms,
    forbidden: set[tuple[str, str]],
    wanted: list[dict[str, int]],
    avoided: list[set[str]],
    first_of_group: bool,
) -> str | None:
    """InterPodAffinity's Filter: the pod's affinity, its anti-affinity, then the existing pods'."""
    if any(t.topology_key not in node.labels for t in terms.affinity):
        return AFFINITY
    if not first_of_group and any(
        not wanted[i].get(node.labels[t.topology_key]) for i, t in enumerate(terms.affinity)
    ):
        return AFFINITY
    for i, t in enumerate(terms.anti_affinity):
        if t.topology_key in node.labels and node.labels[t.topology_key] in avoided[i]:
            return ANTI
    if any((k, v) in forbidden for k, v in node.labels.items()):
        return EXISTING_ANTI
    return None
