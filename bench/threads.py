"""Threads at scale through the LangGraph Server API: create, search, count, idle memory, resume.

    python bench/threads.py            # 1,000 then 20,000 threads; 10,000 paused (~10 min)
    python bench/threads.py --quick    # 300 then 3,000 threads; 1,000 paused (~1-2 min)
    python bench/threads.py --small 2000 --large 50000 --rss 0 --reps 15

One `DevServer(ui=False)` (graphrun's search attributes and dynamic config). The API
(`graphrun.server.build_app`, served by uvicorn on a free port) and a worker
(`create_worker`, examples.purchase's graph, graphrun's default `max_cached_workflows`
of 500) run on an event loop of their own in a daemon thread of this process, as
tests/server/conftest.py hosts them; this process's main loop holds the clients
(httpx.AsyncClient, at most `--concurrency` requests in flight).

- create: `POST /threads` with metadata {"user": "u<i % 50>", "n": i}: threads per
  second over every thread created (the first --small, then up to --large), and until
  the server and worker were idle again (each thread's first workflow task done).
  Against a floor measured last in the same run: open workflows that do nothing
  (bench/noop_workflow.py) started with the client alone, what Temporal itself costs;
  and again with the search attributes and memo a thread starts with (its index).
- search and count, at --small threads and again at --large, each the median of
  --reps rounds (after one warm-up round) of: `POST /threads/search` by metadata
  {"user": "u7"}, limit 10, newest first (`search-meta`); a search deep in the list,
  offset half the threads, oldest first (`search-deep`); `POST /threads/count` by that
  metadata (`count-meta`) and of every thread (`count-total`). Before each size,
  visibility is waited for until Temporal counts every thread created, then until the
  dev server and this process are idle (two seconds in a row under 0.15 CPU-seconds):
  the threads' first workflow tasks trail the API's answers, and queries measured
  during that backlog would measure the backlog, not the number of threads. Exactness is
  checked once per size: the counts equal what was created, search-meta returns the
  newest u7 threads, search-deep the threads about half-way in creation order.
- rss: a worker SUBPROCESS (`graphrun worker --graph examples.purchase:graph`, on its
  own task queue) and its VmRSS: before any thread, then with --rss threads paused on
  it (each ran to its `interrupt()`, started with GraphClient from this process), and
  after they sat idle --sit seconds. Temporal's sticky cache keeps at most
  max_cached_workflows (graphrun's default 500) of them in memory and evicts the least recently used; it
  evicts nothing for idleness.
- resume: --resumes threads created and paused (`runs/wait`) at the very start, resumed
  (`runs/wait` with `command: {"resume": true}`) at the end, after everything above
  evicted them from the API worker's cache, against threads created and paused just
  before their resume; interleaved, medians.

Every figure is printed with its target (none is asserted). The last line is
`threads: create=<n>/s (floor <n>/s, indexed <n>/s); search20k/1k=<r>; count20k/1k=<r>;
rss+<MB>MB; resume-idle/fresh=<r>`: the ratios are large/small (whatever --small and --large are;
the worse of the two searches, the worse of the two counts), rss the larger of the
worker's RSS increase with the threads paused and after they sat.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GRAPH = "purchase"
SPEC = "examples.purchase:graph"
PURCHASE = {"item": "GPU rental, 8 hours", "amount": 96.0, "status": "pending"}
USERS = 50
PROBE = "u7"  # the user the metadata queries ask for
QUERIES = ("search-meta", "search-deep", "count-meta", "count-total")
TARGET_CREATE = 100.0  # threads/s
TARGET_SCALE = 1.5  # large/small latency
TARGET_RSS = 100.0  # MB
TARGET_RESUME = 1.2  # idle/fresh


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ms(x: float) -> str:
    return f"{x * 1e3:.1f} ms"


# -- the API and its worker, on a loop of their own -------------------------------------------
class ApiHost:
    """The API (uvicorn) and a worker for its task queue in a daemon thread with its own
    event loop (tests/server/conftest.py's _ApiHost), so the clients' loop never starves
    them."""

    def __init__(self, address: str, queue: str) -> None:
        self.port = free_port()
        self.queue = queue
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(address,), daemon=True)
        self._thread.start()
        if not self._ready.wait(120) or self._error is not None:
            raise RuntimeError(f"the API host did not start: {self._error!r}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _run(self, address: str) -> None:
        try:
            self._loop.run_until_complete(self._main(address))
        except BaseException as exc:
            self._error = exc
            self._ready.set()

    async def _main(self, address: str) -> None:
        import uvicorn
        from temporalio.client import Client

        from examples import purchase
        from graphrun.client import GraphClient, data_converter
        from graphrun.server import build_app
        from graphrun.worker import create_worker

        client = await Client.connect(address, data_converter=data_converter)
        graphs = {GRAPH: purchase.graph}
        self.app = build_app(GraphClient(client, task_queue=self.queue, tracing=None),
                             graphs, api_keys=[])
        self.server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port,
                                                    log_level="warning", lifespan="off",
                                                    timeout_keep_alive=75))
        async with create_worker(client, graphs, task_queue=self.queue, tracing=None):
            await until_polled(client, self.queue)
            serving = asyncio.ensure_future(self.server.serve())
            while not self.server.started and not serving.done():
                await asyncio.sleep(0.02)
            self._ready.set()
            await serving

    def close(self) -> None:
        from graphrun.server import protocol

        # uvicorn runs without lifespan here: stop the threads' event feeds as it would
        self._loop.call_soon_threadsafe(protocol.close, self.app)
        self._loop.call_soon_threadsafe(setattr, self.server, "should_exit", True)
        self._thread.join(30)


async def until_polled(client: Any, queue: str) -> None:
    """Until a worker polls `queue`: before that Temporal refuses updates ("no poller seen")."""
    from temporalio.api.enums.v1 import TaskQueueType
    from temporalio.api.taskqueue.v1 import TaskQueue
    from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
    for _ in range(1200):
        found = await client.workflow_service.describe_task_queue(DescribeTaskQueueRequest(
            namespace=client.namespace, task_queue=TaskQueue(name=queue),
            task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW))
        if found.pollers:
            return
        await asyncio.sleep(0.05)
    raise RuntimeError(f"no worker polled {queue} within 60 s")


# -- the API's calls ---------------------------------------------------------------------------
class Api:
    def __init__(self, http: Any) -> None:
        self.http = http

    async def post(self, path: str, body: dict[str, Any]) -> Any:
        r = await self.http.post(path, json=body)
        if r.status_code != 200:
            raise RuntimeError(f"POST {path} {body}: {r.status_code} {r.text[:300]}")
        return r.json()

    async def create(self, metadata: dict[str, Any]) -> str:
        return str((await self.post("/threads", {"metadata": metadata}))["thread_id"])

    async def pause(self, metadata: dict[str, Any]) -> str:
        """A thread created by `POST /threads`, then run to its interrupt."""
        tid = await self.create(metadata)
        out = await self.post(f"/threads/{tid}/runs/wait",
                              {"assistant_id": GRAPH, "input": PURCHASE})
        if "__interrupt__" not in out:
            raise RuntimeError(f"thread {tid} did not pause: {out}")
        return tid

    async def resume(self, tid: str) -> None:
        out = await self.post(f"/threads/{tid}/runs/wait",
                              {"assistant_id": GRAPH, "command": {"resume": True}})
        if out.get("status") != "charged":
            raise RuntimeError(f"thread {tid} did not finish: {out}")


async def bounded(n: int, concurrency: int, fn: Callable[[int], Awaitable[Any]]) -> list[Any]:
    """fn(0) .. fn(n - 1), at most `concurrency` at once; results in order."""
    out: list[Any] = [None] * n
    it = iter(range(n))

    async def lane() -> None:
        for i in it:
            out[i] = await fn(i)

    await asyncio.gather(*(lane() for _ in range(min(concurrency, n))))
    return out


async def settled(cpu: Cpu, timeout: float = 600.0) -> float:
    """Until the dev server and this process (API, worker) are idle: each thread's first
    workflow task, and what it writes to visibility, trail the API's answer by seconds
    when thousands are created at once. Seconds waited, the two idle seconds that end it included."""
    t0 = time.perf_counter()
    quiet = 0
    while quiet < 2 and time.perf_counter() - t0 < timeout:
        a = cpu.now()
        await asyncio.sleep(1.0)
        busy = sum(y - x for x, y in zip(a, cpu.now(), strict=True))
        quiet = quiet + 1 if busy < 0.15 else 0
    return time.perf_counter() - t0


async def visible(client: Any, expected: int, timeout: float = 120.0) -> float:
    """Wait until Temporal's visibility counts `expected` open threads; seconds waited."""
    t0 = time.perf_counter()
    query = "WorkflowType IN ('GraphWorkflow', 'ThreadRecord') AND ExecutionStatus = 'Running'"
    while True:
        n = (await client.count_workflows(query)).count
        if n >= expected:
            return time.perf_counter() - t0
        if time.perf_counter() - t0 > timeout:
            raise RuntimeError(f"visibility counts {n} threads, not {expected}, "
                               f"after {timeout:.0f} s")
        await asyncio.sleep(0.2)


# -- search and count ------------------------------------------------------------------------
def bodies(total: int) -> dict[str, tuple[str, dict[str, Any]]]:
    return {
        "search-meta": ("/threads/search", {"metadata": {"user": PROBE}, "limit": 10,
                                            "sort_by": "created_at", "sort_order": "desc"}),
        "search-deep": ("/threads/search", {"limit": 10, "offset": total // 2,
                                            "sort_by": "created_at", "sort_order": "asc"}),
        "count-meta": ("/threads/count", {"metadata": {"user": PROBE}}),
        "count-total": ("/threads/count", {}),
    }


async def queries(api: Api, total: int, reps: int) -> tuple[dict[str, float], dict[str, Any]]:
    """Median latency of each query over `reps` rounds (rotated order, one warm-up round),
    and each query's answer in the warm-up round."""
    qs = bodies(total)
    names = list(QUERIES)
    samples: dict[str, list[float]] = {k: [] for k in names}
    answers: dict[str, Any] = {}
    for r in range(reps + 1):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            path, body = qs[name]
            t0 = time.perf_counter()
            out = await api.post(path, body)
            dt = time.perf_counter() - t0
            if r == 0:
                answers[name] = out
            else:
                samples[name].append(dt)
    return {k: statistics.median(v) for k, v in samples.items()}, answers


def exactness(answers: dict[str, Any], created: int, idle: int, concurrency: int
              ) -> tuple[bool, str]:
    """Whether the answers are what `created` bench threads (n = 0..created-1, created in
    order, `concurrency` at once) after `idle` others make them; and what was seen."""
    total = created + idle
    probe = [i for i in range(created) if i % USERS == int(PROBE[1:])]
    notes, ok = [], True
    c = answers["count-meta"]
    ok &= c == len(probe)
    notes.append(f"count {PROBE} {c}/{len(probe)}")
    c = answers["count-total"]
    ok &= c == total
    notes.append(f"total {c}/{total}")
    found = answers["search-meta"]
    ns = [t.get("metadata", {}).get("n") for t in found]
    users = {t.get("metadata", {}).get("user") for t in found}
    newest = sorted(probe, reverse=True)[:10]
    good = users <= {PROBE} and ns == newest
    ok &= good
    notes.append(f"search {PROBE} newest " + ("yes" if good else f"NO (n={ns[:10]}, "
                                                                   f"want {newest})"))
    deep = [t.get("metadata", {}).get("n") for t in answers["search-deep"]]
    # Position p (oldest first) holds the bench thread n ~ p - idle, give or take what
    # was in flight at once.
    lo, hi = total // 2 - idle - concurrency, total // 2 - idle + 10 + concurrency
    good = len(deep) == 10 and all(isinstance(n, int) and lo <= n <= hi for n in deep)
    ok &= good
    shown = (f"{min(deep)}..{max(deep)}" if deep and all(isinstance(n, int) for n in deep)
             else f"{deep}")
    notes.append(f"deep {len(deep)} threads n {shown}" + ("" if good else f" (want {lo}..{hi})"))
    return ok, ", ".join(notes)


# -- a worker's memory -------------------------------------------------------------------------
def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    out = []
    for p in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{p}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(p))
        except OSError:
            continue
    return out


class Cpu:
    """CPU seconds of this process (clients, API, API's worker) and of the dev server
    (this process's children when it is made, before any worker subprocess)."""

    def __init__(self) -> None:
        self.server = children(os.getpid())

    def now(self, *pids: int) -> tuple[float, ...]:
        return (time.process_time(), sum(cpu_s(p) for p in self.server),
                *(cpu_s(p) for p in pids))


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def start_worker(address: str, queue: str, log: Path) -> subprocess.Popen[bytes]:
    """`graphrun worker` in a process of its own, as deployed (bench/server.py)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TEMPORAL_", "GRAPHRUN_"))}
    with open(log, "wb") as out:
        return subprocess.Popen([sys.executable, "-m", "graphrun.cli", "worker", "--graph",
                                 SPEC, "--address", address, "--task-queue", queue],
                                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


async def worker_rss(client: Any, address: str, n: int, sit: float, concurrency: int,
                     logs: Path, cpu: Cpu) -> dict[str, Any]:
    from graphrun.client import GraphClient

    queue = f"bench-threads-rss-{uuid.uuid4().hex[:8]}"
    log = logs / "worker.log"
    proc = start_worker(address, queue, log)
    try:
        await until_polled(client, queue)
        await asyncio.sleep(2.0)  # its start-up settles
        base = rss_mb(proc.pid)
        graph = GraphClient(client, task_queue=queue, tracing=None).graph(GRAPH)
        peak = [base]
        done = asyncio.Event()

        async def sampler() -> None:
            while not done.is_set():
                peak[0] = max(peak[0], rss_mb(proc.pid))
                await asyncio.sleep(0.2)

        async def pause(i: int) -> None:
            out = await graph.ainvoke(PURCHASE, {"configurable": {"thread_id": f"rss-{i}"}})
            if "__interrupt__" not in out:
                raise RuntimeError(f"rss thread {i} did not pause: {out}")

        sampling = asyncio.ensure_future(sampler())
        c0, t0 = cpu.now(proc.pid), time.perf_counter()
        try:
            await bounded(n, concurrency, pause)
        finally:
            done.set()
            await sampling
        t_pause = time.perf_counter() - t0
        c1 = cpu.now(proc.pid)
        paused = rss_mb(proc.pid)
        await asyncio.sleep(sit)
        sat = rss_mb(proc.pid)
        return {"base": base, "paused": paused, "peak": max(peak[0], paused), "sat": sat,
                "rate": n / t_pause,
                "cpu": [(b - a) * 1e3 / n for a, b in zip(c0, c1, strict=True)]}
    except BaseException:
        print(f"-- {log} (last lines):\n" + "\n".join(
            log.read_text(errors="replace").splitlines()[-40:]), file=sys.stderr)
        raise
    finally:
        proc.kill()
        proc.wait()


# -- Temporal's floor --------------------------------------------------------------------------
async def floor(client: Any, n: int, concurrency: int, cpu: Cpu, *, indexed: bool = False
                ) -> dict[str, float]:
    """Open workflows that do nothing, started with the client's `start_workflow` (no HTTP)
    on a worker of their own in this process (Temporal's default options but graphrun's
    autoscaling pollers): per second, and until the server and this process were idle
    again. `indexed`: each with the search attributes and memo a thread made with the
    same metadata starts with (what Temporal's visibility costs a thread); else none.
    Measured last, so its rows trouble no query above."""
    from temporalio.worker import PollerBehaviorAutoscaling, Worker

    from bench.noop_workflow import NoOp
    from graphrun.client import GraphClient

    gc = GraphClient(client)
    queue = f"bench-noop-{uuid.uuid4().hex[:8]}"
    async with Worker(client, task_queue=queue, workflows=[NoOp],
                      workflow_task_poller_behavior=PollerBehaviorAutoscaling()):
        async def start(i: int) -> None:
            metadata = {"user": f"u{i % USERS}", "n": i}
            await client.start_workflow(
                NoOp.run, id=f"{queue}-{i}", task_queue=queue,
                memo={"metadata": metadata} if indexed else None,
                search_attributes=gc.thread_attributes(None, "done", metadata)
                if indexed else None)

        c0, t0 = cpu.now(), time.perf_counter()
        await bounded(n, concurrency, start)
        t_api = time.perf_counter() - t0
        waited = await settled(cpu)
        c1 = cpu.now()
    return {"rate": n / t_api, "settled": n / (t_api + waited - 2.0),
            "cpu": [(b - a) * 1e3 / n for a, b in zip(c0, c1, strict=True)]}


# -- resume after idling -------------------------------------------------------------------------
async def resumes(api: Api, idle: list[str]) -> dict[str, float]:
    """Each idle thread's resume against a fresh one's (created and paused just before),
    alternating which goes first; medians."""
    await api.resume(await api.pause({"bench": "warm-up"}))
    t_idle: list[float] = []
    t_fresh: list[float] = []
    for i, tid in enumerate(idle):
        fresh = await api.pause({"bench": "fresh"})
        pair = [(t_idle, tid), (t_fresh, fresh)]
        for out, t in (pair if i % 2 == 0 else pair[::-1]):
            t0 = time.perf_counter()
            await api.resume(t)
            out.append(time.perf_counter() - t0)
    return {"idle": statistics.median(t_idle), "fresh": statistics.median(t_fresh)}


# -- driver -----------------------------------------------------------------------------------
async def run(args: argparse.Namespace) -> None:
    import httpx
    from temporalio.client import Client

    from graphrun.client import data_converter
    from graphrun.devserver import DevServer
    from graphrun.worker import MAX_CACHED_THREADS

    logs = Path(tempfile.mkdtemp(prefix="bench-threads-"))
    t_start = time.perf_counter()
    sizes = [args.small, args.large]
    latency: dict[int, dict[str, float]] = {}
    exact: dict[int, tuple[bool, str]] = {}
    creates: list[tuple[int, float]] = []  # (threads, seconds) per phase
    drained: list[tuple[int, float]] = []  # ... until the server and worker were idle
    spent = [0.0, 0.0]  # CPU seconds creating: this process, the dev server
    load = os.getloadavg()[0]
    async with DevServer(ui=False) as srv:
        cpu = Cpu()
        client = await Client.connect(srv.address, data_converter=data_converter)
        host = ApiHost(srv.address, f"bench-threads-{uuid.uuid4().hex[:8]}")
        try:
            limits = httpx.Limits(max_connections=args.concurrency + 4,
                                  max_keepalive_connections=args.concurrency + 4)
            async with httpx.AsyncClient(base_url=host.url, limits=limits,
                                         timeout=httpx.Timeout(300.0)) as http:
                api = Api(http)
                # Threads that will sit idle through everything below, then be resumed.
                idle = await bounded(args.resumes, args.concurrency,
                                     lambda i: api.pause({"bench": "idle", "k": i}))
                created = 0

                for size in sizes:
                    async def create(i: int, first: int = created) -> None:
                        n = first + i
                        await api.create({"user": f"u{n % USERS}", "n": n})

                    c0, t0 = cpu.now(), time.perf_counter()
                    await bounded(size - created, args.concurrency, create)
                    creates.append((size - created, time.perf_counter() - t0))
                    spent = [s + b - a for s, a, b in zip(spent, c0, cpu.now(), strict=True)]
                    created = size
                    waited = await visible(client, created + len(idle))
                    backlog = await settled(cpu)
                    drained.append((size - sum(n for n, _ in creates[:-1]),
                                    creates[-1][1] + waited + backlog - 2.0))
                    latency[size], answers = await queries(api, created + len(idle),
                                                           args.reps)
                    exact[size] = exactness(answers, created, len(idle), args.concurrency)
                    print(f"(at {size} threads: visibility caught up in {waited:.1f} s, "
                          f"server and worker idle {backlog:.1f} s later, "
                          f"queries {sum(latency[size].values()) * (args.reps + 1):.1f} s)",
                          file=sys.stderr, flush=True)
                rss = (await worker_rss(client, srv.address, args.rss, args.sit,
                                        args.concurrency, logs, cpu) if args.rss else None)
                resumed = await resumes(api, idle) if idle else None
                base = await floor(client, min(args.small, 2000), args.concurrency, cpu)
                base_indexed = await floor(client, min(args.small, 2000), args.concurrency,
                                           cpu, indexed=True)
        finally:
            host.close()
    t_bench = time.perf_counter() - t_start

    small, large = sizes
    n_created = sum(n for n, _ in creates)
    rate = n_created / sum(t for _, t in creates)
    settled_rate = n_created / sum(t for _, t in drained)
    print(f"threads-create: {rate:.1f}/s (target >= {TARGET_CREATE:.0f}/s; POST /threads, "
          f"{args.concurrency} in flight, {n_created} threads; "
          + ", ".join(f"{n / t:.0f}/s for {n}" for n, t in creates)
          + f"; {settled_rate:.0f}/s until every thread's first "
          f"workflow task was done and the server idle"
          + f"; CPU per thread: this process {spent[0] * 1e3 / n_created:.1f} ms (client, "
          f"API, worker), dev server {spent[1] * 1e3 / n_created:.1f} ms)")
    print(f"threads-create-floor: a workflow that does nothing, started with start_workflow: "
          f"{base['rate']:.0f}/s, {base['settled']:.0f}/s until idle (CPU per workflow: this "
          f"process {base['cpu'][0]:.1f} ms, dev server {base['cpu'][1]:.1f} ms); with a "
          f"thread's search attributes and memo: {base_indexed['rate']:.0f}/s, "
          f"{base_indexed['settled']:.0f}/s until idle (dev server "
          f"{base_indexed['cpu'][1]:.1f} ms); threads until idle / floor until idle = "
          f"{settled_rate / base['settled']:.2f}, / indexed floor = "
          f"{settled_rate / base_indexed['settled']:.2f}")
    ratios = {}
    for q in QUERIES:
        a, b = latency[small][q], latency[large][q]
        ratios[q] = b / a
        print(f"threads-{q}: {ms(a)} at {small}, {ms(b)} at {large}, "
              f"{large}/{small}={ratios[q]:.2f} (target <= {TARGET_SCALE}; median of "
              f"{args.reps})")
    for size in sizes:
        ok, notes = exact[size]
        print(f"threads-exact at {size}: {'OK' if ok else 'MISMATCH'} ({notes})")
    rss_delta = None
    if rss:
        rss_delta = max(rss["paused"], rss["sat"]) - rss["base"]
        print(f"threads-rss: +{rss_delta:.0f} MB with {args.rss} threads paused "
              f"(target within {TARGET_RSS:.0f} MB; worker RSS {rss['base']:.0f} MB empty, "
              f"{rss['paused']:.0f} MB paused (peak {rss['peak']:.0f}), {rss['sat']:.0f} MB "
              f"after {args.sit:.0f} s idle; {(rss['paused'] - rss['base']) * 1024 / args.rss:.1f}"
              f" KB/thread; paused at {rss['rate']:.0f}/s, CPU per thread: worker "
              f"{rss['cpu'][2]:.1f} ms, dev server {rss['cpu'][1]:.1f} ms, this process "
              f"{rss['cpu'][0]:.1f} ms; max_cached_workflows {MAX_CACHED_THREADS}, graphrun's default)")
    if resumed:
        print(f"threads-resume: idle {ms(resumed['idle'])}, fresh {ms(resumed['fresh'])}, "
              f"idle/fresh={resumed['idle'] / resumed['fresh']:.2f} (target <= "
              f"{TARGET_RESUME}; median of {args.resumes} each; runs/wait resume)")
    print(f"(bench {t_bench:.1f} s; 1-minute load average {load:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end, on {os.cpu_count()} CPUs: other processes "
          f"slow every rate; logs in {logs})", file=sys.stderr)
    search = max(ratios["search-meta"], ratios["search-deep"])
    count = max(ratios["count-meta"], ratios["count-total"])
    print(f"threads: create={rate:.0f}/s (floor {base['settled']:.0f}/s, indexed "
          f"{base_indexed['settled']:.0f}/s); search20k/1k={search:.2f}; "
          f"count20k/1k={count:.2f}; "
          + (f"rss+{rss_delta:.0f}MB; " if rss_delta is not None else "rss=skipped; ")
          + (f"resume-idle/fresh={resumed['idle'] / resumed['fresh']:.2f}" if resumed
             else "resume=skipped"))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="300 then 3,000 threads, 1,000 paused, 9 reps (~1-2 minutes)")
    p.add_argument("--small", type=int, help="threads at the first measure (default 1000; "
                   "300 quick)")
    p.add_argument("--large", type=int, help="threads at the second (default 20000; "
                   "3000 quick)")
    p.add_argument("--reps", type=int, help="rounds of the four queries per size (default 15; "
                   "9 quick)")
    p.add_argument("--concurrency", type=int, default=32, help="requests in flight (default 32)")
    p.add_argument("--rss", type=int, help="threads paused on the measured worker (default "
                   "10000; 1000 quick; 0 skips)")
    p.add_argument("--sit", type=float, help="seconds they sit idle before the last RSS "
                   "reading (default 30; 10 quick)")
    p.add_argument("--resumes", type=int, default=20,
                   help="idle threads resumed at the end, and fresh ones (default 20; 0 skips)")
    args = p.parse_args(argv)
    args.small = args.small or (300 if args.quick else 1000)
    args.large = args.large or (3000 if args.quick else 20000)
    args.reps = max(args.reps or (9 if args.quick else 15), 1)
    if args.rss is None:
        args.rss = 1000 if args.quick else 10000
    if args.sit is None:
        args.sit = 10.0 if args.quick else 30.0
    if not 0 < args.small < args.large:
        p.error("--small must be positive and below --large")
    asyncio.run(run(args))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
