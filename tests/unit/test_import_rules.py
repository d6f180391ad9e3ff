"""The import rules by package, read from the import graph (grimp, import-linter's own): every
module of ``app`` belongs to one layer (a module under a package is placed by its package, so a
new one is covered by default; a new top-level module fails here until it is placed), a layer
imports only layers below it, and the third-party libraries with one owner are imported by that
owner alone. pyproject.toml's contracts stay for the rooms inside app.kube; these need no list
of modules kept by hand."""

from __future__ import annotations

import grimp
import pytest

# top to bottom; a layer may import itself and any layer below it, never one above
LAYERS: list[tuple[str, set[str]]] = [
    ("entry", {"app.cli"}),
    ("serving", {"app.serving"}),  # the server, its intake and worker, metrics listener, tuning
    ("the app", {"app"}),  # create_app and the worker's start and stop
    ("web", {"app.web"}),
    (
        "runtime",
        {"app.fleet", "app.fleet_metrics", "app.runtime", "app.reads"},
    ),  # what runs per cluster, and its reads
    ("metrics", {"app.metrics", "app.node_metrics"}),
    ("kube, usage, selector sandbox", {"app.kube", "app.usage", "app.cel_sandbox"}),
    (
        "base",
        {
            "app.config",
            "app.settings_rules",
            "app.audit",
            "app.logs",
            "app.workers",
            "app.memo",
            "app.rate_window",
            "app.bounded_child",
            "app.identity_headers",
            "app.tallies",
        },
    ),
    ("domain", {"app.domain"}),
]
OWNERS = {  # a library, and the one package whose modules may import it
    "kubernetes": "app.kube",
    "prometheus_api_client": "app.usage",  # no module imports it now (bench/prometheus_query_client.py does)
    "requests": "app.usage",
    "gunicorn": "serving",
    "cel_expr_python": "app.domain",  # the native CEL runtime (app.domain.device_cel loads it)
}


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("app", include_external_packages=True)


def layer_of(module: str) -> int | None:
    """The index of the layer the module belongs to: by its longest placed prefix."""
    best: tuple[int, int] | None = None
    for index, (_, members) in enumerate(LAYERS):
        for member in members:
            # "app" is the package's own module; the others place everything under them
            inside = module == member or (member != "app" and module.startswith(member + "."))
            if inside and (best is None or len(member) > best[0]):
                best = (len(member), index)
    return None if best is None else best[1]


def own_modules(graph: grimp.ImportGraph) -> list[str]:
    return sorted(m for m in graph.modules if m == "app" or m.startswith("app."))


def test_every_module_of_the_app_belongs_to_a_layer(graph):
    unplaced = [m for m in own_modules(graph) if layer_of(m) is None]
    assert len(own_modules(graph)) > 100 and unplaced == []


def test_no_layer_imports_a_layer_above_it(graph):
    upward = []
    for importer in own_modules(graph):
        for imported in graph.find_modules_directly_imported_by(importer):
            if imported.split(".")[0] != "app":
                continue
            below, above = layer_of(importer), layer_of(imported)
            assert below is not None and above is not None
            if above < below:
                line = graph.get_import_details(importer=importer, imported=imported)
                upward.append(f"{importer} -> {imported} ({line[0]['line_contents'] if line else ''})")
    assert upward == []


@pytest.mark.parametrize("library", sorted(OWNERS))
def test_a_library_with_one_owner_is_imported_by_it_alone(graph, library):
    owner = OWNERS[library]
    allowed = next(members for name, members in LAYERS if name == owner) if owner == "serving" else {owner}
    if library not in graph.modules:
        pytest.skip(f"{library} is not imported at all")
    strays = [
        m
        for m in graph.find_modules_that_directly_import(library)
        if (m == "app" or m.startswith("app.")) and not any(m == a or m.startswith(a + ".") for a in allowed)
    ]
    assert strays == []


def test_the_rules_catch_what_they_forbid():
    """An import the layers forbid, and a module no layer places, are found."""
    assert layer_of("app.web.anything_new") == 3 and layer_of("app.domain.x") == len(LAYERS) - 1
    assert layer_of("app.something_new") is None
    assert layer_of("app.cel_sandbox") is not None and layer_of("app") == 2


def test_no_view_reaches_into_a_store_it_reads_through_the_read_model():
    """app/web reads what a page shows through app.reads (each read declaring what it depends on),
    never ``….store`` itself."""
    import ast
    from pathlib import Path

    web = Path(__file__).resolve().parents[2] / "app" / "web"
    reached = [
        f"{path.name}:{node.lineno}"
        for path in sorted(web.glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute) and node.attr == "store"
    ]
    assert reached == []
