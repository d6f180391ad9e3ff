"""Compiled templates kept between starts (app/web/template_cache.py): a second start compiles
nothing, an edited template is compiled again, a read-only cache is read, and a cache another
user could write is never used (its entries are code the app would run)."""

from __future__ import annotations

import os

import jinja2

from app import create_app
from app import fill_template_cache as fill
from app.web import compile_templates
from app.web.template_cache import KeptTemplates, template_cache


def _app(directory: object) -> object:
    return create_app({"template_cache": str(directory), "in_cluster": "false", "start_watches": "false"})


def test_a_second_start_loads_every_template_without_compiling_one(tmp_path, monkeypatch):
    fill(str(tmp_path))
    assert len(list(tmp_path.iterdir())) == len(_app(tmp_path).jinja_env.list_templates(extensions=["html"]))

    def compiled(*args: object, **kwargs: object) -> None:
        raise AssertionError("compiled, not loaded from the cache")

    monkeypatch.setattr(jinja2.Environment, "_compile", compiled)
    compile_templates(_app(tmp_path))  # every template, none compiled


def test_an_edited_template_is_compiled_again(tmp_path):
    source, cache = tmp_path / "templates", tmp_path / "cache"
    source.mkdir()
    cache.mkdir()
    page = source / "page.html"

    def rendered() -> str:
        kept = KeptTemplates(str(cache))
        env = jinja2.Environment(loader=jinja2.FileSystemLoader(source), bytecode_cache=kept)
        return env.get_template("page.html").render()

    page.write_text("first")
    assert rendered() == "first"
    page.write_text("second")
    assert rendered() == "second"


def test_a_read_only_cache_is_read_and_never_written(tmp_path, monkeypatch):
    fill(str(tmp_path / "cache"))
    entries = sorted((tmp_path / "cache").iterdir())

    def read_only(*args: object, **kwargs: object) -> None:
        raise OSError(30, "Read-only file system")  # EROFS: the image's root filesystem

    monkeypatch.setattr(jinja2.bccache.tempfile, "NamedTemporaryFile", read_only)
    compile_templates(_app(tmp_path / "cache"))
    source = tmp_path / "templates"
    source.mkdir()
    (source / "new.html").write_text("not in the cache")
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(source), bytecode_cache=KeptTemplates(str(tmp_path / "cache"))
    )
    assert env.get_template("new.html").render() == "not in the cache"  # compiled in memory
    assert sorted((tmp_path / "cache").iterdir()) == entries


def test_a_cache_another_user_owns_or_others_could_write_is_not_used(tmp_path):
    theirs, shared = tmp_path / "theirs", tmp_path / "shared"
    theirs.mkdir()
    shared.mkdir(mode=0o700)
    shared.chmod(0o777)
    if os.getuid() == 0:
        os.chown(theirs, 54321, 54321)
        assert template_cache(str(theirs)) is None
    assert template_cache(str(shared)) is None
    assert template_cache("off") is None
    assert template_cache(str(tmp_path / "mine")) is not None
    assert (tmp_path / "mine").stat().st_mode & 0o777 == 0o700


def test_an_entry_that_is_a_link_or_another_users_or_writable_by_others_is_compiled_not_loaded(
    tmp_path, monkeypatch
):
    """Each entry is checked as it is opened: the directory being safe does not make its files so
    (a file planted before the directory was locked down, a link to one elsewhere)."""
    cache = tmp_path / "cache"
    fill(str(cache))
    entries = sorted(cache.iterdir())
    outside = tmp_path / "outside"
    outside.write_bytes(entries[0].read_bytes())
    entries[0].unlink()
    entries[0].symlink_to(outside)  # a link
    entries[1].chmod(0o666)  # writable by others
    if os.getuid() == 0:
        os.chown(entries[2], 54321, 54321)  # another user's
    loaded: list[str] = []
    original = jinja2.bccache.Bucket.load_bytecode

    def load(bucket, f):
        loaded.append(os.path.realpath(f.name) if isinstance(f.name, str) else "fd")
        return original(bucket, f)

    monkeypatch.setattr(jinja2.bccache.Bucket, "load_bytecode", load)
    compile_templates(_app(cache))
    assert len(loaded) == len(entries) - (3 if os.getuid() == 0 else 2)
