"""graphrun.loader: the one reader of "module:attr" and "./file.py:attr" references
(the CLI's --graph/--store/--cache and `graphrun graph`, langgraph.json's paths)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from graphrun import loader


def test_a_module_and_a_dotted_attribute() -> None:
    import examples.purchase

    assert loader.load("examples.purchase:graph") is examples.purchase.graph
    assert loader.load("examples.purchase:graph.name") == examples.purchase.graph.name


def test_a_file_under_a_project_folder(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "agent.py").write_text("class Box:\n    value = 42\n")
    assert loader.load("./src/agent.py:Box.value", base=tmp_path, module_name="lj_agent") == 42
    with pytest.raises(loader.RefError, match="no Python file"):
        loader.load("./src/missing.py:x", base=tmp_path)


@pytest.mark.parametrize("ref", ["examples.purchase", ":graph", "examples.purchase:"])
def test_a_malformed_reference_is_refused(ref: str) -> None:
    with pytest.raises(loader.RefError, match="expected MODULE:ATTR"):
        loader.load(ref)


def test_what_is_missing_is_named() -> None:
    with pytest.raises(loader.RefError, match=re.escape(
            "module 'examples.purchase' has no attribute 'nope'")):
        loader.load("examples.purchase:nope")
    with pytest.raises(ImportError):  # as it is: the caller says which module
        loader.load("examples.no_such_module:graph")


def test_every_reader_of_references_uses_it() -> None:
    """No other module executes a file or imports a module a reference names."""
    root = Path(__file__).resolve().parents[2] / "graphrun"
    marks = ("spec_from_file_location", "import_module(module_name)", "import_module(where)")
    readers = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py")
                     if any(m in p.read_text() for m in marks))
    assert readers == ["loader.py"]
