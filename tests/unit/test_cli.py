"""The ``extres`` command's own behaviour (the dashboard it serves is tested elsewhere)."""

from __future__ import annotations

from app import cli


def test_a_ctrl_c_while_the_demo_starts_ends_with_a_line_not_a_traceback(monkeypatch, capsys):
    def interrupted(settings, state_dir):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_demo", lambda: interrupted)
    monkeypatch.setattr(cli.logs, "configure", lambda *a, **k: None)  # the process's logging stays as it is
    assert cli.main(["demo", "--port", "18099"]) == 130
    said = capsys.readouterr().err
    assert said == "extres: stopped (Ctrl-C)\n" and "Traceback" not in said
