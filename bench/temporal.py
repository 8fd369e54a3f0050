"""graphrun on Temporal vs a hand-written Temporal "raw floor", on one dev server.

    python bench/temporal.py            # full: 31 reps, soak 200 threads, scale 2,000
    python bench/temporal.py --quick    # 9 reps, soak 50 threads, no scale (< 3 minutes)
    python bench/temporal.py --soak 500 --reps 15
    python bench/temporal.py --tracing-only --reps 41   # what tracing costs, alone

One `DevServer(ui=False)` (graphrun's dynamic config included) and, in this
process, two workers on separate task queues: graphrun's `create_worker` and a
plain temporalio `Worker` running the floor workflows below (same data
converter, same sandbox runner with all modules passed through, same timeouts and
retry policy). Each measurement is one call on a fresh workflow id; floor and
graphrun calls alternate (F G, G F, ...) after a warm-up; the figure is the median
over repetitions.

Cases (graphrun call vs floor call):
- chain:       `ainvoke(input)` of a 10-node chain of trivial nodes (returns at the
               end) vs update-with-start of a workflow whose update runs 10 no-op
               activities in sequence and returns.
- approval:    `ainvoke(input)` returning the interrupt (update-with-start round
               trip) vs update-with-start whose update returns after one activity.
  resume:      `ainvoke(Command(resume=True))` to the final result vs an update
               (same workflow, waiting for it) that runs one more activity.
- local-chain: the chain with `local=True` nodes vs the same (non-local) floor.

stream: the same chain through `astream` (chunks read live from the workflow's stream)
against `ainvoke`, interleaved: wall time and time to the first chunk.
Per-step = per-call / activities per call (10 for the chains; graphrun's
`__start__` step runs inside the workflow, without an activity).
History: `fetch_history` of one thread per case; events counted, and bytes of
`Payload.data` summed over every payload in every event (started input, activity
inputs/results, update accept/complete, markers, search attributes, ...).
Soak: N approval threads paused at once on a separate graphrun worker with
`max_cached_workflows=10`, then all resumed with `GraphClient.resume` (signal) and
polled with describe() until completed; wall time and this process's RSS.
Tracing: the chain on workers and clients that trace (graphrun.tracing), interleaved with the
plain chain: LangSmith to a local endpoint that drops what it gets, OpenTelemetry to an
in-memory exporter (BatchSpanProcessor), and the chain invoked with a callback handler
(its nodes' callback events relayed from the worker, graphrun.relay); the line
`tracing-on: chain langsmith=<r> otel=<r> callbacks=<r> callbacks-bytes=<r>` gives
traced/untraced median time ratios and the history payload-byte ratio of relaying.
Throughput: 100 approvals at once (all paused, then all resumed): the floor, graphrun,
and graphrun without its search-attribute upserts, in turn; the best round of each, and
the CPU per approval of this process and of the dev server.
The last line is `temporal-vs-floor: chain=<r> approval=<r> resume=<r> local-chain=<r>
payload=<r> throughput=<r>`: graphrun/floor median time ratios (approval =
start-to-first-pause), payload = the larger of the chain's and the approval's history
payload-byte ratios, throughput = graphrun/floor approvals per second (higher is
better). The floor's activities take the state and return its update, as nodes do.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import resource
import statistics
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any, TypedDict

from temporalio import activity, workflow
from temporalio.client import Client, WithStartWorkflowOperation
from temporalio.common import RetryPolicy, WorkflowIDConflictPolicy
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

TQ_GRAPH = "bench-graphrun"
TQ_FLOOR = "bench-floor"
TQ_SOAK = "bench-soak"
TQ_TRACE = "bench-tracing"
CHAIN = 10
ACT_OPTS: dict[str, Any] = {"start_to_close_timeout": timedelta(minutes=5),
                            "retry_policy": RetryPolicy(maximum_attempts=1)}


# -- the raw floor ------------------------------------------------------------------
@activity.defn(name="noop")
async def noop(state: dict[str, int]) -> dict[str, int]:
    """A hand-written node: takes the state, returns its update (as graphrun's nodes)."""
    return {"n": state["n"] + 1}


@workflow.defn(name="FloorWorkflow")
class FloorWorkflow:
    """Update `invoke(n)` runs n no-op activities in sequence and returns.

    Chain mode (`wait_signal=False`): the workflow completes once the update is done.
    Approval mode: after the first update it waits for the `resume` signal or a
    `resume_update(n)` (which runs n more activities), then completes.
    """

    def __init__(self) -> None:
        self._invoked = False
        self._resumed = False

    @workflow.run
    async def run(self, wait_signal: bool) -> int:
        await workflow.wait_condition(
            lambda: self._invoked and (self._resumed or not wait_signal)
            and workflow.all_handlers_finished())
        return 0

    async def _chain(self, n: int, local: bool = False) -> dict[str, int]:
        state = {"n": 0}
        for _ in range(n):
            if local:
                update = await workflow.execute_local_activity("noop", state,
                                                               result_type=dict, **ACT_OPTS)
            else:
                update = await workflow.execute_activity("noop", state, result_type=dict,
                                                         **ACT_OPTS)
            state = {**state, **update}
        return state

    @workflow.update
    async def invoke(self, n: int) -> dict[str, int]:
        x = await self._chain(n)
        self._invoked = True
        return x

    @workflow.update
    async def invoke_local(self, n: int) -> dict[str, int]:
        x = await self._chain(n, local=True)
        self._invoked = True
        return x

    @workflow.update
    async def resume_update(self, n: int) -> dict[str, int]:
        x = await self._chain(n)
        self._resumed = True
        return x

    @workflow.signal
    def resume(self) -> None:
        self._resumed = True


# -- graphrun graphs -----------------------------------------------------------------
class CounterState(TypedDict):
    n: int


class ApprovalState(TypedDict, total=False):
    request: str
    approved: bool


def _make_step(i: int) -> Callable[[CounterState], dict]:
    def step(s: CounterState) -> dict:
        return {"n": s["n"] + 1}
    step.__name__ = step.__qualname__ = f"step_{i}"
    return step


def build_chain(name: str, local: bool) -> Any:
    from graphrun import END, START, StateGraph
    b = StateGraph(CounterState)
    names = [f"n{i}" for i in range(CHAIN)]
    for i, nm in enumerate(names):
        b.add_node(nm, _make_step(i), local=local)
    b.add_edge(START, names[0])
    for a, c in itertools.pairwise(names):
        b.add_edge(a, c)
    b.add_edge(names[-1], END)
    return b.compile(name=name)


def approve(s: ApprovalState) -> dict:
    from graphrun import interrupt
    answer = interrupt({"question": "approve?", "request": s.get("request")})
    return {"approved": bool(answer)}


def build_approval(name: str) -> Any:
    from graphrun import END, START, StateGraph
    b = StateGraph(ApprovalState)
    b.add_node("approve", approve)
    b.add_edge(START, "approve")
    b.add_edge("approve", END)
    return b.compile(name=name)


def sandbox_runner() -> SandboxedWorkflowRunner:
    # The same runner graphrun.worker uses, so the floor pays the same sandbox cost.
    return SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_all_modules())


# -- the calls ---------------------------------------------------------------------------
_ids = itertools.count()
RUN = uuid.uuid4().hex[:6]


def new_id(kind: str) -> str:
    return f"{kind}-{RUN}-{next(_ids)}"


class Bench:
    def __init__(self, client: Client, gc_: Any) -> None:
        self.client = client
        self.gc = gc_
        self.chain = gc_.graph("chain")
        self.local_chain = gc_.graph("local_chain")
        self.approval = gc_.graph("approval")
        # The same graph and worker, called by a client that keeps no search attributes.
        from graphrun.client import GraphClient
        self.approval_no_sa = GraphClient(client, task_queue=TQ_GRAPH, search_attributes=False,
                                          tracing=None).graph("approval")
        self.last: dict[str, str] = {}  # case -> last workflow id (for history)
        self.pending_resume: dict[str, list[str]] = {"floor": [], "graphrun": []}

    async def floor_start(self, n: int, wait_signal: bool, kind: str,
                          update: str = "invoke") -> str:
        wid = new_id(kind)
        op = WithStartWorkflowOperation(
            "FloorWorkflow", wait_signal, id=wid, task_queue=TQ_FLOOR,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING)
        x = await self.client.execute_update_with_start_workflow(
            update, n, start_workflow_operation=op, result_type=dict)
        assert x == {"n": n}, x
        return wid

    # one timed call each; returns the workflow id
    async def floor_chain(self) -> str:
        return await self.floor_start(CHAIN, False, "floor-chain")

    async def floor_local_chain(self) -> str:
        return await self.floor_start(CHAIN, False, "floor-local-chain", "invoke_local")

    async def graph_chain(self, graph: Any, kind: str) -> str:
        tid = new_id(kind)
        out = await graph.ainvoke({"n": 0}, {"configurable": {"thread_id": tid}})
        assert out == {"n": CHAIN}, out
        return tid

    async def floor_pause(self) -> str:
        return await self.floor_start(1, True, "floor-approval")

    async def graph_chain_streamed(self) -> tuple[float, float]:
        """The chain through astream (live): (time to first chunk, wall time)."""
        config = {"configurable": {"thread_id": new_id("chain-stream")}}
        t0 = time.perf_counter()
        first = None
        async for _ in self.chain.astream({"n": 0}, config):
            if first is None:
                first = time.perf_counter() - t0
        return first or 0.0, time.perf_counter() - t0

    async def graph_pause(self, graph: Any = None) -> str:
        tid = new_id("approval")
        out = await (graph or self.approval).ainvoke({"request": "deploy"},
                                          {"configurable": {"thread_id": tid}})
        assert "__interrupt__" in out, out
        return tid

    async def floor_resume(self, wid: str) -> None:
        x = await self.client.get_workflow_handle(wid).execute_update(
            "resume_update", 1, result_type=dict)
        assert x == {"n": 1}, x

    async def graph_resume(self, tid: str, graph: Any = None) -> None:
        from graphrun import Command
        out = await (graph or self.approval).ainvoke(Command(resume=True),
                                          {"configurable": {"thread_id": tid}})
        assert out.get("approved") is True, out


async def timed(fn: Callable[[], Awaitable[Any]]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    r = await fn()
    return time.perf_counter() - t0, r


async def interleave(pairs: dict[str, Callable[[], Awaitable[Any]]], reps: int,
                     warmup: int) -> tuple[dict[str, list[float]], dict[str, Any]]:
    """pairs: {"floor": fn, "graphrun": fn}; F G, G F, ... ; returns samples, last results."""
    names = list(pairs)
    last: dict[str, Any] = {}
    for _ in range(warmup):
        for k in names:
            last[k] = await pairs[k]()
    samples: dict[str, list[float]] = {k: [] for k in names}
    for r in range(reps):
        for k in (names if r % 2 == 0 else names[::-1]):
            gc.collect()
            dt, last[k] = await timed(pairs[k])
            samples[k].append(dt)
    return samples, last


async def stream_samples(b: Bench, reps: int, warmup: int) -> dict[str, float]:
    """The chain invoked, and streamed live (astream), interleaved: median wall times
    and the median time to the first chunk."""
    plain: list[float] = []
    walls: list[float] = []
    firsts: list[float] = []
    for r in range(warmup + reps):
        dt, _ = await timed(lambda: b.graph_chain(b.chain, "chain"))
        first, wall = await b.graph_chain_streamed()
        if r >= warmup:
            plain.append(dt)
            walls.append(wall)
            firsts.append(first)
    return {"plain": statistics.median(plain), "streamed": statistics.median(walls),
            "first": statistics.median(firsts)}


async def tracing_samples(client: Client, b: Bench, reps: int, warmup: int
                          ) -> dict[str, float]:
    """The chain on a worker and client that trace (graphrun.tracing), interleaved with the
    plain chain: LangSmith to a local endpoint that drops what it gets, and OpenTelemetry
    through a BatchSpanProcessor to an exporter that counts spans and drops them. Median
    wall times, and CPU of this process per call."""
    import langsmith
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    from graphrun.client import GraphClient
    from graphrun.tracing import GraphTracing, LangSmithTracing, OpenTelemetryTracing
    from graphrun.worker import create_worker

    class Counting(SpanExporter):
        """Counts what it is sent and keeps none of it (as an exporter that ships spans)."""

        def __init__(self) -> None:
            self.count = 0

        def export(self, spans: Any) -> SpanExportResult:
            self.count += len(spans)
            return SpanExportResult.SUCCESS

    chain = build_chain("chain", False)
    provider = TracerProvider()
    exporter = Counting()
    provider.add_span_processor(BatchSpanProcessor(exporter))
    # The endpoint in a process of its own, as LangSmith is: this one pays for sending only.
    with subprocess.Popen([sys.executable, "-m", "tests.temporal.fake_langsmith", "--sink"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                          cwd=Path(__file__).resolve().parent.parent) as sink:
        assert sink.stdout is not None and sink.stdin is not None
        url = sink.stdout.readline().strip()
        ls_client = langsmith.Client(api_url=url, api_key="lsv2-bench")
        tracers = {"langsmith": GraphTracing(LangSmithTracing(client=ls_client)),
                   "otel": GraphTracing(OpenTelemetryTracing(tracer_provider=provider))}
        workers = [create_worker(client, {"chain": chain}, task_queue=f"{TQ_TRACE}-{k}",
                                 tracing=t) for k, t in tracers.items()]
        graphs = {k: GraphClient(client, task_queue=f"{TQ_TRACE}-{k}", tracing=t).graph("chain")
                  for k, t in tracers.items()}
        from langchain_core.callbacks import BaseCallbackHandler

        class Listening(BaseCallbackHandler):
            """A handler that hears every run (so the nodes' runs are relayed) and keeps
            nothing."""

        last_cb: list[str] = []

        async def with_callbacks() -> str:
            tid = new_id("chain-cb")
            out = await b.chain.ainvoke({"n": 0}, {"configurable": {"thread_id": tid},
                                                   "callbacks": [Listening()]})
            assert out == {"n": CHAIN}, out
            last_cb[:] = [tid]
            return tid

        calls = {"plain": lambda: b.graph_chain(b.chain, "chain"),
                 "langsmith": lambda: b.graph_chain(graphs["langsmith"], "chain-ls"),
                 "otel": lambda: b.graph_chain(graphs["otel"], "chain-otel"),
                 "callbacks": with_callbacks}
        walls: dict[str, list[float]] = {k: [] for k in calls}
        cpus: dict[str, list[float]] = {k: [] for k in calls}
        async with workers[0], workers[1]:
            for r in range(warmup + reps):
                for k in (list(calls) if r % 2 == 0 else list(calls)[::-1]):
                    gc.collect()
                    c0 = cpu_seconds()
                    dt, _ = await timed(calls[k])
                    if r >= warmup:
                        walls[k].append(dt)
                        cpus[k].append(cpu_seconds() - c0)
        for t in tracers.values():
            t.flush()
        sink.stdin.close()
    # every run: client + workflow + 10 nodes, as 12 spans per call
    provider.force_flush()
    assert exporter.count >= 12 * (reps + warmup), exporter.count
    out = {k: statistics.median(v) for k, v in walls.items()}
    out.update({f"{k}-cpu": statistics.median(v) for k, v in cpus.items()})
    # What relaying costs in history: the thread of a run with callbacks against a plain one.
    plain_tid = await b.graph_chain(b.chain, "chain")
    gcl = b.chain.gc
    out["callbacks-bytes"] = (await history_stats(client, gcl.workflow_id(last_cb[0])))["bytes"]
    out["plain-bytes"] = (await history_stats(client, gcl.workflow_id(plain_tid)))["bytes"]
    return out


def cpu_seconds() -> float:
    """CPU time of this process (workers, client, their threads) so far."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


async def approval_samples(b: Bench, reps: int, warmup: int
                           ) -> tuple[dict[str, list[float]], dict[str, list[float]],
                                      dict[str, str]]:
    """Pause (start to first answer) and resume (to final result), interleaved."""
    pause: dict[str, list[float]] = {"floor": [], "graphrun": []}
    resume: dict[str, list[float]] = {"floor": [], "graphrun": []}
    ops = {"floor": (b.floor_pause, b.floor_resume),
           "graphrun": (b.graph_pause, b.graph_resume)}
    last: dict[str, str] = {}
    for r in range(warmup + reps):
        order = ["floor", "graphrun"] if r % 2 == 0 else ["graphrun", "floor"]
        for k in order:
            start, res = ops[k]
            gc.collect()
            dt1, wid = await timed(start)
            gc.collect()
            dt2, _ = await timed(lambda res=res, wid=wid: res(wid))
            if r >= warmup:
                pause[k].append(dt1)
                resume[k].append(dt2)
            last[k] = wid
    return pause, resume, last


def server_cpu_s() -> float:
    """CPU seconds used so far by this process's children (the dev server)."""
    import os
    total, me, tick = 0.0, os.getpid(), os.sysconf("SC_CLK_TCK")
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me:
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


async def throughput(b: Bench, n: int, rounds: int) -> dict[str, dict[str, float]]:
    """n approvals at once (all paused, then all resumed): the floor, graphrun, and
    graphrun with its GraphStatus/GraphName upserts off, in turn. Per contender: the
    best round's approvals per second, and the mean CPU ms per approval of this process
    (workers and client) and of the dev server."""
    names = ["floor", "graphrun", "graphrun-no-sa"]
    rates: dict[str, list[float]] = {k: [] for k in names}
    cpu: dict[str, list[tuple[float, float]]] = {k: [] for k in names}
    ops = {"floor": (b.floor_pause, b.floor_resume),
           "graphrun": (b.graph_pause, b.graph_resume),
           "graphrun-no-sa": (lambda: b.graph_pause(b.approval_no_sa),
                              lambda t: b.graph_resume(t, b.approval_no_sa))}
    for r in range(rounds):
        for k in (names if r % 2 == 0 else names[::-1]):
            pause, resume = ops[k]
            gc.collect()
            t0, c0, s0 = time.perf_counter(), time.process_time(), server_cpu_s()
            ids = await asyncio.gather(*(pause() for _ in range(n)))
            await asyncio.gather(*(resume(i) for i in ids))
            rates[k].append(n / (time.perf_counter() - t0))
            cpu[k].append(((time.process_time() - c0) * 1e3 / n,
                           (server_cpu_s() - s0) * 1e3 / n))
    return {k: {"rate": max(rates[k]), "cpu": statistics.mean(c for c, _ in cpu[k]),
                "server": statistics.mean(s for _, s in cpu[k])} for k in names}


# -- history -------------------------------------------------------------------------------
def payload_bytes(msg: Any) -> int:
    """Sum of len(Payload.data) over every Payload anywhere inside a protobuf message."""
    from google.protobuf.message import Message
    from temporalio.api.common.v1 import Payload
    if isinstance(msg, Payload):
        return len(msg.data)
    total = 0
    for field, value in msg.ListFields():
        if field.type != field.TYPE_MESSAGE:
            continue
        if isinstance(value, Message):
            vals = [value]
        elif field.message_type.GetOptions().map_entry:
            vals = list(value.values())
        else:  # repeated
            vals = list(value)
        for v in vals:
            if isinstance(v, Message):
                total += payload_bytes(v)
    return total


async def history_stats(client: Client, wid: str) -> dict[str, Any]:
    from temporalio.api.enums.v1 import EventType
    hist = await client.get_workflow_handle(wid).fetch_history()
    by_type: Counter[str] = Counter()
    bytes_by_type: Counter[str] = Counter()
    for ev in hist.events:
        name = EventType.Name(ev.event_type).removeprefix("EVENT_TYPE_")
        by_type[name] += 1
        bytes_by_type[name] += payload_bytes(ev)
    return {"events": len(hist.events), "bytes": sum(bytes_by_type.values()),
            "by_type": by_type, "bytes_by_type": bytes_by_type,
            "proto": sum(ev.ByteSize() for ev in hist.events)}


# -- soak ------------------------------------------------------------------------------------
def rss_kb() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


async def scale(client: Client, n: int, approval_graph: Any) -> dict[str, dict[str, float]]:
    """n approvals paused on one worker with max_cached_workflows=100, then all resumed
    (50 at a time, each waiting for its final result): the floor first, then graphrun,
    each on its own worker and queue. Wall time, and this process's peak RSS above its
    level before (the workers run in this process)."""
    from graphrun import Command
    from graphrun.client import GraphClient
    from graphrun.worker import create_worker
    out: dict[str, dict[str, float]] = {}
    sem = asyncio.Semaphore(50)

    async def measure(kind: str, worker: Any, pause: Any, resume: Any) -> None:
        peak, stop = [0], asyncio.Event()

        async def sampler() -> None:
            while not stop.is_set():
                peak[0] = max(peak[0], rss_kb())
                await asyncio.sleep(0.05)

        async def gated(fn: Any, x: Any) -> Any:
            async with sem:
                return await fn(x)

        gc.collect()
        base = rss_kb()
        async with worker:
            samp = asyncio.create_task(sampler())
            t0 = time.perf_counter()
            ids = await asyncio.gather(*(gated(pause, i) for i in range(n)))
            t1 = time.perf_counter()
            await asyncio.gather(*(gated(resume, i) for i in ids))
            t2 = time.perf_counter()
            stop.set()
            await samp
        out[kind] = {"pause": t1 - t0, "resume": t2 - t1, "rss_mb": (peak[0] - base) / 1024}

    async def floor_pause(_: int) -> str:
        wid = new_id("scale-floor")
        op = WithStartWorkflowOperation(
            "FloorWorkflow", True, id=wid, task_queue="bench-scale-floor",
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING)
        await client.execute_update_with_start_workflow(
            "invoke", 1, start_workflow_operation=op, result_type=dict)
        return wid

    async def floor_resume(wid: str) -> None:
        await client.get_workflow_handle(wid).execute_update("resume_update", 1,
                                                             result_type=dict)

    await measure("floor", Worker(client, task_queue="bench-scale-floor",
                                  workflows=[FloorWorkflow], activities=[noop],
                                  workflow_runner=sandbox_runner(), max_cached_workflows=100),
                  floor_pause, floor_resume)
    graph = GraphClient(client, task_queue="bench-scale-graphrun").graph("approval")

    async def graph_pause(_: int) -> str:
        tid = new_id("scale-graphrun")
        await graph.ainvoke({"request": "scale"}, {"configurable": {"thread_id": tid}})
        return tid

    async def graph_resume(tid: str) -> None:
        out_ = await graph.ainvoke(Command(resume=True), {"configurable": {"thread_id": tid}})
        assert out_.get("approved") is True, out_

    await measure("graphrun", create_worker(client, {"approval": approval_graph},
                                            task_queue="bench-scale-graphrun",
                                            max_cached_workflows=100),
                  graph_pause, graph_resume)
    return out


async def soak(client: Client, n: int, approval_graph: Any) -> dict[str, Any]:
    from graphrun.client import GraphClient
    from graphrun.visibility import GRAPH_STATUS
    from graphrun.worker import create_worker
    sgc = GraphClient(client, task_queue=TQ_SOAK)
    graph = sgc.graph("approval")
    worker = create_worker(client, {"approval": approval_graph}, task_queue=TQ_SOAK,
                           max_cached_workflows=10)
    peak = [0]
    stop = asyncio.Event()

    async def sampler() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], rss_kb())
            await asyncio.sleep(0.02)

    gc.collect()
    base = rss_kb()
    maxrss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    sem = asyncio.Semaphore(50)
    tids = [new_id("soak") for _ in range(n)]

    async def pause(tid: str) -> None:
        async with sem:
            out = await graph.ainvoke({"request": "soak"}, {"configurable": {"thread_id": tid}})
            assert "__interrupt__" in out, out

    async def resume(tid: str) -> None:
        async with sem:
            await sgc.resume(tid, True)

    async def done(tid: str) -> bool:
        """The thread's graph has ended (its workflow stays open: threads live until
        deleted), as its own GraphStatus says, not visibility's lagging copy."""
        async with sem:
            d = await client.get_workflow_handle(sgc.workflow_id(tid)).describe()
            return d.typed_search_attributes.get(GRAPH_STATUS) == "done"

    async with worker:
        samp = asyncio.create_task(sampler())
        t0 = time.perf_counter()
        await asyncio.gather(*(pause(t) for t in tids))
        t1 = time.perf_counter()
        await asyncio.gather(*(resume(t) for t in tids))
        t2 = time.perf_counter()
        left, polls = list(tids), 0
        while left:
            polls += 1
            flags = await asyncio.gather(*(done(t) for t in left))
            left = [t for t, ok in zip(left, flags, strict=True) if not ok]
            if left:
                await asyncio.sleep(0.1)
            if time.perf_counter() - t2 > 300:
                raise RuntimeError(f"soak: {len(left)} threads not done after 300 s")
        t3 = time.perf_counter()
        stop.set()
        await samp
    return {"n": n, "pause": t1 - t0, "signal": t2 - t1, "resume": t3 - t1, "polls": polls,
            "rss_base_mb": base / 1024, "rss_peak_mb": peak[0] / 1024,
            "maxrss_before_mb": maxrss_before / 1024,
            "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


# -- driver --------------------------------------------------------------------------------------
def ms(x: float) -> str:
    return f"{x * 1e3:8.2f} ms"


def print_tracing(traced: dict[str, float]) -> None:
    print(f"tracing: the chain traced takes {ms(traced['langsmith'])} with LangSmith and "
          f"{ms(traced['otel'])} with OpenTelemetry, against {ms(traced['plain'])} untraced; "
          f"CPU of this process per call {ms(traced['langsmith-cpu'])}, "
          f"{ms(traced['otel-cpu'])} and {ms(traced['plain-cpu'])}")
    print(f"callbacks: the chain with a callback handler (its nodes' runs relayed from the "
          f"worker) takes {ms(traced['callbacks'])}, CPU {ms(traced['callbacks-cpu'])}; "
          f"its history carries {traced['callbacks-bytes']:,.0f} payload bytes against "
          f"{traced['plain-bytes']:,.0f}")


def tracing_line(traced: dict[str, float]) -> str:
    return (f"tracing-on: chain langsmith={traced['langsmith'] / traced['plain']:.3f} "
            f"otel={traced['otel'] / traced['plain']:.3f} "
            f"callbacks={traced['callbacks'] / traced['plain']:.3f} "
            f"callbacks-bytes={traced['callbacks-bytes'] / traced['plain-bytes']:.2f}")


async def run_tracing_only(args: argparse.Namespace) -> None:
    """--tracing-only: the tracing case alone (its last line is tracing-on: ...)."""
    from graphrun.client import GraphClient, data_converter
    from graphrun.devserver import DevServer
    from graphrun.worker import create_worker

    async with DevServer(ui=False) as srv:
        client = await Client.connect(srv.address, data_converter=data_converter)
        chain = build_chain("chain", False)
        async with create_worker(client, {"chain": chain}, task_queue=TQ_GRAPH, tracing=None):
            b = Bench(client, GraphClient(client, task_queue=TQ_GRAPH, tracing=None))
            traced = await tracing_samples(client, b, args.reps, args.warmup)
    print(f"(median of {args.reps} interleaved reps after {args.warmup} warm-up)")
    print_tracing(traced)
    print(tracing_line(traced))


async def run(args: argparse.Namespace) -> None:
    if args.tracing_only:
        await run_tracing_only(args)
        return
    from graphrun.client import GraphClient, data_converter
    from graphrun.devserver import DevServer
    from graphrun.worker import create_worker

    reps, warmup = args.reps, args.warmup
    graphs = {"chain": build_chain("chain", False),
              "local_chain": build_chain("local_chain", True),
              "approval": build_approval("approval")}
    t_start = time.perf_counter()
    async with DevServer(ui=False) as srv:
        client = await Client.connect(srv.address, data_converter=data_converter)
        gworker = create_worker(client, graphs, task_queue=TQ_GRAPH, tracing=None)
        fworker = Worker(client, task_queue=TQ_FLOOR, workflows=[FloorWorkflow],
                         activities=[noop], workflow_runner=sandbox_runner())
        gcl = GraphClient(client, task_queue=TQ_GRAPH, tracing=None)
        b = Bench(client, gcl)
        rows: list[tuple[str, float, float, int]] = []  # name, floor, graphrun, steps
        hist_ids: dict[str, tuple[str, str]] = {}
        async with gworker, fworker:
            s, last = await interleave({"floor": b.floor_chain,
                                        "graphrun": lambda: b.graph_chain(b.chain, "chain")},
                                       reps, warmup)
            rows.append(("chain", statistics.median(s["floor"]),
                         statistics.median(s["graphrun"]), CHAIN))
            hist_ids["chain"] = (last["floor"], last["graphrun"])
            streamed = await stream_samples(b, reps, warmup)
            traced = await tracing_samples(client, b, reps, warmup)
            pause, resume, last = await approval_samples(b, reps, warmup)
            rows.append(("approval", statistics.median(pause["floor"]),
                         statistics.median(pause["graphrun"]), 1))
            rows.append(("resume", statistics.median(resume["floor"]),
                         statistics.median(resume["graphrun"]), 1))
            hist_ids["approval"] = (last["floor"], last["graphrun"])
            s, last = await interleave(
                {"floor": b.floor_chain,
                 "graphrun": lambda: b.graph_chain(b.local_chain, "local-chain")},
                reps, warmup)
            rows.append(("local-chain", statistics.median(s["floor"]),
                         statistics.median(s["graphrun"]), CHAIN))
            hist_ids["local-chain"] = (last["floor"], last["graphrun"])
            # informational: graphrun local nodes vs a floor of local activities
            s, last = await interleave(
                {"floor": b.floor_local_chain,
                 "graphrun": lambda: b.graph_chain(b.local_chain, "local-chain")},
                reps, warmup)
            rows.append(("local/local", statistics.median(s["floor"]),
                         statistics.median(s["graphrun"]), CHAIN))
            hist_ids["local/local"] = (last["floor"], last["graphrun"])
            hist = {k: (await history_stats(client, f), await history_stats(client, g))
                    for k, (f, g) in hist_ids.items()}
            tput = await throughput(b, 100, 4 if args.quick else 6)
        t_bench = time.perf_counter() - t_start
        soak_res = await soak(client, args.soak, graphs["approval"]) if args.soak else None
        scale_res = await scale(client, args.scale, graphs["approval"]) if args.scale else None

    ratio = {name: g / f for name, f, g, _ in rows}
    head = (f"{'case':<12} {'floor/call':>12} {'graphrun/call':>14} {'floor/step':>12} "
            f"{'graphrun/step':>14} {'ratio':>6}")
    print(head)
    print("-" * len(head))
    for name, f, g, steps in rows:
        print(f"{name:<12} {ms(f):>12} {ms(g):>14} {ms(f / steps):>12} {ms(g / steps):>14} "
              f"{ratio[name]:>6.2f}")
    print(f"(median of {reps} interleaved reps after {warmup} warm-up; step = activity; "
          f"approval = start to first pause, resume = resume to final result;\n"
          f" local/local = local-chain vs a floor of 10 local activities, not in the last line)")
    print(f"{'history':<12} {'events fl/gr':>13} {'ratio':>6} {'payload B fl/gr':>17} "
          f"{'ratio':>6} {'proto B fl/gr':>15}")
    for k, (hf, hg) in hist.items():
        print(f"{k:<12} {hf['events']:>6}/{hg['events']:<6} {hg['events'] / hf['events']:>6.2f} "
              f"{hf['bytes']:>8}/{hg['bytes']:<8} {hg['bytes'] / max(hf['bytes'], 1):>6.2f} "
              f"{hf['proto']:>7}/{hg['proto']:<7}")
    for k in ("chain", "approval"):
        top = hist[k][1]["bytes_by_type"].most_common(4)
        print(f"  graphrun {k} payload bytes by event: " +
              ", ".join(f"{t.lower()}={v}" for t, v in top))
    if soak_res:
        r = soak_res
        print(f"soak {r['n']} approval threads (max_cached_workflows=10): pause all "
              f"{r['pause']:.2f} s ({r['n'] / r['pause']:.0f}/s), signal all {r['signal']:.2f} s, "
              f"resume->all done {r['resume']:.2f} s ({r['polls']} polls); RSS "
              f"{r['rss_base_mb']:.0f} -> peak {r['rss_peak_mb']:.0f} MB, "
              f"ru_maxrss {r['maxrss_mb']:.0f} MB")
    if scale_res:
        f_, g_ = scale_res["floor"], scale_res["graphrun"]
        print(f"scale {args.scale} approvals, one worker, max_cached_workflows=100, 50 at a "
              f"time: pause all floor {f_['pause']:.1f} s / graphrun {g_['pause']:.1f} s, "
              f"resume all floor {f_['resume']:.1f} s / graphrun {g_['resume']:.1f} s; peak "
              f"RSS above start floor {f_['rss_mb']:.0f} MB / graphrun {g_['rss_mb']:.0f} MB")
    print(f"stream: the chain streamed live takes {ms(streamed['streamed'])} against "
          f"{ms(streamed['plain'])} invoked ({streamed['streamed'] / streamed['plain']:.2f}x); "
          f"first chunk after {ms(streamed['first'])}")
    print_tracing(traced)
    print("throughput, 100 approvals at once (paused, then resumed), best round; CPU ms per "
          "approval, this process (workers, client) + dev server:")
    for k, v in tput.items():
        print(f"  {k:<15} {v['rate']:5.0f}/s   cpu {v['cpu']:5.1f} + {v['server']:5.1f} ms")
    print(f"(bench {t_bench:.1f} s)", file=sys.stderr)
    payload = max(hist[k][1]["bytes"] / max(hist[k][0]["bytes"], 1)
                  for k in ("chain", "approval"))
    print(tracing_line(traced))
    print(f"temporal-vs-floor: chain={ratio['chain']:.2f} approval={ratio['approval']:.2f} "
          f"resume={ratio['resume']:.2f} local-chain={ratio['local-chain']:.2f} "
          f"payload={payload:.2f} throughput={tput['graphrun']['rate'] / tput['floor']['rate']:.2f}")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer reps, soak 50 (< 3 minutes)")
    p.add_argument("--reps", type=int, help="repetitions per side (default 9 quick / 31)")
    p.add_argument("--warmup", type=int, help="warm-up calls per side (default 2 quick / 5)")
    p.add_argument("--soak", type=int, help="approval threads paused at once "
                   "(default 50 quick / 200; 0 skips)")
    p.add_argument("--scale", type=int, help="approvals paused on one worker, then resumed, "
                   "graphrun vs floor (default 0 quick / 2000; 0 skips)")
    p.add_argument("--tracing-only", action="store_true",
                   help="only what tracing costs on the chain (ends with tracing-on: ...)")
    args = p.parse_args(argv)
    args.reps = args.reps or (9 if args.quick else 31)
    args.warmup = args.warmup if args.warmup is not None else (2 if args.quick else 5)
    if args.soak is None:
        args.soak = 50 if args.quick else 200
    if args.scale is None:
        args.scale = 0 if args.quick else 2000
    asyncio.run(run(args))


if __name__ == "__main__":
    # The workflow sandbox re-imports a workflow's module by name and cannot import
    # __main__, so run the copy of this file imported as bench.temporal.
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench import temporal as _bench_temporal
    _bench_temporal.main()
