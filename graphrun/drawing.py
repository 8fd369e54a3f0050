"""`get_graph()`: a compiled graph as LangChain's drawable `Graph`, drawn as LangGraph draws it.

    graph.get_graph().draw_mermaid()          # the Mermaid text LangGraph gives
    graph.get_graph(xray=True).draw_ascii()   # subgraphs expanded (needs `grandalf`)
    graph.get_graph().draw_mermaid_png()      # rendered by LangChain (mermaid.ink by default)

LangGraph finds its drawing's edges by running its graph "dry": each node runs with no
input, its static edges and waiting edges write their channels, and a conditional edge
writes every destination it declares (its path map, the `Literal[...]` its routing
function returns, a node's `Command[Literal[...]]` annotation) once, as dashed edges
labelled with the path map's keys. Nodes that those writes trigger run next, and so on.
This module runs the same dry run over graphrun's `GraphSpec` (same channels, same
trigger rules, same bookkeeping of which write led to which node) so the edges, their
dashes and labels, the implicit edges to `__end__`, deferred nodes and breakpoint
metadata come out as LangGraph's do. A routing function that declares nothing draws no
edges, and a node reached only by a `Send` the routing function makes at run time is
drawn unconnected, as in LangGraph.

Two differences: a node's `data` is a `GraphNode` naming the node (its `.node` is the
`NodeSpec`), so `to_json()` gives `data.id` `["graphrun", "drawing", "GraphNode"]`
where LangGraph names its own runnable's class; and when two edges between the same
nodes differ only in that one has no label, LangGraph fails to sort them (TypeError)
and graphrun draws the edge once, without the label.

`langchain-core` is optional for graphrun: it is imported here, when a graph is drawn.
"""

from __future__ import annotations

import inspect
import typing
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, Union

from graphrun.types import END, START

__all__ = ["draw_graph", "graph_node_class", "subgraphs"]

_EXTRA = "messages"  # the extra of pyproject.toml that installs langchain-core
_LIMIT = 250  # steps of the dry run, as LangGraph's


def _graph_classes() -> tuple[Any, Any]:
    try:
        from langchain_core.runnables import Runnable
        from langchain_core.runnables.graph import Graph
    except ImportError as exc:
        raise ImportError(
            f"get_graph() returns LangChain's drawable Graph and needs langchain-core, "
            f"which is not installed: pip install 'graphrun[{_EXTRA}]'.") from exc
    return Graph, Runnable


# -- the nodes of the dry run ----------------------------------------------------------
@dataclass(eq=False)  # identity: a writer's declared writes are applied once per run
class _Writer:
    writes: list[tuple[str, Any]] = field(default_factory=list)  # written every time
    static: list[tuple[str, Any, str | None]] | None = None  # declared conditional writes


@dataclass
class _Node:
    name: str
    triggers: tuple[str, ...]
    writers: list[_Writer]


class _Edge(NamedTuple):
    source: str
    target: str
    conditional: bool
    data: str | None


class _Trigger(NamedTuple):
    source: str
    conditional: bool
    data: str | None


def _key(t: tuple[Any, ...]) -> tuple[Any, ...]:
    """LangGraph sorts edges as tuples; a label may be None, so sort None first."""
    return (*t[:-1], t[-1] is not None, t[-1] or "")


def _branch_channel(node: str) -> str:
    return node if node == END else f"branch:to:{node}"


def _literal_targets(fn: Any) -> tuple[Any, ...] | None:
    """The values of a `-> Literal[...]` return annotation (LangGraph's path map rule)."""
    try:
        if not (inspect.isfunction(fn) or inspect.ismethod(fn)):
            return None
        ret = typing.get_type_hints(fn).get("return")
    except Exception:
        return None
    if ret is not None and typing.get_origin(ret) is Literal:
        return typing.get_args(ret)
    return None


def _wrapped(fn: Any) -> Any:
    """What a node function graphrun made calls: the LangChain Runnable given to
    `add_node`, or LangGraph's node code (a RunnableCallable, a ToolNode) that
    `from_langgraph` converted. None for the user's own functions."""
    if not (inspect.isfunction(fn) and fn.__module__.startswith("graphrun.")):
        return None
    try:
        return inspect.getclosurevars(fn).nonlocals.get("runnable")
    except (TypeError, ValueError):
        return None


def _declared_function(fn: Any) -> Any:
    """The function whose annotations declare a node's destinations: the node's own, or,
    for a node converted from LangGraph, the function LangGraph's node wraps (the one
    LangGraph read them from)."""
    runnable = _wrapped(fn)
    if type(runnable).__name__ == "RunnableCallable" and type(runnable).__module__.startswith(
            "langgraph"):
        return getattr(runnable, "func", None) or getattr(runnable, "afunc", None)
    return fn


def _command_targets(fn: Any) -> tuple[str, ...]:
    """The destinations a node declares by `-> Command[Literal[...]]` (LangGraph's rule)."""
    from graphrun.types import Command

    fn = _declared_function(fn)
    try:
        if not (inspect.isfunction(fn) or inspect.ismethod(fn)
                or inspect.ismethod(getattr(fn, "__call__", None))):  # noqa: B004
            return ()
        hints = typing.get_type_hints(getattr(fn, "__call__")) or typing.get_type_hints(fn)  # noqa: B004, B009
    except Exception:
        return ()
    ret = hints.get("return")
    if ret is None:
        return ()
    if typing.get_origin(ret) is Union:  # LangGraph's rule: `X | Y` is not looked into
        ret = next((a for a in typing.get_args(ret) if _is_command(typing.get_origin(a), Command)),
                   ret)
    if (_is_command(typing.get_origin(ret), Command) and (args := typing.get_args(ret))
            and typing.get_origin(args[0]) is Literal):
        return tuple(typing.get_args(args[0]))
    return ()


def _is_command(origin: Any, command: type) -> bool:
    """graphrun's Command, or LangGraph's (a node written against langgraph.types)."""
    return isinstance(origin, type) and (
        issubclass(origin, command) or (origin.__name__ == "Command"
                                        and origin.__module__.startswith("langgraph")))


def _tools(fn: Any) -> list[str] | None:
    """A ToolNode's tool names (LangGraph shows them as `__tools` metadata): the node's
    own, or those of the LangGraph node a converted node calls."""
    for c in (fn, _wrapped(fn)):
        by_name = getattr(c, "tools_by_name", None)
        if isinstance(by_name, Mapping) and by_name:
            return list(by_name)
    return None


def _nodes(spec: Any) -> dict[str, _Node]:
    nodes: dict[str, _Node] = {}
    for name, node in spec.nodes.items():
        main = _Writer()
        if name != START and node.destinations:  # declared: they win, as in LangGraph
            main.static = [(_branch_channel(e), None, label) for e, label in node.destinations]
        elif name != START and (ends := _command_targets(node.fn)):
            main.static = [(_branch_channel(e), None, None) for e in ends]
        writers = [main]
        writers += [_Writer([(_branch_channel(t), None)])
                    for t in spec.edges.get(name, ()) if t != END]
        writers += [_Writer([(chan, name)]) for chan in spec.joins.get(name, ())]
        for branch in spec.branches.get(name, ()):
            ends_map: Mapping[Any, str] | None = branch.path_map
            if ends_map is None and (lit := _literal_targets(branch.path)) is not None:
                ends_map = {v: v for v in lit}
            writers.append(_Writer(static=[
                (_branch_channel(t), None, str(label)) for label, t in ends_map.items()]
                if ends_map else None))
        nodes[name] = _Node(name, tuple(spec.triggers.get(name, ())), writers)
    return nodes


def _channels(spec: Any, nodes: Mapping[str, _Node]) -> dict[str, Any]:
    """The channels the nodes trigger on (`__start__`, `branch:to:<node>`, joins, their
    deferred forms): the graph's own, fresh."""
    triggers = {START, *(c for n in nodes.values() for c in n.triggers)}
    return {k: ch.restore() for k, ch in spec.channels.items() if k in triggers}


class _DryRun:
    """LangGraph's Pregel loop over the trigger channels, with versions and seen versions."""

    def __init__(self, nodes: Mapping[str, _Node], channels: dict[str, Any]) -> None:
        self.nodes = nodes
        self.channels = channels
        self.versions: dict[str, int] = {}
        self.seen: dict[str, dict[str, int]] = {}
        self.trigger_to_nodes: dict[str, list[str]] = defaultdict(list)
        for n in nodes.values():
            for t in n.triggers:
                self.trigger_to_nodes[t].append(n.name)

    def apply(self, tasks: Mapping[str, list[tuple[str, Any]]]) -> set[str]:
        """`apply_writes`: tasks (node name -> its writes), sorted by name."""
        ordered = sorted(tasks)
        for name in ordered:
            self.seen.setdefault(name, {}).update(
                {c: self.versions[c] for c in self.nodes[name].triggers if c in self.versions})
        version = max(self.versions.values(), default=0) + 1
        for chan in {c for name in ordered for c in self.nodes[name].triggers
                     if c in self.channels}:
            if self.channels[chan].consume():
                self.versions[chan] = version
        pending: dict[str, list[Any]] = defaultdict(list)
        for name in ordered:
            for chan, value in tasks[name]:
                if chan in self.channels:
                    pending[chan].append(value)
        updated: set[str] = set()
        for chan, values in pending.items():
            if self.channels[chan].update(values):
                self.versions[chan] = version
                if self.channels[chan].is_available():
                    updated.add(chan)
        for chan, ch in self.channels.items():  # a new step: ephemeral values go
            if ch.is_available() and chan not in updated and ch.update(()):
                self.versions[chan] = version
                if ch.is_available():
                    updated.add(chan)
        if updated.isdisjoint(self.trigger_to_nodes):  # the last step: deferred nodes
            for chan, ch in self.channels.items():
                if ch.finish():
                    self.versions[chan] = version
                    if ch.is_available():
                        updated.add(chan)
        return updated

    def next_tasks(self, updated: set[str]) -> list[str]:
        """`prepare_next_tasks`: the nodes a channel updated since they last ran triggers."""
        candidates = sorted({n for c in updated for n in self.trigger_to_nodes.get(c, ())})
        out = []
        for name in candidates:
            seen = self.seen.get(name, {})
            if any(c in self.channels and self.channels[c].is_available()
                   and self.versions.get(c, 0) > seen.get(c, 0)
                   for c in self.nodes[name].triggers):
                out.append(name)
        return out


def _edges(spec: Any) -> tuple[set[_Edge], list[str], dict[str, set[_Trigger]]]:
    """The dry run (LangGraph's `draw_graph`): the edges found, the first step's nodes and
    the last step's sources."""
    nodes = _nodes(spec)
    run = _DryRun(nodes, _channels(spec, nodes))
    edges: set[_Edge] = set()
    tasks = run.next_tasks(_input(run))
    start_tasks = list(tasks)
    static_seen: set[int] = set()
    sources: dict[str, set[_Trigger]] = {}
    step_sources: dict[str, set[_Trigger]] = {}
    static_declared: dict[str, set[_Trigger]] = defaultdict(set)
    for _step in range(-1, _LIMIT):
        if not tasks:
            break
        conditionals: dict[tuple[str, str, Any], str | None] = {}
        writes: dict[str, list[tuple[str, Any]]] = {}
        for name in tasks:
            writes[name] = []
            for w in nodes[name].writers:
                writes[name] += w.writes
                if id(w) in static_seen:
                    continue
                static_seen.add(id(w))
                if not w.static:
                    continue
                for chan, _v, label in w.static:  # END writes are edges at once
                    if chan == END:
                        edges.add(_Edge(name, END, True, label))
                declared = [t for t in w.static if t[0] != END]
                conditionals.update({(name, c, v or None): label for c, v, label in declared})
                for c, _v, label in declared:
                    static_declared[name].add(_Trigger(c, True, label))
                writes[name] += [(c, v) for c, v, _label in declared]
        step_sources = {}
        for name in tasks:
            found = {_Trigger(c, (name, c, v or None) in conditionals,
                              conditionals.get((name, c, v or None))) for c, v in writes[name]}
            step_sources[name] = found | static_declared.get(name, set())
        sources.update(step_sources)
        trigger_to_sources: dict[str, set[_Trigger]] = defaultdict(set)
        for src, triggers in sources.items():
            for trigger, cond, label in triggers:
                trigger_to_sources[trigger].add(_Trigger(src, cond, label))
        tasks = run.next_tasks(run.apply(writes))
        for name in tasks:
            added = False
            for trigger in sorted(nodes[name].triggers):
                for src, cond, label in sorted(trigger_to_sources[trigger], key=_key):
                    edges.add(_Edge(src, name, cond, label))
                    if (trigger, cond, label) in step_sources.get(src, set()):
                        added = True
                    else:
                        sources[src].discard(_Trigger(trigger, cond, label))
            if not added:  # triggered by writes of earlier steps: from every last node
                for src in step_sources:
                    edges.add(_Edge(src, name, True, None))
    return edges, start_tasks, step_sources


def _input(run: _DryRun) -> set[str]:
    """The input written to `__start__` (step -1)."""
    run.channels[START].update([{}])
    run.versions[START] = max(run.versions.values(), default=0) + 1
    return {START}


# -- the drawing -----------------------------------------------------------------------
def _node_data(Runnable: Any) -> Any:
    class GraphNode(Runnable):  # type: ignore[misc]
        """A node of a graphrun graph, as a drawing shows it: its `name`, and `node` (the
        `NodeSpec`: its function or subgraph, metadata and policies)."""

        def __init__(self, name: str, node: Any) -> None:
            self.name = name
            self.node = node

        def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
            raise NotImplementedError(
                f"node {self.name!r} of a drawing cannot run by itself: invoke the graph.")

    GraphNode.__module__ = __name__
    GraphNode.__qualname__ = "GraphNode"
    return GraphNode


_GRAPH_NODE: Any = None


def graph_node_class() -> Any:
    """The class of a drawn node's `data` (a LangChain Runnable naming the node)."""
    global _GRAPH_NODE
    if _GRAPH_NODE is None:
        _GRAPH_NODE = _node_data(_graph_classes()[1])
    return _GRAPH_NODE


def subgraphs(spec: Any) -> Iterator[tuple[str, Any]]:
    """The graphs a graph's nodes are, or call (LangGraph's `get_subgraphs`): a subgraph
    compiled with `checkpointer=False` is not one, as in LangGraph."""
    for name, node in spec.nodes.items():
        sub = node.fn if node.is_subgraph else node.calls_graph
        if sub is None or not hasattr(sub, "spec") or getattr(sub, "checkpointer", None) is False:
            continue
        yield name, sub


def draw_graph(compiled: Any, *, xray: int | bool = False) -> Any:
    """`compiled.get_graph(xray=...)`: LangChain's `Graph` of a graphrun compiled graph.

    `xray=True` expands every subgraph, `xray=n` n levels deep; a subgraph is a graph
    added as a node or a graph a node's function calls (found in its closure)."""
    Graph, _ = _graph_classes()
    spec = compiled.spec
    drawn_subgraphs: dict[str, Any] = {}
    if xray:
        deeper = xray if isinstance(xray, bool) or xray <= 0 else xray - 1
        drawn_subgraphs = {name: draw_graph(sub, xray=deeper) for name, sub in subgraphs(spec)}
    edges, start_tasks, last_sources = _edges(spec)
    GraphNode = graph_node_class()
    graph = Graph()
    before, after = spec.interrupt_before, spec.interrupt_after
    for name, node in spec.nodes.items():
        metadata = dict(node.metadata or {})
        if getattr(node, "defer", False):
            metadata["defer"] = True
        if name in before and name in after:
            metadata["__interrupt"] = "before,after"
        elif name in before:
            metadata["__interrupt"] = "before"
        elif name in after:
            metadata["__interrupt"] = "after"
        if name != START and (tools := _tools(node.fn)):
            metadata["__tools"] = tools
        graph.add_node(GraphNode(name, node), name, metadata=metadata or None)
    if START not in spec.nodes:  # an @entrypoint: its one node reads the input
        graph.add_node(None, START)
        for name in start_tasks:
            _add_edge(graph, START, name)
    for src, dest, conditional, label in sorted(edges, key=_key):
        _add_edge(graph, src, dest, data=label if label != dest else None,
                  conditional=conditional)
    termini = {d for _, d, _, _ in edges if d != END}.difference(s for s, _, _, _ in edges)
    if termini:
        for src in sorted(termini):
            _add_edge(graph, src, END)
    elif len(last_sources) == 1 and not any(d == END for _, d, _, _ in edges):
        for src in sorted(last_sources):
            _add_edge(graph, src, END, conditional=True)
    for name, sub in drawn_subgraphs.items():
        if len(sub.nodes) > 1 and name in graph.nodes and sub.first_node() and sub.last_node():
            sub.trim_first_node()
            sub.trim_last_node()
            graph.nodes.pop(name)
            first, last = graph.extend(sub, prefix=name)
            for i, edge in enumerate(graph.edges):
                if edge.source == name:
                    edge = edge.copy(source=last.id)
                if edge.target == name:
                    edge = edge.copy(target=first.id)
                graph.edges[i] = edge
    return graph


def _add_edge(graph: Any, source: str, target: str, *, data: Any = None,
              conditional: bool = False) -> None:
    for edge in graph.edges:
        if edge.source == source and edge.target == target:
            return
    if target not in graph.nodes and target == END:
        graph.add_node(None, END)
    graph.add_edge(graph.nodes[source], graph.nodes[target], data, conditional)
