"""The wheel's package list names every folder of templates/ (setuptools ships a folder's files
only when the folder is a listed package, and silently leaves out the rest)."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def test_every_template_folder_is_a_listed_package_with_its_files():
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {p for p in (ROOT / "templates").rglob("*") if p.is_dir()} | {ROOT / "templates"}
    for folder in folders:
        package = ".".join(("app", *folder.relative_to(ROOT).parts))
        assert package in tool["packages"], package
        assert tool["package-data"][package] == ["*.html"], package
