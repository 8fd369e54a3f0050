"""`graphrun graph GRAPH`: a graph's drawing, found as `graphrun worker` finds graphs.

Run in-process through `graphrun.cli.main(argv)` (it returns the exit code, and runs
what the console script runs). Nothing connects to Temporal.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from graphrun.cli import main
from tests.cli.helpers import REPO

pytest.importorskip("langchain_core")

GRAPH_MODULE = """
from typing import TypedDict
{imports}

class State(TypedDict):
    n: int

def step(state):
    return {{"n": state["n"] + 1}}

def build():
    b = StateGraph(State)
    b.add_node("first", step)
    b.add_node("second", step)
    b.add_edge(START, "first")
    b.add_conditional_edges("first", lambda s: "again", {{"again": "first", "done": "second"}})
    return b.compile({compile_args})

graph = build()
"""


def write_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, *,
                 langgraph: bool = False, compile_args: str = "", extra: str = "") -> None:
    imports = ("from langgraph.graph import StateGraph, START, END" if langgraph
               else "from graphrun import StateGraph, START, END")
    (tmp_path / f"{name}.py").write_text(
        GRAPH_MODULE.format(imports=imports, compile_args=compile_args) + textwrap.dedent(extra))
    monkeypatch.syspath_prepend(str(tmp_path))


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["graph", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_module_attr_prints_the_mermaid_drawing(capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    from examples.purchase import graph

    code, out, err = run(capsys, "examples.purchase:graph")
    assert (code, err) == (0, "")
    assert out == graph.get_graph().draw_mermaid().rstrip("\n") + "\n"
    assert "\trequest_approval --> charge_card;\n" in out


def test_a_graph_needs_no_name_to_be_drawn(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    write_module(tmp_path, monkeypatch, "draw_unnamed")  # `worker` would refuse it: no name
    code, out, _ = run(capsys, "draw_unnamed:graph")
    assert code == 0
    assert "\tfirst -. &nbsp;done&nbsp; .-> second;\n" in out


def test_a_langgraph_graph_is_drawn_as_langgraph_draws_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("langgraph")
    write_module(tmp_path, monkeypatch, "draw_lg", langgraph=True)
    import draw_lg  # type: ignore[import-not-found]

    code, out, _ = run(capsys, "draw_lg:graph")
    assert code == 0
    assert out == draw_lg.graph.get_graph().draw_mermaid().rstrip("\n") + "\n"


def test_example_name_xray_and_depth(capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # no langgraph.json there: names are the examples `dev` serves
    code, flat, _ = run(capsys, "subgraph")
    assert code == 0 and "subgraph inner" not in flat and "\tprepare --> inner;\n" in flat
    for flag in (["--xray"], ["--depth", "1"]):
        code, out, _ = run(capsys, "subgraph", *flag)
        assert code == 0 and "subgraph inner" in out
        assert "\tprepare --> inner\\3aask_name;\n" in out


def test_name_from_config(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                          monkeypatch: pytest.MonkeyPatch) -> None:
    write_module(tmp_path, monkeypatch, "draw_configured")
    config = tmp_path / "langgraph.json"
    config.write_text(json.dumps({"graphs": {"counter": "./draw_configured.py:graph"}}))
    code, out, _ = run(capsys, "counter", "--config", str(config))
    assert code == 0 and "\t__start__ --> first;\n" in out
    monkeypatch.chdir(tmp_path)  # ./langgraph.json is read when present, as `dev` does
    code, out2, _ = run(capsys, "counter")
    assert (code, out2) == (0, out)
    code, _, err = run(capsys, "nope")
    assert code == 1
    assert "error: no graph 'nope' in --config langgraph.json; graphs: ['counter']" in err


def test_formats(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                 monkeypatch: pytest.MonkeyPatch) -> None:
    write_module(tmp_path, monkeypatch, "draw_formats")
    code, out, _ = run(capsys, "draw_formats:graph", "--format", "json")
    assert code == 0
    drawn = json.loads(out)
    assert [n["id"] for n in drawn["nodes"]] == ["__start__", "first", "second", "__end__"]
    assert {"source": "first", "target": "second", "data": "done",
            "conditional": True} in drawn["edges"]
    pytest.importorskip("grandalf")
    monkeypatch.chdir(REPO)  # LangChain's ASCII art cannot draw a node's edge to itself
    code, out, _ = run(capsys, "examples.purchase:graph", "--format", "ascii")
    assert code == 0 and "| charge_card |" in out


def test_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                  monkeypatch: pytest.MonkeyPatch) -> None:
    write_module(tmp_path, monkeypatch, "draw_refused",
                 extra="""
                 not_a_graph = 42
                 several = {"a": graph, "b": build()}
                 one = {"only": graph}
                 """)
    monkeypatch.chdir(REPO)
    cases = {
        "draw_refused:missing": "module 'draw_refused' has no attribute 'missing'",
        "no_such_module_here:graph": "cannot import module 'no_such_module_here'",
        "draw_refused:not_a_graph": "'draw_refused:not_a_graph' is a int, not a compiled graph",
        "draw_refused:several": "holds graphs ['a', 'b']",
        "nope": "no graph 'nope' in the examples; graphs: [",
    }
    for ref, message in cases.items():
        code, out, err = run(capsys, ref)
        assert (code, out) == (1, ""), ref
        assert err.startswith("error: ") and message in err and err.count("\n") == 1, err
    assert run(capsys, "draw_refused:one")[0] == 0
