"""The modules' layering, pinned: arrows one way. Read from the source (every import,
function-level ones included), so a new arrow the wrong way fails here by name."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "graphrun"

# The engine plans and commits supersteps from these alone.
ENGINE_READS = {"channels", "checkpoint", "errors", "spec", "types"}
# The core: building graphs and running them in-process, what nodes call, and what both
# drivers share. It never reaches up to the LangGraph bridge, the Server API or the CLI.
CORE = {"cache", "callbacks", "calls", "channels", "checkpoint", "declared", "drawing",
        "engine", "errors", "func", "graph", "limits", "local", "messages", "payloads",
        "runnable", "runner", "runtime", "serde", "spec", "state", "stream",
        "stream_messages", "stream_parts", "stream_tools", "task", "types"}
ABOVE_CORE = ("bridge", "server", "cli")


def _walk(node: ast.AST) -> list[ast.AST]:
    """Every node under `node` but those under `if TYPE_CHECKING:` (types only)."""
    out: list[ast.AST] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and ast.unparse(child.test) == "TYPE_CHECKING":
            out += [n for s in child.orelse for n in (s, *_walk(s))]
            continue
        out += [child, *_walk(child)]
    return out


def _imports(module: str) -> set[str]:
    """graphrun's modules `module` imports at run time (as "engine", "bridge.run", ...).
    A package's are those of all its files, less its own submodules."""
    path = PACKAGE / module.replace(".", "/")
    files = sorted(path.rglob("*.py")) if path.is_dir() else [path.with_suffix(".py")]
    found: set[str] = set()
    for file in files:
        for node in _walk(ast.parse(file.read_text())):
            if isinstance(node, ast.ImportFrom):
                name = _absolute(node, file)
                if name == "graphrun":
                    found |= {a.name for a in node.names}
                elif name.startswith("graphrun."):
                    found.add(name.removeprefix("graphrun."))
            elif isinstance(node, ast.Import):
                found |= {a.name.removeprefix("graphrun.") for a in node.names
                          if a.name.startswith("graphrun.")}
    return {m for m in found if m != module and not m.startswith(f"{module}.")}


def _absolute(node: ast.ImportFrom, file: Path) -> str:
    """The module `from X import ...` reads, a relative X resolved ("graphrun.engine.run")."""
    if node.level == 0:
        return node.module or ""
    package = file.parent.relative_to(PACKAGE.parent).parts
    base = package[:len(package) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def test_the_engine_reads_only_the_graph_spec_channels_checkpoints_and_types() -> None:
    assert _imports("engine") <= ENGINE_READS, _imports("engine") - ENGINE_READS


def test_the_core_never_imports_the_bridge_the_server_or_the_cli() -> None:
    wrong = {m: sorted(i for i in _imports(m) if i.split(".")[0] in ABOVE_CORE)
             for m in sorted(CORE)}
    assert {m: i for m, i in wrong.items() if i} == {}


def test_the_task_context_is_the_lowest_module() -> None:
    assert _imports("task") == set()
    for module in ("runtime", "messages", "stream", "callbacks", "calls"):
        assert "task" in _imports(module), module


def test_the_bridge_adapts_langgraph_nodes_by_registering_with_graph() -> None:
    import graphrun  # noqa: F401 - the package imports the bridge, which registers
    from graphrun import graph
    from graphrun.bridge import _adapt_node

    assert _adapt_node in graph.NODE_ADAPTERS
    assert _adapt_node("n", lambda s: s) is None  # a plain function is graphrun's own


def _private_imports() -> list[str]:
    """`from graphrun.X import _name` anywhere in graphrun/, activities/ and workflows/:
    one module reading another's private name (the guarded modules of other libraries'
    privates are modules, not names, and are not counted)."""
    root = PACKAGE.parent
    found = []
    for folder in ("graphrun", "activities", "workflows"):
        for path in sorted((root / folder).rglob("*.py")):
            for node in _walk(ast.parse(path.read_text())):
                if (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
                        and node.module.split(".")[0] == "graphrun"):
                    found += [f"{path.relative_to(root)}: {node.module}.{a.name}"
                              for a in node.names if a.name.startswith("_")
                              and not a.name.startswith("__")
                              and a.name not in PRIVATE_MODULES]
    return found


# Modules whose leading underscore says "not graphrun's API", imported as modules.
PRIVATE_MODULES = {"_lc_private", "_langgraph", "_passthrough", "_cli_format"}


def test_no_module_imports_another_modules_private_names() -> None:
    assert _private_imports() == []


def _private_reads() -> list[str]:
    """`module._name` where `module` is one of graphrun's, imported: the same rule as
    above, for a module read through its name."""
    root = PACKAGE.parent
    found = []
    for folder in ("graphrun", "activities", "workflows"):
        for path in sorted((root / folder).rglob("*.py")):
            nodes = _walk(ast.parse(path.read_text()))
            modules = {a.asname or a.name for n in nodes if isinstance(n, ast.ImportFrom)
                       and n.level == 0 and (n.module or "").split(".")[0] == "graphrun"
                       for a in n.names if _is_module(f"{n.module}.{a.name}")}
            found += [f"{path.relative_to(root)}:{n.lineno}: {ast.unparse(n)}" for n in nodes
                      if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                      and n.value.id in modules and n.attr.startswith("_")
                      and not n.attr.startswith("__")]
    return found


def _is_module(dotted: str) -> bool:
    path = PACKAGE.parent / dotted.replace(".", "/")
    return (path.with_suffix(".py").exists() or (path / "__init__.py").exists()) \
        and path.name not in PRIVATE_MODULES


def test_no_module_reads_another_modules_private_names() -> None:
    assert _private_reads() == []


def test_thread_protocol_is_the_public_thread_handle() -> None:
    """RemoteGraph, the CLI, the Server API and scheduled runs reach a thread's workflow
    through `ThreadHandle` alone: none of them calls a private method of another."""
    from graphrun.thread_handle import ThreadHandle

    public = {n for n in vars(ThreadHandle) if not n.startswith("_")}
    assert {"run", "live", "join", "cancel", "state", "history", "update",
            "bulk_update", "stream_end"} <= public
    for folder in ("graphrun", "activities"):
        for path in sorted((PACKAGE.parent / folder).rglob("*.py")):
            text = path.read_text()
            for name in ("_run_once", "_start_with", "_adopt", "_update_once", "_prior"):
                assert f"._{name[1:]}(" not in text or path.name == "thread_handle.py", \
                    (path, name)
