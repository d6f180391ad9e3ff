"""extres: a web dashboard for Kubernetes extended resources."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flask import Flask

from app.config import Settings

ROOT = Path(__file__).resolve().parent.parent


def create_app(config: Settings | Mapping[str, Any] | None = None) -> Flask:
    """Build the app. ``config``: Settings, or a mapping of overrides to the environment's."""
    settings = config if isinstance(config, Settings) else Settings.from_env(**dict(config or {}))
    app = Flask(
        __name__,
        template_folder=str(ROOT / "templates"),
        static_folder=str(ROOT / "static"),
    )
    app.config["SECRET_KEY"] = settings.secret_key
    app.config["EXTRES"] = settings
    from app.web import init_app

    init_app(app, settings)
    return app
