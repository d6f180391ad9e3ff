"""What if: how many pods of a shape fit, where, and what to add for more. Reads the store only."""

from __future__ import annotations

from typing import Any

from flask import g, render_template, request
from werkzeug.exceptions import RequestEntityTooLarge

from app.domain.diagnosis import among_neighbours
from app.domain.manifest import MAX_MANIFEST, ManifestError, Planned, parse_manifest
from app.domain.names import likely_typos
from app.domain.plan_fields import count_field, parse_fields
from app.runtime import reads
from app.web import process
from app.web.hx import NODES_AND_PODS
from app.web.security import identity
from app.web.surface import Page
from app.web.viewer import viewer

bp = Page("plan", __name__, url_prefix="/plan", reads=NODES_AND_PODS)
SHOWN = 50  # nodes listed with their headroom
SHARE_LIMIT = 6000  # a manifest longer than this is not put in the shareable link


def _render(
    values: Any, planned: Planned | None, errors: dict[str, str], status: int = 200, ignored: str = ""
) -> tuple[str, int]:
    replicas = count_field(values, "replicas", "Replicas", errors)
    if replicas is None and planned is not None:
        replicas = planned.replicas
    per_node = count_field(values, "per_node", "At most per node", errors, " or empty")
    result = None
    if planned is not None and not errors and viewer().freshness.synced:  # else: until counted
        runtime = viewer().runtime
        wanted, around = replicas or 1, reads.surroundings(runtime)
        near, facts = reads.neighbours(
            runtime, planned.shape, planned.namespace, planned.labels, planned.terms
        )
        if near is None:  # nothing around it matters: the shape's kept index
            room, d = reads.shaped(
                runtime, planned.shape, lambda index: (index.headroom(), index.diagnosis(wanted, per_node))
            )
        else:
            room, d = among_neighbours(planned.shape, near, facts, wanted, per_node)
        result = {
            "room": room[:SHOWN],
            "nodes_with_room": len(room),
            "headroom": sum(n for _, n in room),
            "wanted": wanted,
            "d": d,
            "total": around.nodes,
            "wide": around.wide if near is None else 0,  # else weighed
            "featured": around.featured,
        }
    share = None
    if planned is not None and not errors:
        manifest = values.get("manifest", "")
        fields = {
            k: values.get(k, "") for k in ("requests", "selector", "tolerations", "replicas", "per_node")
        }
        if manifest and len(manifest) <= SHARE_LIMIT:
            share = {"manifest": manifest, "replicas": fields["replicas"], "per_node": fields["per_node"]}
        elif not manifest:
            share = fields
    html = render_template(
        "plan/index.html",
        values=values,
        planned=planned,
        errors=errors,
        result=result,
        share={k: v for k, v in (share or {}).items() if v} if share is not None else None,
        max_manifest=MAX_MANIFEST,
        ignored=ignored,
    )
    return (html, 422) if errors else (html, status)


FIELDS = ("requests", "selector", "tolerations")


def _plan(values: Any) -> tuple[str, int]:
    asks = any(k in values for k in (*FIELDS, "manifest", "replicas"))  # not the empty form
    if asks and (wait := process.of().limits.plans.spent(identity().user or f"address {g.client}")):
        html, _ = _render(values, None, {"requests": wait})
        return html, 429
    errors: dict[str, str] = {}
    planned = None
    given = [k for k in FIELDS if (values.get(k) or "").strip()]
    manifest = (values.get("manifest") or "").strip()
    if not manifest and not given and any(k in values for k in (*FIELDS, "manifest", "replicas")):
        errors["requests"] = (
            "Give the requests (e.g. example.com/dongle=2), or paste a manifest; nothing was planned."
        )
    try:
        if manifest:
            planned = parse_manifest(values["manifest"], viewer().runtime.cluster.admission.namespace)
        elif given:
            planned = Planned(
                parse_fields(
                    values.get("requests", ""), values.get("selector", ""), values.get("tolerations", "")
                ),
                None,
            )
    except ManifestError as exc:
        errors.update(exc.errors)
    if planned is not None and (typo := _misspelled(planned)):
        field = "manifest" if (values.get("manifest") or "").strip() else "requests"
        errors[field] = f"{typo} Nothing was planned."
    ignored = ""
    if manifest and given:
        ignored = f"The manifest was planned; what was given beside it ({', '.join(given)}) was not used."
    return _render(values, planned, errors, ignored=ignored)


def _misspelled(planned: Planned) -> str | None:
    """A requested extended resource nobody knows, when a known name is a likely typo of it ("No
    such resource 'example.com/dongel'; did you mean example.com/dongle?"). A name with no close
    match is planned: asking what a new resource would need is a fair question."""
    known = viewer().known_resources
    for name in sorted(planned.shape.extended):
        if name not in known and (close := likely_typos(name, known)):
            return f"No such resource {name[:80]!r}; did you mean {', '.join(close)}?"
    return None


def index() -> tuple[str, int]:
    return _plan(request.args)


def submit() -> tuple[str, int]:
    """The same, for a manifest too long for a link (up to the request size limit)."""
    try:
        form = request.form
    except RequestEntityTooLarge:
        return _render({}, None, {"manifest": f"The manifest is larger than {MAX_MANIFEST // 1024} KiB."})
    return _plan(form)


@bp.errorhandler(RequestEntityTooLarge)
def too_large(exc: RequestEntityTooLarge) -> tuple[str, int]:
    return _render({}, None, {"manifest": f"The manifest is larger than {MAX_MANIFEST // 1024} KiB."})
