"""graphrun/_lc_private.py: the one module that reads langchain-core's, langsmith's and
langchain's private names, checked against a pinned range."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from graphrun import _lc_private

ROOT = Path(__file__).resolve().parents[2]


def test_the_installed_versions_are_the_supported_ones() -> None:
    assert _lc_private._in(_lc_private.CORE_INSTALLED, _lc_private.LANGCHAIN_CORE)
    assert _lc_private._in(_lc_private.LANGSMITH_INSTALLED, _lc_private.LANGSMITH)


@pytest.mark.parametrize("installed", ["1.9.0", "1.3.9", "2.0.1", "0.3.80"])
def test_a_langchain_core_outside_the_range_is_refused_by_name(monkeypatch: Any,
                                                              installed: str) -> None:
    monkeypatch.setattr(_lc_private, "version", lambda package: installed)
    with pytest.raises(ImportError, match=re.escape(
            f"graphrun supports langchain-core>=1.4,<1.9; langchain-core {installed} is "
            f"installed")):
        _lc_private.check("langchain-core", _lc_private.LANGCHAIN_CORE)


def test_one_outside_the_range_stops_graphrun_at_import() -> None:
    """Loudly, at `import graphrun`: not callbacks silently off."""
    code = ("import importlib.metadata as m\n"
            "real = m.version\n"
            "m.version = lambda p: '1.9.0' if p == 'langchain-core' else real(p)\n"
            "import graphrun\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    assert out.returncode != 0
    assert "graphrun supports langchain-core>=1.4,<1.9" in out.stderr


def test_pyproject_pins_the_checked_ranges() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {"langchain-core": "langchain-core>=1.4,<1.9", "langsmith": "langsmith>=0.3,<1"}
    found = [r for extra in project["optional-dependencies"].values() for r in extra
             if re.match(r"(langchain-core|langsmith)\b", r)]
    assert found and all(r == wanted[re.split(r"[<>=]", r)[0]] for r in found), found


def test_every_name_is_there() -> None:
    assert issubclass(_lc_private.V2StreamingCallbackHandler, object)
    assert _lc_private.astream_events_handler().__name__ == "_AstreamEventsCallbackHandler"
    events = list(_lc_private.message_to_events(AIMessage(content="hi", id="m1")))
    assert events[0]["event"] == "message-start"
    token, previous = _lc_private.set_config_context({"tags": ["t"]})
    from langchain_core.runnables.config import var_child_runnable_config

    assert var_child_runnable_config.get()["tags"] == ["t"]
    var_child_runnable_config.reset(token)
    if previous is not None:
        _lc_private.restore_tracing_context(previous)
    assert "openai" in _lc_private.embedding_providers()


def _private_reads(source: str) -> list[str]:
    """The private names (or modules) of langchain-core, langsmith or langchain that
    `source` imports."""
    found = []
    for m in re.finditer(r"from ((?:langchain_core|langsmith|langchain)(?:\.\w+)*) import "
                         r"(\([^)]*\)|[^\n]*)", source):
        module, names = m.group(1), m.group(2).strip("()")
        imported = [n.split(" as ")[0].strip() for n in names.split(",") if n.strip()]
        found += [f"{module}.{n}" for n in imported
                  if n.startswith("_") or any(p.startswith("_") for p in module.split("."))]
    found += re.findall(r"import ((?:langchain_core|langsmith|langchain)\.[\w.]*\._\w+)",
                        source)
    return found


def test_the_private_read_finder_finds_them() -> None:
    assert _private_reads("from langchain_core.tracers._streaming import X\n"
                          "from langsmith.run_helpers import (\n    a,\n    _b,\n)\n"
                          "from langchain_core.runnables import Runnable as _R\n") == [
        "langchain_core.tracers._streaming.X", "langsmith.run_helpers._b"]


def test_no_other_module_reads_their_private_names() -> None:
    found = [f"{p.relative_to(ROOT)}: {name}"
             for folder in ("graphrun", "activities", "workflows")
             for p in sorted((ROOT / folder).rglob("*.py"))
             if p.name != "_lc_private.py"
             for name in _private_reads(p.read_text())]
    assert found == []
