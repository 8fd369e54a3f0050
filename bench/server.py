"""The LangGraph Server API (`graphrun serve`) against GraphClient directly, on one dev server.

    python bench/server.py            # 100 approvals at once, 5 rounds each; 21 streams each
    python bench/server.py --quick    # 20 approvals at once, 2 rounds each; 7 streams each
    python bench/server.py -n 200 --rounds 5 --streams 31 --create

One `DevServer(ui=False)`, as bench/temporal.py starts it, and two processes started
with the `graphrun` command, as they are deployed: one worker (`graphrun worker --graph
examples.purchase:graph`) and one API (`graphrun serve --graph examples.purchase:graph`).
This process only holds the clients: LangGraph's SDK (`langgraph_sdk.get_client(url=...)`)
and graphrun's `GraphClient` (`RemoteGraph`), on the same worker and task queue.

Approvals: N purchases at once, each started to its interrupt and then resumed to its
final state (status "charged", checked), both legs waited for:
- server: `runs.wait(thread, "purchase", input=..., if_not_exists="create")`, then
  `runs.wait(thread, "purchase", command={"resume": True})`;
- client: `RemoteGraph.ainvoke(input)`, then `ainvoke(Command(resume=True))`;
- with `--create` (informational): `threads.create()` first, then the same two
  `runs.wait`, as LangGraph's docs do it.
Rounds alternate (S C, C S, ...) after a warm-up; each side's figure is its best round's
wall time. CPU per approval is read from /proc for this process (clients), the API
processes, the worker process and the dev server.

First chunk: one purchase at a time started streamed (`stream_mode="values"`), to its
interrupt, server and client alternating: `runs.stream` (time to its `metadata` event
and to its first `values` event) against `RemoteGraph.astream` (time to its first
chunk); medians.

With `--auth`, a second API process serves the same graph under custom auth
(`graphrun serve --config` of a langgraph.json whose `auth` is LangGraph's "Make
conversations private" handlers: `@auth.authenticate` reads a bearer token, `@auth.on`
stamps the owner into each resource's metadata and filters by it), and its approvals
(`server+auth`, the SDK sending the token) are timed in the same rounds.

The last line is `server-vs-client: time=<r> first-chunk=<r>` (and `create=<r>` with
`--create`, `auth=<r>` with `--auth`): server/client ratios of the best round's time for
N approvals, of the median time to the first `values` chunk, and of the best round's
time with `threads.create` (lower is better); `auth` is server+auth/server (target
<= 1.1).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GRAPH = "purchase"
SPEC = "examples.purchase:graph"
PURCHASE = {"item": "GPU rental, 8 hours", "amount": 96.0, "status": "pending"}
CHARGED = {**PURCHASE, "status": "charged"}


# -- processes ----------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(*args: str, address: str, queue: str, log: Path) -> subprocess.Popen[bytes]:
    """`graphrun ARGS` in a process of its own, its output (and errors) in `log`."""
    # None of the developer's own Temporal settings, keys or API key.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TEMPORAL_", "GRAPHRUN_"))}
    with open(log, "wb") as out:
        return subprocess.Popen([sys.executable, "-m", "graphrun.cli", *args, "--address",
                                 address, "--task-queue", queue], cwd=ROOT, env=env,
                                stdout=out, stderr=subprocess.STDOUT)


def tail(log: Path, lines: int = 40) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


async def until_up(url: str, api: subprocess.Popen[bytes]) -> None:
    import httpx
    async with httpx.AsyncClient() as http:
        for _ in range(1200):
            if api.poll() is not None:
                raise RuntimeError(f"graphrun serve exited with {api.returncode}")
            try:
                if (await http.get(f"{url}/ok")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.05)
    raise RuntimeError("graphrun serve did not answer /ok within 60 s")


async def until_polled(client: Any, queue: str) -> None:
    """Until the worker polls: before that Temporal refuses updates ("no poller seen")."""
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
    raise RuntimeError("the worker did not poll within 60 s")


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
    """CPU seconds of this process, the API, the worker and the dev server."""

    def __init__(self, apis: list[int], worker: int) -> None:
        self.apis, self.worker = apis, worker  # the API processes (with --auth, two)
        self.server = [p for p in children(os.getpid()) if p not in (*apis, worker)]

    def now(self) -> dict[str, float]:
        return {"client": time.process_time(), "api": sum(cpu_s(p) for p in self.apis),
                "worker": cpu_s(self.worker),
                "dev server": sum(cpu_s(p) for p in self.server)}


AUTH_PY = '''
from langgraph_sdk import Auth

auth = Auth()
USERS = {"user1": "user1", "user2": "user2"}


@auth.authenticate
async def get_current_user(authorization: str | None) -> Auth.types.MinimalUserDict:
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or token not in USERS:
        raise Auth.exceptions.HTTPException(status_code=401, detail="Invalid token")
    return {"identity": USERS[token]}


@auth.on
async def owner_only(ctx: Auth.types.AuthContext, value: dict) -> dict:
    filters = {"owner": ctx.user.identity}
    metadata = value.setdefault("metadata", {})
    metadata.update(filters)
    return filters
'''


def write_auth_config(folder: Path) -> Path:
    """A langgraph.json serving the graph under LangGraph's "Make conversations private"
    auth (its handlers as the tutorial writes them)."""
    (folder / "auth.py").write_text(AUTH_PY)
    config = folder / "langgraph.json"
    config.write_text(json.dumps({"graphs": {GRAPH: SPEC}, "auth": {"path": "./auth.py:auth"}}))
    return config


# -- one approval each way ------------------------------------------------------------------
class Sides:
    def __init__(self, sdk: Any, remote: Any, authed: Any = None) -> None:
        self.sdk, self.remote, self.authed = sdk, remote, authed

    async def server(self, create: bool = False, sdk: Any = None) -> None:
        sdk = sdk or self.sdk
        if create:
            tid = (await sdk.threads.create())["thread_id"]
            opts: dict[str, Any] = {}
        else:
            tid, opts = str(uuid.uuid4()), {"if_not_exists": "create"}
        out = await sdk.runs.wait(tid, GRAPH, input=PURCHASE, **opts)
        assert "__interrupt__" in out, out
        done = await sdk.runs.wait(tid, GRAPH, command={"resume": True})
        assert done == CHARGED, done

    async def client(self) -> None:
        from graphrun import Command
        config = {"configurable": {"thread_id": str(uuid.uuid4())}}
        out = await self.remote.ainvoke(PURCHASE, config)
        assert "__interrupt__" in out, out
        done = await self.remote.ainvoke(Command(resume=True), config)
        assert done == CHARGED, done

    async def server_stream(self) -> tuple[float, float]:
        """(time to the metadata event, time to the first values event)."""
        t0 = time.perf_counter()
        meta = first = None
        async for part in self.sdk.runs.stream(str(uuid.uuid4()), GRAPH, input=PURCHASE,
                                               stream_mode="values", if_not_exists="create"):
            if part.event == "metadata":
                meta = meta or time.perf_counter() - t0
            elif part.event == "values" and first is None:
                first = time.perf_counter() - t0
            elif part.event == "error":
                raise RuntimeError(f"runs.stream: {part.data}")
        assert meta is not None and first is not None, (meta, first)
        return meta, first

    async def client_stream(self) -> float:
        t0 = time.perf_counter()
        first = None
        config = {"configurable": {"thread_id": str(uuid.uuid4())}}
        async for _ in self.remote.astream(PURCHASE, config, stream_mode="values"):
            first = first or time.perf_counter() - t0
        assert first is not None
        return first


async def approvals(sides: Sides, cpu: Cpu, n: int, rounds: int, warmup: int, create: bool
                    ) -> dict[str, dict[str, Any]]:
    ops: dict[str, Callable[[], Awaitable[None]]] = {"server": sides.server,
                                                     "client": sides.client}
    if create:
        ops["server+create"] = lambda: sides.server(create=True)
    if sides.authed is not None:
        ops["server+auth"] = lambda: sides.server(sdk=sides.authed)
    for op in ops.values():  # warm-up: connections, caches, the worker's imports
        await asyncio.gather(*(op() for _ in range(warmup)))
    times: dict[str, list[float]] = {k: [] for k in ops}
    spent: dict[str, list[dict[str, float]]] = {k: [] for k in ops}
    names = list(ops)
    for r in range(rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            gc.collect()
            c0, t0 = cpu.now(), time.perf_counter()
            await asyncio.gather(*(ops[name]() for _ in range(n)))
            times[name].append(time.perf_counter() - t0)
            c1 = cpu.now()
            spent[name].append({k: (c1[k] - c0[k]) * 1e3 / n for k in c0})
    return {k: {"best": min(times[k]), "times": times[k],
                "cpu": {p: statistics.mean(s[p] for s in spent[k]) for p in spent[k][0]}}
            for k in ops}


async def first_chunks(sides: Sides, reps: int, warmup: int) -> dict[str, float]:
    meta: list[float] = []
    server: list[float] = []
    client: list[float] = []
    for r in range(warmup + reps):
        order = ["server", "client"] if r % 2 == 0 else ["client", "server"]
        for side in order:
            if side == "server":
                m, f = await sides.server_stream()
                if r >= warmup:
                    meta.append(m)
                    server.append(f)
            else:
                f = await sides.client_stream()
                if r >= warmup:
                    client.append(f)
    return {"metadata": statistics.median(meta), "server": statistics.median(server),
            "client": statistics.median(client)}


# -- driver --------------------------------------------------------------------------------
async def run(args: argparse.Namespace) -> None:
    import httpx
    from langgraph_sdk import get_client
    from temporalio.client import Client

    from graphrun.client import GraphClient, data_converter
    from graphrun.devserver import DevServer

    queue = f"bench-server-{uuid.uuid4().hex[:8]}"
    logs = Path(tempfile.mkdtemp(prefix="bench-server-"))
    t_start = time.perf_counter()
    async with DevServer(ui=False) as srv:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        worker = start("worker", "--graph", SPEC, address=srv.address, queue=queue,
                       log=logs / "worker.log")
        api = start("serve", "--graph", SPEC, "--port", str(port), address=srv.address,
                    queue=queue, log=logs / "api.log")
        procs = [api, worker]
        if args.auth:
            auth_port = free_port()
            auth_url = f"http://127.0.0.1:{auth_port}"
            authed = start("serve", "--config", str(write_auth_config(logs)), "--port",
                           str(auth_port), address=srv.address, queue=queue,
                           log=logs / "api-auth.log")
            procs.append(authed)
        try:
            client = await Client.connect(srv.address, data_converter=data_converter)
            await asyncio.gather(until_polled(client, queue), until_up(url, api),
                                 *([until_up(auth_url, authed)] if args.auth else []))
            # The SDK's defaults, but for the pool timeout: more than 100 requests at once
            # (httpx's connection limit) wait for a connection instead of failing.
            timeout = httpx.Timeout(connect=5, read=300, write=300, pool=300)
            sdk = get_client(url=url, api_key=None, timeout=timeout)
            sides = Sides(sdk, GraphClient(client, task_queue=queue).graph(GRAPH),
                          get_client(url=auth_url, api_key=None,
                                     headers={"Authorization": "Bearer user1"},
                                     timeout=timeout)
                          if args.auth else None)
            cpu = Cpu([p.pid for p in procs if p is not worker], worker.pid)
            res = await approvals(sides, cpu, args.n, args.rounds, args.warmup, args.create)
            first = await first_chunks(sides, args.streams, 2)
        except BaseException:
            for name in ("api", "worker", *(["api-auth"] if args.auth else [])):
                print(f"-- {logs / name}.log (last lines):\n{tail(logs / f'{name}.log')}",
                      file=sys.stderr)
            raise
        finally:
            for p in procs:
                p.kill()
                p.wait()
    t_bench = time.perf_counter() - t_start

    print(f"{args.n} approvals at once (start -> interrupt -> resume -> done), one worker; "
          f"best of {args.rounds} rounds, CPU ms per approval:")
    print(f"  {'':<14} {'time':>8} {'rate':>7}   {'client':>6} {'api':>6} {'worker':>6} "
          f"{'dev srv':>7}   rounds")
    for k, v in res.items():
        c = v["cpu"]
        print(f"  {k:<14} {v['best']:7.2f}s {args.n / v['best']:5.0f}/s   {c['client']:6.1f} "
              f"{c['api']:6.1f} {c['worker']:6.1f} {c['dev server']:7.1f}   "
              + " ".join(f"{t:.2f}" for t in v["times"]))
    print(f"first chunk, stream_mode values, median of {args.streams}: runs.stream "
          f"metadata {first['metadata'] * 1e3:.1f} ms, first values "
          f"{first['server'] * 1e3:.1f} ms; RemoteGraph.astream first chunk "
          f"{first['client'] * 1e3:.1f} ms")
    print(f"(bench {t_bench:.1f} s)", file=sys.stderr)
    create = (f" create={res['server+create']['best'] / res['client']['best']:.2f}"
              if "server+create" in res else "")
    auth = (f" auth={res['server+auth']['best'] / res['server']['best']:.2f}"
            if "server+auth" in res else "")
    print(f"server-vs-client: time={res['server']['best'] / res['client']['best']:.2f} "
          f"first-chunk={first['server'] / first['client']:.2f}{create}{auth}")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="20 approvals, 2 rounds, 7 streams")
    p.add_argument("-n", type=int, help="approvals at once (default 100; 20 quick)")
    p.add_argument("--rounds", type=int, help="rounds per side (default 5; 2 quick)")
    p.add_argument("--streams", type=int, help="streamed starts per side (default 21; 7 quick)")
    p.add_argument("--warmup", type=int, default=5, help="approvals per side first (default 5)")
    p.add_argument("--create", action="store_true",
                   help="also time approvals that start with threads.create()")
    p.add_argument("--auth", action="store_true",
                   help="also time approvals through an API under custom auth")
    args = p.parse_args(argv)
    args.n = args.n or (20 if args.quick else 100)
    args.rounds = args.rounds or (2 if args.quick else 5)
    args.streams = args.streams or (7 if args.quick else 21)
    asyncio.run(run(args))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
