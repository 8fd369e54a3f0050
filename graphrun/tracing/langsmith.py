"""The LangSmith backend: runs through the `langsmith` client, in the header format of
`temporalio-langsmith`."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import random
import uuid
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any, cast
from urllib.parse import quote, unquote

import temporalio.workflow

from graphrun.tracing.base import Backend, Later, replaying

LANGSMITH_HEADER = "_temporal-langsmith-context"  # temporalio-langsmith's header


def _langsmith_api() -> Any:
    """langsmith's names, imported once: workflow code must not import (in the sandbox
    each import statement costs far more than the call it serves)."""
    from types import SimpleNamespace

    from langsmith import trace, tracing_context
    from langsmith.run_helpers import get_current_run_tree
    from langsmith.run_trees import RunTree, get_cached_client

    return SimpleNamespace(RunTree=RunTree, tracing_context=tracing_context, trace=trace,
                           get_current_run_tree=get_current_run_tree,
                           get_cached_client=get_cached_client)


class LangSmithTracing(Backend):
    """LangSmith runs, through the `langsmith` client (LANGSMITH_API_KEY, LANGSMITH_ENDPOINT,
    LANGSMITH_PROJECT as usual). Chat models, tools and `@traceable` functions a node calls
    nest under the node's run, since the node runs inside it (langsmith's tracing context,
    which LangChain's tracer follows)."""

    name = "langsmith"
    header = LANGSMITH_HEADER

    def __init__(self, *, client: Any = None, project_name: str | None = None,
                 metadata: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        self._ls = _langsmith_api()  # fails early without langsmith: graphrun[tracing]
        self._client = client
        self.project_name = project_name
        self.metadata = dict(metadata or {})

    @property
    def client(self) -> Any:
        if self._client is None:
            # LangChain's tracer uses the same cached client: one queue, one flush.
            self._client = self._ls.get_cached_client()
        return self._client

    def _context(self, parent: Any = None, metadata: dict[str, Any] | None = None
                 ) -> contextlib.AbstractContextManager[None]:
        kw: dict[str, Any] = {"enabled": True, "client": self.client}
        if self.project_name:
            kw["project_name"] = self.project_name
        if parent is not None:
            kw["parent"] = parent
        if metadata:
            kw["metadata"] = metadata
        return self._ls.tracing_context(**kw)  # type: ignore[no-any-return]

    def _new_run(self, parent: Any, name: str, *, run_id: uuid.UUID | None = None,
                 start_time: datetime | None = None, inputs: Any = None,
                 metadata: dict[str, Any] | None = None) -> Any:
        extra = {"metadata": {**self.metadata, **(metadata or {})}}
        kw: dict[str, Any] = {"run_type": "chain", "inputs": _as_inputs(inputs), "extra": extra}
        if start_time is not None:
            kw["start_time"] = start_time
        if parent is not None:
            return parent.create_child(name, run_id=run_id, **kw)
        if run_id is not None:
            kw["id"] = run_id
        if self.project_name:
            kw["project_name"] = self.project_name
        return self._ls.RunTree(name=name, ls_client=self.client, **kw)

    def _parent_from(self, carrier: Mapping[str, str] | None) -> Any:
        """The run a header names, as the parent of what the activity runs."""
        if not carrier:
            return None
        kw: dict[str, Any] = {"ls_client": self.client}
        if self.project_name:
            kw["project_name"] = self.project_name
        return self._ls.RunTree.from_headers(cast(Any, carrier), **kw)

    def _carrier(self, run: Any) -> dict[str, str]:
        """The run as a header: its dotted order, and its project when it is not the
        default. Not its metadata: the header is trace context only."""
        carrier = {"langsmith-trace": str(run.dotted_order)}
        project = getattr(run, "session_name", None)
        if project and project != _default_project():
            carrier["baggage"] = f"langsmith-project={quote(str(project))}"
        return carrier

    @contextlib.contextmanager
    def client_scope(self, name: str, metadata: dict[str, Any], inputs: Any
                     ) -> Iterator[Callable[[Any, str | None], None]]:
        run = self._new_run(self._ls.get_current_run_tree(), name, inputs=inputs, metadata=metadata)
        run.post()
        outcome: dict[str, Any] = {}

        def finish(outputs: Any, error: str | None) -> None:
            outcome.update(outputs=outputs, error=error)

        try:
            with self._context(parent=run):
                yield finish
        except BaseException as exc:
            run.end(error=f"{type(exc).__name__}: {exc}")
            run.patch()
            raise
        run.end(outputs=_as_outputs(outcome.get("outputs")), error=outcome.get("error"))
        run.patch()

    def current_carrier(self) -> dict[str, str] | None:
        run = self._ls.get_current_run_tree()
        return self._carrier(run) if run is not None and run.trace_id else None

    def wf_open(self, name: str, parent: Any, metadata: dict[str, Any], inputs: Any,
                rng: random.Random) -> Any:
        # Only what the children need is worked out here, on the workflow's thread (ids,
        # dotted order: plain strings); the RunTree is built and sent by the sending
        # thread, and not at all while replaying.
        start = temporalio.workflow.now()
        run_id = uuid.UUID(int=rng.getrandbits(128), version=4)
        own = start.strftime("%Y%m%dT%H%M%S%fZ") + str(run_id)
        metadata = {**self.metadata, **metadata}
        project = self.project_name
        if isinstance(parent, _LsRun):
            dotted, trace_id, parent_id = f"{parent.dotted_order}.{own}", parent.trace_id, parent.id
            metadata, project = {**parent.metadata, **metadata}, parent.project
        elif isinstance(parent, dict) and parent.get("langsmith-trace"):
            up = str(parent["langsmith-trace"]).strip()
            segments = up.split(".")
            dotted = f"{up}.{own}"
            trace_id, parent_id = uuid.UUID(segments[0][-36:]), uuid.UUID(segments[-1][-36:])
            project = _baggage_project(parent.get("baggage")) or project
        else:
            dotted, trace_id, parent_id = own, run_id, None
        run = _LsRun(name, run_id, start, dotted, trace_id, parent_id, project, metadata,
                     inputs)
        if not replaying():
            self._submit(lambda: self._built(run).post())
        return run

    def _built(self, run: _LsRun) -> Any:
        """The RunTree of a run opened by workflow code (on the sending thread)."""
        if run.tree is None:
            kw: dict[str, Any] = {
                "name": run.name, "id": run.id, "run_type": "chain", "start_time": run.start,
                "dotted_order": run.dotted_order, "trace_id": run.trace_id,
                "inputs": _as_inputs(run.inputs), "extra": {"metadata": run.metadata},
                "ls_client": self.client}
            if run.parent_id is not None:
                kw["parent_run_id"] = run.parent_id
            if run.project:
                kw["project_name"] = run.project
            run.tree = self._ls.RunTree(**kw)
        return run.tree

    def wf_close(self, handle: Any, outputs: Any, error: str | None) -> None:
        if replaying():
            return
        end_time = temporalio.workflow.now()

        def send() -> None:
            # Opened while replaying (its worker was lost mid-node): built now, to patch.
            tree = self._built(handle)
            tree.end(outputs=_as_outputs(outputs), error=error, end_time=end_time)
            tree.patch()

        self._submit(send)

    def wf_carrier(self, handle: Any) -> dict[str, str]:
        carrier = {"langsmith-trace": handle.dotted_order}
        if handle.project and handle.project != _default_project():
            carrier["baggage"] = f"langsmith-project={quote(str(handle.project))}"
        return carrier

    @contextlib.contextmanager
    def activity_scope(self, carrier: dict[str, str] | None, name: str,
                       metadata: dict[str, Any], attempt: int) -> Iterator[None]:
        parent = self._parent_from(carrier)
        if parent is not None and attempt > 1:
            # The node run is the workflow's, one for every attempt; this marks where the
            # attempt after a lost worker or a timeout began.
            marker = parent.create_child(f"attempt {attempt}", "chain",
                                         inputs={"attempt": attempt},
                                         extra={"metadata": metadata})
            marker.post()
            marker.end(outputs={"attempt": attempt})
            marker.patch()
        with self._context(parent=parent, metadata=metadata):
            yield

    @contextlib.contextmanager
    def route_scope(self, name: str, inputs: Any, tags: list[str]
                    ) -> Iterator[Callable[[Any], None]]:
        with self._ls.trace(name, run_type="chain", inputs=_as_inputs(inputs),
                            tags=tags) as run:
            yield lambda outputs: run.end(outputs=_as_outputs(outputs))

    def flush(self) -> None:
        self.drain()
        if self._client is not None:
            self._client.flush()


@dataclasses.dataclass
class _LsRun:
    """A LangSmith run opened by workflow code: what is known on the workflow's thread;
    its RunTree (`tree`) is made on the sending thread."""

    name: str
    id: uuid.UUID
    start: datetime
    dotted_order: str
    trace_id: uuid.UUID
    parent_id: uuid.UUID | None
    project: str | None
    metadata: dict[str, Any]
    inputs: Any  # a dict, a Later or None
    tree: Any = None


def _baggage_project(baggage: str | None) -> str | None:
    for item in (baggage or "").split(","):
        key, _, value = item.strip().partition("=")
        if key == "langsmith-project" and value:
            return unquote(value)
    return None


def _default_project() -> str:
    return (os.environ.get("LANGSMITH_PROJECT") or os.environ.get("LANGCHAIN_PROJECT")
            or "default")


def _now(value: Any) -> Any:
    return value.value() if isinstance(value, Later) else value


def _as_inputs(value: Any) -> dict[str, Any]:
    value = _now(value)
    if value is None:
        return {}
    return value if isinstance(value, dict) else {"input": value}


def _as_outputs(value: Any) -> dict[str, Any] | None:
    value = _now(value)
    if value is None:
        return None
    return value if isinstance(value, dict) else {"output": value}
