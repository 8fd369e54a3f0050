"""An API server (uvicorn, on a free port) over the session's dev server, with a worker
serving the examples' purchase and LangChain agent."""

from __future__ import annotations

import asyncio
import operator
import socket
import threading
import uuid
from collections.abc import Iterator, Mapping
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from examples import agent_approval, purchase
from graphrun import START, StateGraph, interrupt


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _broken(state: dict) -> dict:
    raise ValueError("card declined")


class _Order(TypedDict):
    item: str


broken = (StateGraph(_Order).add_node("charge", _broken).add_edge(START, "charge")
          .compile(name="broken"))


class _Slow(TypedDict):
    seconds: float
    done: list[str]


async def _wait(state: dict) -> dict:
    await asyncio.sleep(state["seconds"])
    return {"done": [*state.get("done", []), "wait"]}


def _after(state: dict) -> dict:
    return {"done": [*state.get("done", []), "after"]}


# A node that takes `seconds`: runs to cancel, interrupt, roll back and queue behind.
slow = (StateGraph(_Slow).add_node("first", _after).add_node("wait", _wait)
        .add_edge(START, "first").add_edge("first", "wait").compile(name="slow"))



class _Review(TypedDict, total=False):
    amount: int
    notes: Annotated[list[str], operator.add]


def _ask_reviewer(state: dict) -> dict:
    return {"notes": [f"answer:{interrupt({'amount': state['amount']})}"]}


# A subgraph that asks: time travel inside it through the API (its own checkpoints).
_review = (StateGraph(_Review).add_node("check", lambda s: {"notes": ["checked"]})
           .add_node("ask", _ask_reviewer).add_edge(START, "check").add_edge("check", "ask")
           .compile())
nested = (StateGraph(_Review).add_node("review", _review).add_edge(START, "review")
          .compile(name="nested"))

GRAPHS = {"purchase": purchase.graph, "agent": agent_approval.agent, "broken": broken,
          "slow": slow, "nested": nested}


async def _polling(client: Any, queue: str) -> None:
    """Wait for the worker to poll its queue: until then Temporal refuses an update with
    "no poller seen" (the API would answer 503, as it should with no worker)."""
    from temporalio.api.enums.v1 import TaskQueueType
    from temporalio.api.taskqueue.v1 import TaskQueue
    from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest

    for _ in range(200):
        found = await client.workflow_service.describe_task_queue(DescribeTaskQueueRequest(
            namespace=client.namespace, task_queue=TaskQueue(name=queue),
            task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW))
        if found.pollers:
            return
        await asyncio.sleep(0.05)


class _ApiHost:
    """A worker and the API server on an event loop of their own, in a daemon thread, so
    the tests' own loop (and its other workers) never starve them."""

    def __init__(self, address: str, graphs: Mapping[str, Any] | None = None,
                 **app_options: Any) -> None:
        """`graphs`: what the worker serves (default: GRAPHS) and the API serves too
        (with the native agent: its schemas); `app_options`: build_app's (CORS, keys)."""
        self.graphs = dict(graphs) if graphs is not None else GRAPHS
        self.api_graphs = self.graphs if graphs is not None else {
            **GRAPHS, "agent": agent_approval.graph}
        self.app_options = app_options
        self.port = _free_port()
        self.queue = f"server-{uuid.uuid4()}"
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(address,), daemon=True)
        self._thread.start()
        if not self._ready.wait(60) or self._error is not None:
            raise RuntimeError(f"the API host did not start: {self._error!r}")

    def _run(self, address: str) -> None:
        try:
            self._loop.run_until_complete(self._main(address))
        except BaseException as exc:
            self._error = exc
            self._ready.set()

    async def _main(self, address: str) -> None:
        import uvicorn
        from temporalio.client import Client

        from graphrun.client import GraphClient, data_converter
        from graphrun.server import build_app
        from graphrun.worker import create_worker

        client = await Client.connect(address, data_converter=data_converter)
        app = self.app = build_app(GraphClient(client, task_queue=self.queue),
                                   self.api_graphs, **self.app_options)
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port,
                                                    log_level="warning", lifespan="off",
                                                    timeout_keep_alive=75))
        served = {k: g for k, g in self.graphs.items() if not hasattr(g, "reason")}
        async with create_worker(client, served, task_queue=self.queue,
                                 store=self.app_options.get("store")):
            await _polling(client, self.queue)
            serving = asyncio.ensure_future(self.server.serve())
            while not self.server.started and not serving.done():
                await asyncio.sleep(0.02)
            self._ready.set()
            await serving

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        from graphrun.server import protocol

        # uvicorn runs without lifespan here: stop the threads' event feeds as it would
        self._loop.call_soon_threadsafe(protocol.close, self.app)
        self._loop.call_soon_threadsafe(setattr, self.server, "should_exit", True)
        self._thread.join(30)


@pytest.fixture(scope="session")
def api_url(dev_server: Any) -> Iterator[str]:
    from graphrun.server.webhooks import WebhookPolicy

    # The tests' webhook receivers listen on this machine: loopback targets allowed.
    host = _ApiHost(dev_server.address, webhooks=WebhookPolicy(disable_loopback=False))
    yield f"http://127.0.0.1:{host.port}"
    host.close()
