"""graphrun's in-process driver vs LangGraph's, on the same graphs.

Each graph is built once per library by one builder function that takes the
library's API (StateGraph, START, END, Send, Command, interrupt, InMemorySaver)
as a parameter, so both libraries run exactly the same node code.

    python bench/engine.py            # full: more repetitions
    python bench/engine.py --quick    # < 1 minute
    python bench/engine.py --profile chain100   # cProfile graphrun, top 25 cumulative

Runs are interleaved (A B A B ...) in one process after a warm-up; each
repetition times a batch of invokes (fresh thread id per invoke) and records the
per-invoke mean of that batch; the reported figure is the median over
repetitions. gc.collect() runs between batches, never inside one.

Supersteps per invoke = checkpoints written - 1, counted once per library with
get_state_history() on a separate untimed run (both libraries write one "input"
checkpoint at step -1, then one per superstep). For `approval` one "invoke" is
the invoke + Command(resume=True) pair on the same thread, and its supersteps
are summed over both calls.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import itertools
import operator
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Annotated, Any, TypedDict


# -- the two APIs ------------------------------------------------------------
def graphrun_api() -> SimpleNamespace:
    import graphrun as g
    return SimpleNamespace(name="graphrun", StateGraph=g.StateGraph, START=g.START, END=g.END,
                           Send=g.Send, Command=g.Command, interrupt=g.interrupt,
                           InMemorySaver=g.InMemorySaver)


def langgraph_api() -> SimpleNamespace:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command, Send, interrupt
    return SimpleNamespace(name="langgraph", StateGraph=StateGraph, START=START, END=END,
                           Send=Send, Command=Command, interrupt=interrupt,
                           InMemorySaver=InMemorySaver)


# -- states and node functions (shared by both libraries) ----------------------
class CounterState(TypedDict):
    n: int


class FanState(TypedDict, total=False):
    results: Annotated[list, operator.add]


class ApprovalState(TypedDict, total=False):
    request: str
    approved: bool


def _make_step(i: int) -> Callable[[CounterState], dict]:
    # A distinct `def` per node (same body as `lambda s: {"n": s["n"] + 1}`).
    def step(s: CounterState) -> dict:
        return {"n": s["n"] + 1}
    step.__name__ = step.__qualname__ = f"step_{i}"
    return step


_STEPS = [_make_step(i) for i in range(100)]


# -- builders, parameterised by the library's API -------------------------------
def build_chain(api: SimpleNamespace, length: int) -> Any:
    b = api.StateGraph(CounterState)
    names = [f"n{i}" for i in range(length)]
    for name, fn in zip(names, _STEPS, strict=False):
        b.add_node(name, fn)
    b.add_edge(api.START, names[0])
    for a, c in itertools.pairwise(names):
        b.add_edge(a, c)
    b.add_edge(names[-1], api.END)
    return b.compile(checkpointer=api.InMemorySaver())


def build_fanout(api: SimpleNamespace, width: int = 50) -> Any:
    Send, Command = api.Send, api.Command

    def fan(s: FanState) -> Any:
        # The node itself returns the Sends (LangGraph's Command(goto=[Send, ...])).
        return Command(goto=[Send("work", {"i": i}) for i in range(width)])

    def work(arg: dict) -> dict:
        return {"results": [arg["i"] * 2]}

    b = api.StateGraph(FanState)
    b.add_node("fan", fan)
    b.add_node("work", work)
    b.add_edge(api.START, "fan")
    b.add_edge("work", api.END)
    return b.compile(checkpointer=api.InMemorySaver())


def build_approval(api: SimpleNamespace) -> Any:
    interrupt = api.interrupt

    def approve(s: ApprovalState) -> dict:
        answer = interrupt({"question": "approve?", "request": s.get("request")})
        return {"approved": bool(answer)}

    b = api.StateGraph(ApprovalState)
    b.add_node("approve", approve)
    b.add_edge(api.START, "approve")
    b.add_edge("approve", api.END)
    return b.compile(checkpointer=api.InMemorySaver())


# -- one "invoke" per graph --------------------------------------------------------
@dataclass
class Case:
    name: str
    build: Callable[[SimpleNamespace], Any]
    # run(api, graph, config) -> final output; also used to check both agree
    run: Callable[[SimpleNamespace, Any, dict], Any]
    batch: int  # invokes per timed batch


def run_chain(api: SimpleNamespace, graph: Any, config: dict) -> Any:
    return graph.invoke({"n": 0}, config)


def run_fanout(api: SimpleNamespace, graph: Any, config: dict) -> Any:
    return graph.invoke({"results": []}, config)


def run_approval(api: SimpleNamespace, graph: Any, config: dict) -> Any:
    first = graph.invoke({"request": "deploy"}, config)
    assert "__interrupt__" in first, first
    return graph.invoke(api.Command(resume=True), config)


CASES = {
    "chain10": Case("chain10", lambda api: build_chain(api, 10), run_chain, 20),
    "chain100": Case("chain100", lambda api: build_chain(api, 100), run_chain, 3),
    "fanout50": Case("fanout50", build_fanout, run_fanout, 5),
    "approval": Case("approval", build_approval, run_approval, 50),
}

_ids = itertools.count()


def new_config() -> dict:
    return {"configurable": {"thread_id": f"bench-{next(_ids)}"}, "recursion_limit": 1000}


def normalise(out: Any) -> Any:
    if isinstance(out, dict) and "results" in out:
        return {**out, "results": sorted(out["results"])}
    return out


def supersteps(case: Case, api: SimpleNamespace, graph: Any) -> tuple[int, Any]:
    config = new_config()
    out = case.run(api, graph, config)
    history = list(graph.get_state_history(config))
    return len(history) - 1, normalise(out)


def time_batch(case: Case, api: SimpleNamespace, graph: Any, n: int) -> float:
    configs = [new_config() for _ in range(n)]
    run = case.run
    t0 = time.perf_counter()
    for config in configs:
        run(api, graph, config)
    return (time.perf_counter() - t0) / n


# -- driver ---------------------------------------------------------------------------
def bench(names: list[str], reps: int, warmup: int, batch_scale: float) -> list[dict]:
    apis = [graphrun_api(), langgraph_api()]
    rows = []
    for name in names:
        case = CASES[name]
        graphs = {api.name: case.build(api) for api in apis}
        steps, outs = {}, {}
        for api in apis:
            steps[api.name], outs[api.name] = supersteps(case, api, graphs[api.name])
        if outs["graphrun"] != outs["langgraph"]:
            print(f"WARNING {name}: outputs differ: graphrun={outs['graphrun']!r} "
                  f"langgraph={outs['langgraph']!r}", file=sys.stderr)
        n = max(1, round(case.batch * batch_scale))
        for _ in range(warmup):
            for api in apis:
                time_batch(case, api, graphs[api.name], n)
        samples: dict[str, list[float]] = {api.name: [] for api in apis}
        for r in range(reps):
            order = apis if r % 2 == 0 else apis[::-1]  # A B, B A, ... cancels order bias
            for api in order:
                gc.collect()
                samples[api.name].append(time_batch(case, api, graphs[api.name], n))
        med = {k: statistics.median(v) for k, v in samples.items()}
        rows.append({"graph": name, "med": med, "steps": steps,
                     "ratio": med["graphrun"] / med["langgraph"], "reps": reps, "batch": n})
        del graphs
        gc.collect()
    return rows


def fmt_t(sec: float) -> str:
    if sec >= 1e-3:
        return f"{sec * 1e3:8.2f} ms"
    return f"{sec * 1e6:8.1f} us"


def print_table(rows: list[dict]) -> None:
    head = (f"{'graph':<9} {'steps gr/lg':>11} {'graphrun/invoke':>15} {'langgraph/invoke':>16} "
            f"{'graphrun/step':>13} {'langgraph/step':>14} {'ratio':>6}")
    print(head)
    print("-" * len(head))
    for r in rows:
        g, lg = r["med"]["graphrun"], r["med"]["langgraph"]
        sg, sl = r["steps"]["graphrun"], r["steps"]["langgraph"]
        print(f"{r['graph']:<9} {f'{sg}/{sl}':>11} {fmt_t(g):>15} {fmt_t(lg):>16} "
              f"{fmt_t(g / max(sg, 1)):>13} {fmt_t(lg / max(sl, 1)):>14} {r['ratio']:>6.2f}")
    print(f"(median of {rows[0]['reps']} interleaved reps; per-step = per-invoke / "
          f"(checkpoints written - 1); approval = invoke + resume)")


def profile(name: str, reps: int) -> None:
    api = graphrun_api()
    case = CASES[name]
    graph = case.build(api)
    for _ in range(3):
        case.run(api, graph, new_config())
    configs = [new_config() for _ in range(reps)]
    gc.collect()
    prof = cProfile.Profile()
    prof.enable()
    for config in configs:
        case.run(api, graph, config)
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("cumulative").print_stats(25)
    print(f"cProfile graphrun {name}: {reps} invokes")
    print(out.getvalue())


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer repetitions (< 1 minute)")
    p.add_argument("--reps", type=int, help="repetitions per library (default 9 quick / 31)")
    p.add_argument("--graphs", default=",".join(CASES), help="comma-separated subset")
    p.add_argument("--profile", metavar="GRAPH", choices=list(CASES),
                   help="cProfile graphrun on GRAPH and print the top 25 cumulative entries")
    args = p.parse_args(argv)
    if args.profile:
        profile(args.profile, reps=20 if args.quick else 100)
        return
    names = [n.strip() for n in args.graphs.split(",") if n.strip()]
    for n in names:
        if n not in CASES:
            p.error(f"unknown graph {n!r}; choose from {', '.join(CASES)}")
    reps = args.reps or (9 if args.quick else 31)
    rows = bench(names, reps=reps, warmup=1 if args.quick else 3,
                 batch_scale=1.0 if args.quick else 2.0)
    print_table(rows)
    ratio = statistics.median(r["ratio"] for r in rows)
    print(f"engine-vs-langgraph: {ratio:.2f}")


if __name__ == "__main__":
    main()
