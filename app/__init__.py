"""extres: a web dashboard for Kubernetes extended resources."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.settings.config import Settings

if TYPE_CHECKING:
    from flask import Flask

    from app.kube.api.ports import ClusterPort
    from app.usage.poller import Source

HERE = Path(__file__).resolve().parent


def bundled(name: str) -> Path:
    """A folder shipped with the app: inside the installed package (the wheel puts the
    checkout's top-level templates/, static/ and scripts/ there), else the checkout's own."""
    packaged = HERE / name
    return packaged if packaged.is_dir() else HERE.parent / name


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("extres")
    except PackageNotFoundError:  # a checkout that was never installed
        return "0+unknown"


def create_app(
    config: Settings | Mapping[str, Any] | None = None,
    *,
    cluster: ClusterPort | None = None,
    usage_source: Source | None = None,
) -> Flask:
    """Build the app. ``config``: Settings, or a mapping of overrides to the environment's;
    ``cluster``: what the pages read and write through (tests pass a fake), else one is
    connected, as the settings say, on first use."""
    from flask import Flask  # here, not at the top: gunicorn's master imports this package too

    settings = config if isinstance(config, Settings) else Settings.from_env(**dict(config or {}))
    app = Flask(
        __name__,
        template_folder=str(bundled("templates")),
        static_folder=str(bundled("static")),
    )
    app.config["SECRET_KEY"] = settings.secret_key
    app.config["SECRET_KEY_FALLBACKS"] = list(settings.previous_secret_keys)  # Flask 3.1+
    app.config["EXTRES"] = settings
    from app.web import init_app

    init_app(app, settings, cluster, usage_source)
    return app


def fill_template_cache(directory: str) -> None:
    """Compile every template into the cache at ``directory`` (the image does it when it is
    built: ``python -c 'from app import fill_template_cache; fill_template_cache("DIR")'``); the
    build step lives here, where the app is built, never in the web package it builds."""
    from app.web import compile_templates

    settings = {"template_cache": directory, "in_cluster": "false", "start_watches": "false"}
    compile_templates(create_app(settings))


def on_worker_start(app: Flask) -> None:
    """The served worker's start (app.serving calls it; the web package says what it does)."""
    from app.web import on_worker_start as start

    start(app)


def on_worker_stop(app: Flask) -> None:
    from app.web import on_worker_stop as stop

    stop(app)


def metrics_exposition(app: Flask) -> Callable[[], bytes]:
    from app.web import metrics_exposition as exposition

    return exposition(app)
