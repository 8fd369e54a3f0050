"""One run's stream chunks as v3 protocol events (graphrun.server.feeds numbers and keeps
them): values, updates, custom and tasks as they come, checkpoints by id, the lifecycle
of the subgraph namespaces seen in `tasks`, the chat models' content-block events as
`messages`, the tool runs the workers relay as `tools`."""

from __future__ import annotations

from typing import Any

from graphrun import stream
from graphrun.engine.events import CHECKPOINT_REFS
from graphrun.server import shapes

Out = list[tuple[str, Any, Any]]  # (method, namespace, data) of events to emit


class RunEvents:
    """One run's chunks as protocol events: the messages and tool calls under way, and
    the subgraph namespaces seen."""

    def __init__(self, graph: str) -> None:
        self.graph = graph
        self.children: dict[tuple[str, ...], str] = {}  # namespace -> its parent task id
        self.messages: dict[str, str] = {}  # chat model run id -> its message's id
        self.tools: dict[str, dict[str, Any]] = {}  # tool run id -> its call

    def convert(self, ns: tuple[str, ...], mode: str, payload: Any) -> Out:
        if mode in ("values", "updates", "custom"):
            return [(mode, ns, shapes.jsonable(payload))]
        if mode == CHECKPOINT_REFS and isinstance(payload, dict):
            return [("checkpoints", ns, shapes.jsonable(payload))]
        if mode == "tasks" and isinstance(payload, dict):
            return self._tasks(ns, shapes.jsonable(payload))
        if mode == "messages" and isinstance(payload, (list, tuple)) and len(payload) == 2:
            return self._message(ns, *payload)
        if mode == stream.EVENTS and isinstance(payload, dict):
            kind = payload.get("kind")
            if kind in ("tool_start", "tool_end", "tool_error"):
                return self._tool(kind, payload)
        return []

    # A subgraph's namespace starts on its first task and ends with its parent's task,
    # as LangGraph's LifecycleTransformer has it.
    def _tasks(self, ns: tuple[str, ...], data: dict[str, Any]) -> Out:
        out: Out = []
        if "result" not in data and ns and ns not in self.children:
            name, _, parent_task = ns[-1].partition(":")
            self.children[ns] = parent_task
            # An agent (LangChain's create_agent) is named by its lc_agent_name.
            name = (data.get("metadata") or {}).get("lc_agent_name") or name
            out.append(("lifecycle", ns, {"event": "started", "graph_name": name}))
        out.append(("tasks", ns, data))
        if "result" in data:
            status = ("interrupted" if data.get("interrupts") else
                      "failed" if data.get("error") else "completed")
            for child, parent_task in list(self.children.items()):
                if child[:-1] == ns and parent_task == data.get("id"):
                    del self.children[child]
                    out.append(("lifecycle", child, {"event": status, **(
                        {"error": str(data["error"])} if status == "failed" else {})}))
        return out

    def close_children(self, status: str) -> Out:
        out: Out = [("lifecycle", ns, {"event": status}) for ns in self.children]
        self.children.clear()
        return out

    # -- messages: the chat model's own content-block events (StreamMessagesV2) ----------
    def _message(self, ns: tuple[str, ...], payload: Any, meta: Any) -> Out:
        """What chat models said: each protocol event as the model streamed it, naming
        its message (a client routes concurrent messages by it), or the message of a
        model that did not stream, replayed whole as LangChain replays it. Messages a
        node returned are state (the values channel), not sent here."""
        from langchain_core.messages import BaseMessage

        from graphrun._lc_private import message_to_events

        meta = meta if isinstance(meta, dict) else {}
        node = {"langgraph_node": meta["langgraph_node"]} if meta.get("langgraph_node") else {}
        if isinstance(payload, dict) and "event" in payload:
            rid = str(meta.get("run_id", ""))
            event = shapes.jsonable(payload)
            if event["event"] == "message-start":
                self.messages[rid] = str(event.get("id") or event.get("message_id")
                                         or f"run-{rid}")
                event["metadata"] = {**(event.get("metadata") or {}), "run_id": rid, **node}
            mid = self.messages.get(rid)
            if mid is None:
                return []
            if event["event"] in ("message-finish", "error"):
                del self.messages[rid]
            return [("messages", ns, {**event, "message_id": mid})]
        if not isinstance(payload, BaseMessage) or not meta.get("run_id"):
            return []  # what a node returned is the values channel's: this one is models'
        rid = str(meta["run_id"])
        mid = payload.id or f"run-{rid}"
        out: Out = []
        for k, event in enumerate(message_to_events(payload, message_id=mid)):
            event = shapes.jsonable(event)
            if k == 0:
                event["metadata"] = {**(event.get("metadata") or {}), "run_id": rid, **node}
            out.append(("messages", ns, {**event, "message_id": mid}))
        return out

    # -- tools: each tool run, by the id of the call it answers ---------------------------
    def _tool(self, kind: str, p: dict[str, Any]) -> Out:
        rid = str(p.get("run_id"))
        if kind == "tool_start":
            name = p.get("name") or (p.get("serialized") or {}).get("name") or ""
            # A tool a node calls itself with plain arguments answers no call: its run
            # names it.
            call = {"ns": _graph_ns(p.get("metadata") or {}),
                    "id": p.get("tool_call_id") or rid}
            self.tools[rid] = call
            data = {"event": "tool-started", "tool_call_id": call["id"], "tool_name": name}
            if p.get("inputs") is not None:
                data["input"] = shapes.jsonable(p["inputs"])
            return [("tools", call["ns"], data)]
        answered = self.tools.pop(rid, None)
        if answered is None:
            return []
        if kind == "tool_end":
            return [("tools", answered["ns"], {
                "event": "tool-finished", "tool_call_id": answered["id"],
                "output": shapes.jsonable(p.get("output"))})]
        error = p.get("error") or {}
        if error.get("type") == "GraphInterrupt":  # paused, not failed: it runs again
            return []
        return [("tools", answered["ns"], {"event": "tool-error", "tool_call_id": answered["id"],
                                            "message": str(error.get("message", error))})]


def _graph_ns(metadata: dict[str, Any]) -> tuple[str, ...]:
    """The namespace of the graph a task runs in (its checkpoint namespace without the
    task's own segment, and one more per enclosing @task call), as LangGraph names it."""
    ns = str(metadata.get("langgraph_checkpoint_ns") or "")
    if not ns:
        return ()
    parts = ns.split("|")
    path, drop = metadata.get("langgraph_path") or (), 1
    while isinstance(path, (list, tuple)) and len(path) == 4 and (
            path[0] == "__pregel_push" and path[-1] is True):
        drop, path = drop + 1, path[1]
    return tuple(parts[:-drop]) if drop < len(parts) else ()
