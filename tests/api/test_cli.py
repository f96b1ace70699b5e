"""The `loyalty` console script: --help on every verb, a clear error on a bad setting."""

from __future__ import annotations

import pytest

from loyalty_api.cli import main


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["serve", "--help"],
        ["worker", "--help"],
        ["db", "--help"],
        ["db", "upgrade", "--help"],
        ["db", "revision", "--help"],
    ],
)
def test_every_verb_has_help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 0
    assert "usage: loyalty" in capsys.readouterr().out


def test_a_bad_setting_exits_2_naming_it(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("LOYALTY_PORT", "not-a-port")
    assert main(["db", "upgrade"]) == 2
    assert "LOYALTY_PORT" in capsys.readouterr().err
