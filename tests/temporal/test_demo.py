"""The quickstart's demo runs end to end: pause, signal, final state."""

from __future__ import annotations

import pytest


async def test_demo_pauses_and_resumes_by_signal(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from examples import demo

    monkeypatch.setenv("GRAPHRUN_DEMO_UI", "0")
    final = await demo.main()
    out = capsys.readouterr().out
    assert "is paused and waits for a human" in out
    assert "Approve this purchase?" in out
    assert final["status"] == "charged"
