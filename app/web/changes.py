"""Forms that add, change and remove extended resources on one node (``bulk_changes`` adds the
forms over many nodes to the same blueprint).

Each form is a plain POST form with post/redirect/get; htmx boosts the same
forms. Input is validated here before any API call; a refused input changes
nothing and is answered with 422 and a message next to the field.
"""

from __future__ import annotations

from flask import abort, flash, render_template, request, url_for
from werkzeug.wrappers import Response

from app.domain.changes import (
    ChangeError,
    Impact,
    impact,
    moved,
    validate_remove,
    validate_resource,
    validate_set,
)
from app.domain.names import is_dns_label, is_dns_subdomain
from app.kube.api.writer import NodeWriter, Outcome
from app.kube.wire.projections import NodeView
from app.runtime import reads
from app.web import security
from app.web.hx import NODES_AND_PODS, redirect, typed
from app.web.security import identity
from app.web.surface import Page
from app.web.viewer import viewer

bp = Page("changes", __name__, url_prefix="/changes", reads=NODES_AND_PODS, when="writes")


def actor() -> str:
    """Who is making the change, for Events and the audit log."""
    return identity().label


def writer() -> NodeWriter:
    return viewer().runtime.cluster.writer_for(identity(), security.who())


def _node_or_404(name: str) -> NodeView:
    node = reads.node_view(viewer().runtime, name)
    if node is None:
        abort(404, description=f"There is no node named {name!r}.")
    return node


def node_impact(name: str, resource: str, after: int | None) -> Impact:
    """Who requests ``resource`` on ``name`` and what setting it to ``after`` (None: removing
    it) would leave over-committed."""
    pods = reads.holders_on(viewer().runtime, name)
    return impact(
        name, resource, after, ((f"{p.namespace}/{p.name}", p.requests.get(resource, 0)) for p in pods)
    )


def current_amount(node: NodeView, resource: str) -> str:
    """What the node's status says of ``resource`` now, for a refusal to state."""
    now = node.capacity.get(resource[:253])
    return (
        f"{node.name}'s status has {now} now." if now is not None else f"{node.name}'s status has none of it."
    )


def _finish(node: str, outcome: Outcome) -> Response | tuple[str, int]:
    """Written: the node page says what changed. Refused by the API server: why (its history
    entry, set by the caller, is the form it came from, to fix and send again)."""
    if outcome.ok:
        flash(f"{node}: {outcome.message}.", "ok")
        return redirect(url_for("nodes.detail", name=node), code=303)
    return render_template("changes/failed.html", node=node, outcome=outcome), outcome.status


# ---- one node -----------------------------------------------------------------
SET_FIELDS = ("resource", "quantity", "expected")


def new(name: str) -> str:
    node = _node_or_404(name)
    if request.args.get("check") == "1":  # a Save's answer, again: Back, Forward or Reload to it
        return _answer(node, typed(*SET_FIELDS))[0]  # as a 200: htmx's history restore swaps no 4xx
    resource = request.args.get("resource", "")
    return render_template(
        "changes/set.html",
        node=node,
        resource=resource,
        quantity=request.args.get("quantity", ""),
        expected=node.capacity.get(resource, ""),
        errors={},
        prompted=_prompted_by(request.args.get("pod", ""), resource),
    )


def _prompted_by(key: str, resource: str) -> dict[str, object] | None:
    """The pending pod whose advice led here (``pod=namespace/name``), as the form names it:
    what it asks of the resource, or that it no longer waits. Anything else is ignored."""
    namespace, _, name = key[:320].partition("/")
    if not (namespace and name and is_dns_label(namespace) and is_dns_subdomain(name)):
        return None
    pod = reads.pod(viewer().runtime, namespace, name)
    waiting = pod is not None and pod.unschedulable is not None
    asks = pod.extended_requests.get(resource) if pod is not None and waiting else None
    return {"key": f"{namespace}/{name}", "waiting": waiting, "asks": asks}


def set_resource(name: str) -> Response | tuple[str, int, dict[str, str]]:
    """A Save: written, and the node page; else the form again with why, at a GET URL of its own
    (``HX-Push-Url``: the form's values and ``check=1``), whose answer is this one again."""
    node = _node_or_404(name)
    values = {k: request.form.get(k, "") for k in SET_FIELDS}
    answer = _save(node, values, confirmed=request.form.get("confirm") == "over-commit")
    if isinstance(answer, Response):
        return answer
    return *answer, {"HX-Push-Url": _again(name, values)}


def _save(node: NodeView, values: dict[str, str], confirmed: bool) -> Response | tuple[str, int]:
    """Validated, asked first where the operator should see something, then written."""
    try:
        resource, count, expected = _validated_set(node.name, values)
    except ChangeError as exc:
        return _set_form(node, values, errors=exc.errors, status=422)
    first = _ask_first(node, {**values, "resource": resource}, count, expected, confirmed)
    if first is not None:
        return first
    outcome = writer().set(node.name, resource, count, expected, actor())
    if outcome.status == 409:
        return _changed_meanwhile(node, values, outcome.old, outcome.message)
    return _finish(node.name, outcome)


def _again(name: str, values: dict[str, str]) -> str:
    """The GET URL whose answer is a Save's answer to ``values`` (its history entry)."""
    r, q, e = (values[k] for k in SET_FIELDS)
    return url_for("changes.new", name=name, resource=r, quantity=q, expected=e, check="1")


def _answer(node: NodeView, values: dict[str, str]) -> tuple[str, int]:
    """What a Save of ``values`` answers without writing, decided on the node as now known: the
    refusal, the notice, the conflict or the over-commitment to confirm; else the form, filled."""
    try:
        resource, count, expected = _validated_set(node.name, values)
    except ChangeError as exc:
        return _set_form(node, values, errors=exc.errors, status=422)
    now = node.capacity.get(resource)
    if now == count:  # Back onto a notice or a conflict after the Save it led to: done, not asked
        notice = f"{resource} on {node.name} is {count} now, as this form asks: nothing to change."
        return _set_form(node, {**values, "resource": resource, "expected": str(now)}, notice=notice)
    if expected is not None and now != expected:
        return _changed_meanwhile(node, values, now, moved(resource, node.name, expected, now))
    first = _ask_first(node, {**values, "resource": resource}, count, expected, False)
    return first or _set_form(node, values)


def _validated_set(name: str, values: dict[str, str]) -> tuple[str, int, int | None]:
    """The set form's resource, count and expected value; ChangeError naming each bad field."""
    return validate_set(
        *values.values(),
        maximum=viewer().runtime.settings.max_quantity,
        owner=lambda r: reads.read_only(viewer().runtime, r, name),  # as the scheduler sees it on this node
    )


def _ask_first(
    node: NodeView, values: dict[str, str], count: int, expected: int | None, confirmed: bool
) -> tuple[str, int] | None:
    """The form again, with nothing written, when the operator should see something first: the
    add form names a resource the node already advertises (a change from its current value,
    not a conflict), or a decrease that pods here already exceed (said, and confirmed)."""
    resource = values["resource"]
    if expected is None and resource in node.capacity:
        current = node.capacity[resource]
        notice = (
            f"{node.name} already advertises {resource}: currently {current}. Save to change it to {count}."
        )
        return _set_form(node, {**values, "expected": str(current)}, notice=notice)
    if expected is not None and count < expected and not confirmed:
        cut = node_impact(node.name, resource, count)
        if cut.over:
            return _set_form(node, values, impact=cut)
    return None


def _changed_meanwhile(node: NodeView, values: dict[str, str], now: int | None, msg: str) -> tuple[str, int]:
    """Changed by someone else since the page was read: the typed values stay, with what is there
    now as the expected value, so a second Save is a decision made on the new value."""
    shown = "" if now is None else str(now)
    return _set_form(node, {**values, "expected": shown}, errors={"expected": msg}, status=409)


def _set_form(
    node: NodeView,
    values: dict[str, str],
    *,
    errors: dict[str, str] | None = None,
    notice: str = "",
    impact: Impact | None = None,
    status: int = 200,
) -> tuple[str, int]:
    html = render_template(
        "changes/set.html",
        node=node,
        resource=values.get("resource", ""),
        quantity=values.get("quantity", ""),
        expected=values.get("expected", ""),
        errors=errors or {},
        notice=notice,
        impact=impact,
    )
    return html, status


def confirm_remove(name: str) -> str | Response:
    state = viewer().runtime
    node = _node_or_404(name)
    resource = request.args.get("resource", "")
    if msg := validate_resource(resource, lambda r: reads.read_only(state, r, name)):
        abort(422, description=msg)
    if resource not in node.capacity:
        # Forward or Reload after the remove, or someone else's: the node page says how it is now
        flash(f"{name} does not advertise {resource}: nothing is left to remove.", "info")
        return redirect(url_for("nodes.detail", name=name), code=303)
    return render_template(
        "changes/remove.html", node=node, resource=resource, impact=node_impact(name, resource, None)
    )


def remove_resource(name: str) -> Response | tuple[str, int, dict[str, str]]:
    node = _node_or_404(name)
    form = request.form
    try:
        resource, expected = validate_remove(
            form.get("resource", ""),
            form.get("expected"),
            lambda r: reads.read_only(viewer().runtime, r, name),
        )
    except ChangeError as exc:
        abort(
            422, description=" ".join([*exc.errors.values(), current_amount(node, form.get("resource", ""))])
        )
    answer = _finish(name, writer().remove(name, resource, expected, actor()))
    again = {"HX-Push-Url": url_for("changes.confirm_remove", name=name, resource=resource)}
    return answer if isinstance(answer, Response) else (*answer, again)
