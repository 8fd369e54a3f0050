"""The `graphrun` command: a dev server with a worker, a production worker, and
commands to invoke, resume and inspect threads.

    graphrun dev                                  # Temporal dev server + UI + worker
    graphrun setup --retention 30                 # register graphrun's search attributes
    graphrun worker --graph myapp.graphs:graph    # a production worker
    graphrun invoke purchase --thread order-42 --input '{"item": "GPU", "amount": 96}'
    graphrun state order-42
    graphrun resume order-42 true --id <interrupt id>
    graphrun history order-42
    graphrun threads --status interrupted
    graphrun codec-server --origin http://localhost:8233   # the Web UI reads encrypted threads

Connection settings come as the `temporal` CLI's do: a profile of a temporal.toml
(--profile / TEMPORAL_PROFILE, --config-file / TEMPORAL_CONFIG_FILE), the environment
over it (TEMPORAL_ADDRESS, default localhost:7233; TEMPORAL_NAMESPACE, default
"default"; TEMPORAL_API_KEY, which implies TLS; TEMPORAL_TLS; the mTLS certificates
TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH), then flags over both;
and GRAPHRUN_TASK_QUEUE (default "graphrun").

GRAPHRUN_ENCRYPTION_KEYS="k2:<base64>,k1:<base64>" (newest first) turns on AES-GCM
payload encryption for every command that connects (dev, worker, invoke, resume,
state, history, threads) and gives codec-server its keys: the newest key
encrypts, every listed key decrypts (see graphrun.codec).

GRAPHRUN_PAYLOAD_STORE=/path (or s3://BUCKET; GRAPHRUN_PAYLOAD_DIR=/path too) keeps
payloads of 256 KiB or more (a large state) in that store and references in history
(see graphrun.storage), for every command that connects; commands need it when the
workers use it. `graphrun dev` keeps them in <state dir>/payloads unless told otherwise.

Errors print one line starting with ``error:`` on stderr. Exit codes: 0 success,
1 failure (no server, unknown thread, refused resume, unknown graph, ...),
2 usage errors (bad flags, bad JSON).

`module:attr` (for ``--graph``) names a compiled graph, served under its
``.name``, or a dict of graphs, served under its keys. The working directory is
put on ``sys.path`` first, so modules of the current project import as they do
with ``python -m``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import datetime as _dt
import importlib
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

# The pure helpers (JSON in/out, text formatting) live in graphrun._cli_format; the public
# ones are re-exported here, so `from graphrun.cli import untag` etc. keep working.
from graphrun import loader
from graphrun._cli_format import CLIError as CLIError
from graphrun._cli_format import (
    dump_json,
    format_history,
    format_questions,
    format_state,
    format_threads,
    format_values,
    one_line,
    print_lines,
)
from graphrun._cli_format import parse_json_arg as parse_json_arg
from graphrun._cli_format import plain as plain
from graphrun._cli_format import untag as untag

DEFAULT_ADDRESS = "localhost:7233"
DEFAULT_NAMESPACE = "default"
DEFAULT_TASK_QUEUE = "graphrun"
DEFAULT_STATE_DIR = ".graphrun"
DB_FILENAME = "temporal.db"

_SERVER_HINT = "start one with `graphrun dev` or set TEMPORAL_ADDRESS"

_ENVIRONMENT_HELP = """\
environment:
  TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS,
  TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH,
  TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_SERVER_NAME,
  TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE
                        the connection, as for the `temporal` CLI and Temporal's SDKs
                        (a temporal.toml profile, the environment over it)
  GRAPHRUN_TASK_QUEUE   task queue of the graphrun worker (default graphrun)
  GRAPHRUN_ENCRYPTION_KEYS
                        "k2:<base64 32 bytes>,k1:<base64 32 bytes>", newest first:
                        encrypt payloads (AES-GCM) in every command that connects;
                        the newest key encrypts, every key decrypts. Workers, clients
                        and codec-server need the same keys.
  GRAPHRUN_PAYLOAD_STORE, GRAPHRUN_PAYLOAD_DIR
                        keep payloads of 256 KiB or more in this directory (or
                        s3://BUCKET, with AWS_* settings), history holding references
                        (external payload storage); workers and clients need the same
                        store. `dev` uses a directory by default.
  GRAPHRUN_CODEC_TOKEN  bearer token codec-server requires (or --token)
  LANGSMITH_TRACING=true, LANGSMITH_API_KEY, LANGSMITH_PROJECT, LANGSMITH_ENDPOINT
                        trace invocations, workflows and nodes in LangSmith (--tracing)
  OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME
                        trace them with OpenTelemetry, exported over OTLP/HTTP
"""


# -- arguments ------------------------------------------------------------------------
KEEP_ALIVE_SECONDS = 75  # the API's idle HTTP connections (see cmd_serve)
STUDIO_ORIGIN = "https://smith.langchain.com"  # LangGraph Studio calls `graphrun dev` from it


def _connection_parent() -> _Parser:
    p = _Parser(add_help=False)
    g = p.add_argument_group("connection (flags over TEMPORAL_* environment variables, "
                             "over a temporal.toml profile)")
    g.add_argument("--address", default=None,
                   help=f"Temporal frontend host:port (env TEMPORAL_ADDRESS, "
                        f"default {DEFAULT_ADDRESS})")
    g.add_argument("--namespace", default=None,
                   help=f"namespace (env TEMPORAL_NAMESPACE, default {DEFAULT_NAMESPACE})")
    g.add_argument("--tls", action="store_true", default=None,
                   help="connect with TLS (env TEMPORAL_TLS=true; implied by an API key or "
                        "a certificate)")
    g.add_argument("--api-key", default=None, help="API key (env TEMPORAL_API_KEY)")
    g.add_argument("--tls-cert-path", default=None, metavar="FILE",
                   help="client certificate for mTLS (env TEMPORAL_TLS_CLIENT_CERT_PATH)")
    g.add_argument("--tls-key-path", default=None, metavar="FILE",
                   help="its private key (env TEMPORAL_TLS_CLIENT_KEY_PATH)")
    g.add_argument("--tls-ca-path", default=None, metavar="FILE",
                   help="CA that signed the server's certificate, when not a public one "
                        "(env TEMPORAL_TLS_SERVER_CA_CERT_PATH)")
    g.add_argument("--tls-server-name", default=None, metavar="NAME",
                   help="the server's name in its certificate (env TEMPORAL_TLS_SERVER_NAME)")
    g.add_argument("--profile", default=None, metavar="NAME",
                   help="profile of the Temporal config file (env TEMPORAL_PROFILE, "
                        "default \"default\")")
    g.add_argument("--config-file", default=None, metavar="FILE",
                   help="Temporal config file (env TEMPORAL_CONFIG_FILE; default: "
                        "temporal.toml in the user's config directory, as the temporal CLI)")
    g.add_argument("--task-queue", default=None,
                   help=f"task queue of the graphrun worker (env GRAPHRUN_TASK_QUEUE, "
                        f"default {DEFAULT_TASK_QUEUE})")
    g.add_argument("--payload-store", default=None, metavar="DIR|s3://BUCKET",
                   help="keep payloads of 256 KiB or more there, history holding references "
                        "(env GRAPHRUN_PAYLOAD_STORE, or GRAPHRUN_PAYLOAD_DIR for a directory); "
                        "workers and clients need the same store")
    _tracing_argument(p)
    return p


def _tracing_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tracing", default=None, metavar="langsmith|otel|off",
                   help="trace each invocation, the workflow and its nodes: langsmith, otel "
                        "(OpenTelemetry) or both (langsmith,otel); default: langsmith when "
                        "LANGSMITH_TRACING=true, otel when OTEL_EXPORTER_OTLP_ENDPOINT is set")


def _metrics_argument(p: argparse.ArgumentParser, what: str = "Temporal's and graphrun's "
                                                               "metrics") -> None:
    p.add_argument("--metrics-bind", default=None, metavar="HOST:PORT",
                   help=f"serve {what} for Prometheus at http://HOST:PORT/metrics")


def _env_default(flag: str) -> str | None:
    """A worker flag's default from the environment: --node-threads from
    GRAPHRUN_NODE_THREADS, and so on."""
    return os.environ.get("GRAPHRUN_" + flag.lstrip("-").replace("-", "_").upper()) or None


def _whole(text: str, unit: str = "", least: int = 1) -> int:
    """A whole number of at least `least` (of `unit`), or argparse's error saying why
    not."""
    try:
        n = int(text)
    except ValueError:
        of = f" of {unit}" if unit else ""
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number{of}") from None
    if n < least:
        raise argparse.ArgumentTypeError(f"{n}{' ' + unit if unit else ''}: at least {least}")
    return n


def _count(text: str) -> int:
    return _whole(text)


def _cache_size(text: str) -> int:
    return _whole(text, least=0)  # 0: no sticky cache, every task replays


def _seconds(text: str) -> float:
    try:
        s = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 <= s < 86400:
        raise argparse.ArgumentTypeError(f"{s:g} s: from 0 to less than a day")
    return s


def _fractions(text: str) -> tuple[float, float]:
    try:
        cpu, memory = (float(p) for p in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected CPU,MEMORY target fractions, e.g. 0.8,0.8") from None
    if not (0 < cpu <= 1 and 0 < memory <= 1):
        raise argparse.ArgumentTypeError(f"{text!r}: each fraction in (0, 1]")
    return cpu, memory


def _bind(text: str) -> str:
    from graphrun.health import parse_bind

    try:
        parse_bind(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _version_part(text: str) -> str:
    text = text.strip()
    if not text or any(c in text for c in "'\"\\"):
        raise argparse.ArgumentTypeError(f"{text!r}: a non-empty name without quotes")
    return text


VERSIONING_BEHAVIORS = ("pinned", "auto-upgrade")


def _behavior(text: str) -> str:
    if text not in VERSIONING_BEHAVIORS:
        raise argparse.ArgumentTypeError(f"{text!r}: one of {', '.join(VERSIONING_BEHAVIORS)}")
    return text


# (flag, type, metavar, help): each also read from GRAPHRUN_<FLAG> (see _env_default).
WORKER_FLAGS: list[tuple[str, Any, str, str]] = [
    ("--max-cached-workflows", _cache_size, "N",
     "threads kept in the worker's memory between their tasks (Temporal's sticky cache, "
     "default 500, about 0.1 MB each); an evicted thread is replayed from its history "
     "when it next runs"),
    ("--max-concurrent-nodes", _count, "N",
     "node activities run at once (Temporal's max_concurrent_activities, default 100)"),
    ("--max-concurrent-workflow-tasks", _count, "N",
     "workflow tasks at once (default 100)"),
    ("--resource-tuner", _fractions, "CPU,MEMORY",
     "instead of fixed slots, Temporal's resource-based tuner: take work while the "
     "process stays under these fractions of CPU and memory, e.g. 0.8,0.8"),
    ("--node-threads", _count, "N",
     "threads for sync nodes (default: asyncio's default pool, min(32, CPUs + 4))"),
    ("--graceful-shutdown", _seconds, "SECONDS",
     "on SIGTERM or Ctrl-C, stop taking work and let running nodes finish for this long, "
     "then cancel them (they run again on another worker); a second signal stops at "
     "once (default 20)"),
    ("--health-bind", _bind, "HOST:PORT",
     "serve GET /healthz (alive) and /readyz (polling, Temporal reachable; 503 while "
     "draining) at HOST:PORT"),
    ("--deployment-name", _version_part, "NAME",
     "Temporal Worker Versioning: the Worker Deployment this worker belongs to (with "
     "--build-id)"),
    ("--build-id", _version_part, "ID",
     "Temporal Worker Versioning: this worker's version in its deployment, e.g. the "
     "image tag (with --deployment-name)"),
    ("--versioning-behavior", _behavior, "pinned|auto-upgrade",
     "pinned (default): a thread's run stays on the version it started on, and the "
     "thread moves to the current version between runs; auto-upgrade: threads move at "
     "their next task (graph changes must then replay)"),
]


def _worker_arguments(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group("worker options (each also GRAPHRUN_<FLAG>, e.g. "
                                 "GRAPHRUN_NODE_THREADS)")
    for flag, kind, metavar, text in WORKER_FLAGS:
        group.add_argument(flag, type=kind, default=None, metavar=metavar, help=text)


def _worker_options(args: argparse.Namespace) -> dict[str, Any]:
    """create_worker's keyword arguments from the worker flags and their environment."""
    from datetime import timedelta

    got: dict[str, Any] = {}
    for flag, kind, _, _ in WORKER_FLAGS:
        name = flag.lstrip("-").replace("-", "_")
        value = getattr(args, name, None)
        if value is None and (text := _env_default(flag)) is not None:
            try:
                value = kind(text)
            except argparse.ArgumentTypeError as exc:
                env = "GRAPHRUN_" + name.upper()
                raise CLIError(f"{env}: {exc}", 2) from None
        got[name] = value
    if got["resource_tuner"] and (got["max_concurrent_nodes"]
                                  or got["max_concurrent_workflow_tasks"]):
        raise CLIError("--resource-tuner decides the slots: drop --max-concurrent-nodes "
                       "and --max-concurrent-workflow-tasks", 2)
    options = {WORKER_OPTION_NAMES.get(name, name): value for name, value in got.items()
               if value is not None and name not in ("resource_tuner", "graceful_shutdown",
                                                     *_VERSIONING)}
    if any(got[name] is not None for name in _VERSIONING):
        options["deployment_config"] = _deployment_config(**{n: got[n] for n in _VERSIONING})
    if got["resource_tuner"] is not None:
        from temporalio.worker import WorkerTuner

        cpu, memory = got["resource_tuner"]
        options["tuner"] = WorkerTuner.create_resource_based(
            target_cpu_usage=cpu, target_memory_usage=memory)
    grace = got["graceful_shutdown"]
    options["graceful_shutdown_timeout"] = timedelta(
        seconds=DEFAULT_GRACE if grace is None else grace)
    return options


_VERSIONING = ("deployment_name", "build_id", "versioning_behavior")


def _deployment_config(deployment_name: str | None, build_id: str | None,
                       versioning_behavior: str | None) -> Any:
    from graphrun.worker import deployment_config

    if not (deployment_name and build_id):
        raise CLIError("Worker Versioning needs both --deployment-name and --build-id "
                       "(or GRAPHRUN_DEPLOYMENT_NAME and GRAPHRUN_BUILD_ID)", 2)
    return deployment_config(deployment_name, build_id,
                             pinned=versioning_behavior != "auto-upgrade")


# A flag named apart from the create_worker (temporalio Worker) argument it sets.
WORKER_OPTION_NAMES = {"max_concurrent_nodes": "max_concurrent_activities"}


DEFAULT_GRACE = 20.0  # seconds: inside Kubernetes' default 30 s termination grace


def _positive_days(text: str) -> int:
    return _whole(text, "days")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    conn = _connection_parent()
    parser = _Parser(prog="graphrun", description="Run LangGraph-style graphs durably on "
                     "Temporal: dev server, worker, and thread commands.",
                     epilog=_ENVIRONMENT_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    dev = sub.add_parser("dev", help="start a local Temporal dev server (+ UI) and a worker",
                         description="Start the Temporal dev server with a SQLite file under "
                         "the state dir (threads survive a restart), graphrun's search "
                         "attributes, the Web UI, and a worker serving the graphs. Runs until "
                         "Ctrl-C.")
    dev.add_argument("--graph", action="append", default=[], metavar="MODULE:ATTR",
                     help="graph(s) to serve (repeatable; default: every example graph)")
    dev.add_argument("--state-dir", default=DEFAULT_STATE_DIR,
                     help=f"where the SQLite file lives (default {DEFAULT_STATE_DIR}/)")
    dev.add_argument("--payload-dir", default=None, metavar="DIR",
                     help="where payloads of 256 KiB or more are kept, history holding "
                          "references (env GRAPHRUN_PAYLOAD_DIR, default STATE_DIR/payloads)")
    dev.add_argument("--no-payload-store", action="store_true",
                     help="keep every payload in history: a state past Temporal's 2 MB "
                          "payload limit then fails its node")
    dev.add_argument("--port", type=int, default=7233, help="frontend gRPC port (default 7233)")
    dev.add_argument("--ui-port", type=int, default=8233, help="Web UI port (default 8233)")
    dev.add_argument("--no-ui", action="store_true", help="run headless, without the Web UI")
    dev.add_argument("--task-queue", default=None,
                     help=f"task queue (env GRAPHRUN_TASK_QUEUE, default {DEFAULT_TASK_QUEUE})")
    dev.add_argument("--namespace", default=None,
                     help=f"namespace (env TEMPORAL_NAMESPACE, default {DEFAULT_NAMESPACE})")
    dev.add_argument("--config", default=None, metavar="FILE",
                     help="LangGraph CLI's langgraph.json (default ./langgraph.json if present, "
                          "else the examples)")
    dev.add_argument("--api-port", type=int, default=2024,
                     help="port of the LangGraph Server API on 127.0.0.1 (default 2024)")
    dev.add_argument("--no-api", action="store_true", help="do not serve the HTTP API")
    dev.add_argument("--store", default=None, metavar="MODULE:ATTR",
                     help="LangGraph store (BaseStore) the graphs and /store/... share "
                          "(default: an in-memory one, gone when dev stops)")
    dev.add_argument("--ui-codec-endpoint", default=None, metavar="URL",
                     help="codec server the Web UI decodes payloads with, e.g. "
                          "http://localhost:8081 (see `graphrun codec-server`)")
    _tracing_argument(dev)
    _metrics_argument(dev)

    setup = sub.add_parser(
        "setup", parents=[conn], help="register graphrun's search attributes on a namespace",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Register the search attributes graphrun's threads keep (GraphStatus, "
        "GraphName, GraphCreatedAt, GraphUpdatedAt, GraphMetadata) on the namespace, leaving "
        "those already there alone, and report its retention. Run it once per namespace, "
        "before the workers and the API: they refuse to start without them.",
        epilog="""\
examples:
  graphrun setup --address localhost:7233 --namespace default
  graphrun setup --retention 30        # also keep closed executions 30 days
  graphrun setup --check               # exit 1 when one is missing; change nothing

On Temporal Cloud a namespace API key may not add search attributes: setup then
prints the tcld command and the Cloud UI steps that do, and exits 1.""")
    setup_mode = setup.add_mutually_exclusive_group()
    setup_mode.add_argument("--retention", type=_positive_days, default=None, metavar="DAYS",
                            help="also set the namespace's retention of closed executions")
    setup_mode.add_argument("--check", action="store_true",
                            help="only check: list what is missing and exit 1 if anything is")

    worker = sub.add_parser("worker", parents=[conn], help="run a worker serving graphs",
                            description="Serve graphs on a task queue until Ctrl-C/SIGTERM.")
    worker.add_argument("--graph", action="append", default=None, metavar="MODULE:ATTR",
                        help="a compiled graph (served under its .name) or a dict of graphs "
                             "(repeatable)")
    worker.add_argument("--config", default=None, metavar="FILE",
                        help="LangGraph CLI's langgraph.json: serve the graphs it names")
    worker.add_argument("--store", default=None, metavar="MODULE:ATTR",
                        help="LangGraph store (BaseStore) the graphs' nodes get as `store`; "
                             "default: each graph's compile(store=...)")
    worker.add_argument("--cache", default=None, metavar="MODULE:ATTR",
                        help="LangGraph cache (BaseCache) for nodes and tasks with a "
                             "CachePolicy; default: each graph's compile(cache=...)")
    _worker_arguments(worker)
    _metrics_argument(worker)

    srv = sub.add_parser("serve", parents=[conn], help="serve the LangGraph Server API",
                         description="The LangGraph Server API over Temporal (LangGraph's "
                                     "SDKs, Agent Inbox); workers run the graphs.")
    srv.add_argument("--config", default=None, metavar="FILE",
                     help="LangGraph CLI's langgraph.json (default ./langgraph.json)")
    srv.add_argument("--graph", action="append", default=None, metavar="MODULE:ATTR",
                     help="a graph to serve, as for `graphrun worker` (repeatable)")
    srv.add_argument("--host", default="127.0.0.1")
    srv.add_argument("--port", type=int, default=2024)
    srv.add_argument("--cors-origin", action="append", default=None, metavar="ORIGIN",
                     help="a browser origin allowed to call the API (repeatable)")
    srv.add_argument("--store", default=None, metavar="MODULE:ATTR",
                     help="LangGraph store (BaseStore) served at /store/...; give the "
                          "workers the same shared one")
    _metrics_argument(srv, "the Temporal SDK's metrics of the API's client (the API's own "
                           "are at /metrics on its port)")

    inv = sub.add_parser("invoke", parents=[conn], help="run a thread until it pauses or ends")
    inv.add_argument("graph", metavar="GRAPH", help="registered graph name")
    inv.add_argument("--thread", required=True, metavar="ID", help="thread id")
    src = inv.add_mutually_exclusive_group()
    src.add_argument("--input", metavar="JSON|@FILE", default=None,
                     help="input as JSON, or @path of a JSON file (default: null)")
    src.add_argument("--resume", metavar="JSON|@FILE", default=None,
                     help="resume value as JSON, or @path of a JSON file (a bare word is "
                          "taken as a string); a map {interrupt_id: value} answers by id")
    inv.add_argument("--timeout", type=float, default=120.0,
                     help="seconds to wait for the run to pause or end (default 120)")
    inv.add_argument("--json", action="store_true", help="print machine-readable JSON")
    inv.add_argument("--stream", nargs="?", const="updates", default=None, metavar="MODES",
                     help="print the run's chunks as they come, one per line, then the "
                          "result; MODES is a comma-separated list of stream modes "
                          "(default: updates; also values, custom, messages, tasks, ...)")

    res = sub.add_parser("resume", parents=[conn],
                         help="answer a paused thread; show where it stops next",
                         description="Answer a paused thread (the `invoke` update): a refused "
                         "answer is an error and changes nothing; an accepted one runs the "
                         "thread to its next pause or its end, printed as `invoke` prints it.")
    res.add_argument("thread", metavar="THREAD")
    res.add_argument("value", metavar="VALUE",
                     help="JSON, or @path of a JSON file (a bare word is taken as a string)")
    res.add_argument("--id", dest="interrupt_id", default=None, metavar="INTERRUPT_ID",
                     help="the interrupt to answer (needed when several are pending)")
    res.add_argument("--timeout", type=float, default=120.0,
                     help="seconds to wait for the run to pause or end (default 120)")
    res.add_argument("--json", action="store_true", help="print machine-readable JSON")
    res.add_argument("--no-check", action="store_true",
                     help="fire and forget: send the `resume` signal, wait for nothing and "
                          "print nothing of the thread (a refusal is only recorded on it)")

    st = sub.add_parser("state", parents=[conn], help="show a thread's current state")
    st.add_argument("thread", metavar="THREAD")
    st.add_argument("--json", action="store_true", help="print the raw get_state query result")

    hist = sub.add_parser("history", parents=[conn], help="list a thread's checkpoints")
    hist.add_argument("thread", metavar="THREAD")
    hist.add_argument("--limit", type=int, default=None, help="at most N checkpoints")
    hist.add_argument("--json", action="store_true", help="print the raw query result")

    thr = sub.add_parser("threads", parents=[conn], help="list threads")
    thr.add_argument("--status", choices=["running", "interrupted", "done", "failed"])
    thr.add_argument("--graph", default=None, metavar="NAME")
    thr.add_argument("--limit", type=int, default=100)
    thr.add_argument("--json", action="store_true", help="print machine-readable JSON")

    dele = sub.add_parser("delete", parents=[conn],
                          help="delete a thread: every run of its workflow, at once")
    dele.add_argument("thread", metavar="THREAD")

    mig = sub.add_parser(
        "migrate", parents=[conn],
        help="reopen threads an earlier graphrun closed, before the namespace's retention "
             "deletes them",
        description="Threads live until they are deleted or their TTL ends. graphrun before "
        "0.2 closed a thread's workflow once its graph finished, and Temporal deletes closed "
        "executions when the namespace's retention ends: this gives each such thread an open "
        "run holding its checkpoints, run records and metadata. Running it again does nothing.")
    mig.add_argument("--json", action="store_true", help="print the reopened thread ids as JSON")

    upg = sub.add_parser(
        "upgrade-threads", parents=[conn],
        help="move threads pinned to earlier worker versions to the deployment's current one",
        description="With Worker Versioning (graphrun worker --deployment-name --build-id), a "
        "thread's runs stay on the worker version they started on and the thread moves to "
        "the deployment's current version between runs, when it next wakes. This wakes every "
        "thread still on another version: idle and paused ones move at once, running ones "
        "after their run. Then the old version drains and its workers can stop.")
    upg.add_argument("--deployment-name", default=None, metavar="NAME",
                     help="the Worker Deployment (env GRAPHRUN_DEPLOYMENT_NAME)")
    upg.add_argument("--json", action="store_true", help="print the woken ids as JSON")

    drw = sub.add_parser("graph", help="print a graph's drawing (Mermaid), as get_graph() draws it",
                         description="Print the drawing of a graph a worker would serve, as "
                         "LangGraph's get_graph().draw_mermaid() prints it (paste it into any "
                         "Mermaid viewer). Needs langchain-core (pip install "
                         "'graphrun[messages]'). Connects to nothing.")
    drw.add_argument("graph", metavar="GRAPH",
                     help="MODULE:ATTR (as for `graphrun worker --graph`), or a graph id of "
                          "--config (default ./langgraph.json; without one, the examples "
                          "`graphrun dev` serves)")
    drw.add_argument("--config", default=None, metavar="FILE",
                     help="LangGraph CLI's langgraph.json naming the graph")
    drw.add_argument("--xray", action="store_true", help="expand subgraphs, every level")
    drw.add_argument("--depth", type=int, default=None, metavar="N",
                     help="expand subgraphs N levels deep (get_graph(xray=N))")
    drw.add_argument("--format", choices=["mermaid", "ascii", "json"], default="mermaid",
                     help="mermaid (default), ascii (needs grandalf) or json (Graph.to_json)")

    cs = sub.add_parser(
        "codec-server", help="serve Temporal's remote codec protocol for the Web UI / CLI",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Decrypt (and encrypt) payloads for the Temporal Web UI and the `temporal` "
        "CLI with the keys in GRAPHRUN_ENCRYPTION_KEYS, over HTTP: POST .../decode and "
        ".../encode with Payloads as proto JSON. Runs until Ctrl-C.",
        epilog="""\
examples:
  graphrun codec-server --port 8081 --origin http://localhost:8233
  temporal server start-dev --ui-codec-endpoint http://localhost:8081
  graphrun dev --ui-codec-endpoint http://localhost:8081
  # or, with a running UI: its data encoder settings -> Codec Server -> http://localhost:8081
  temporal workflow show -w THREAD --codec-endpoint http://localhost:8081

The token, when set, must come as "Authorization: Bearer TOKEN" (temporal CLI:
--codec-auth "Bearer TOKEN"; the Web UI sends its own OIDC access token when "pass
the user access token" is on, so a fixed token suits the CLI and proxies).
Keep the server on loopback, or behind TLS: it decrypts for whoever may call it.""")
    from graphrun.codec_server import DEFAULT_ORIGIN, DEFAULT_PORT

    cs.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    cs.add_argument("--port", type=int, default=DEFAULT_PORT,
                    help=f"port (default {DEFAULT_PORT}; 0 picks a free one)")
    cs.add_argument("--origin", action="append", default=None, metavar="URL",
                    help=f"Web UI origin allowed by CORS, exactly as the browser shows it "
                         f"(repeatable; default {DEFAULT_ORIGIN})")
    cs.add_argument("--token", default=None,
                    help="require 'Authorization: Bearer TOKEN' (env GRAPHRUN_CODEC_TOKEN)")
    cs.add_argument("--namespace", action="append", default=None, metavar="NAME",
                    help="serve only requests whose X-Namespace is NAME (repeatable; "
                         "default: any)")
    return parser


@dataclasses.dataclass(frozen=True)
class Connection:
    address: str
    namespace: str
    temporal: Any  # graphrun.connection.TemporalConnection: how to reach it
    task_queue: str
    encryption: Mapping[str, bytes] | None = dataclasses.field(default=None, repr=False)
    payload_store: str | None = None  # large payloads' store: a directory or s3://BUCKET
    tracing: str = "auto"  # --tracing, else the environment (graphrun.tracing)
    metrics_bind: str | None = None  # --metrics-bind: a Prometheus endpoint


def _encryption_keys() -> dict[str, bytes] | None:
    """The keys of $GRAPHRUN_ENCRYPTION_KEYS, or None; a malformed value is a usage error."""
    from graphrun.codec import keys_from_env
    from graphrun.errors import EncryptionKeyError

    try:
        return keys_from_env()
    except EncryptionKeyError as exc:
        raise CLIError(str(exc), 2) from None


def _connection(args: argparse.Namespace) -> Connection:
    from graphrun.connection import TemporalConfigError, resolve

    def arg(name: str) -> Any:
        return getattr(args, name, None)

    try:
        temporal = resolve(address=arg("address"), namespace=arg("namespace"),
                           api_key=arg("api_key"), tls=True if arg("tls") else None,
                           tls_cert_path=arg("tls_cert_path"), tls_key_path=arg("tls_key_path"),
                           tls_ca_path=arg("tls_ca_path"),
                           tls_server_name=arg("tls_server_name"), profile=arg("profile"),
                           config_file=arg("config_file"))
    except TemporalConfigError as exc:
        raise CLIError(str(exc), 2) from None
    return Connection(
        address=temporal.address, namespace=temporal.namespace, temporal=temporal,
        task_queue=arg("task_queue") or os.environ.get("GRAPHRUN_TASK_QUEUE")
        or DEFAULT_TASK_QUEUE,
        encryption=_encryption_keys(),
        payload_store=arg("payload_store") or _payload_store_env(),
        tracing=arg("tracing") or "auto", metrics_bind=arg("metrics_bind"))


def _payload_dir_env() -> str | None:
    from graphrun.storage import PAYLOAD_DIR_ENV

    return os.environ.get(PAYLOAD_DIR_ENV, "").strip() or None


def _payload_store_env() -> str | None:
    from graphrun.storage import PAYLOAD_STORE_ENV

    return os.environ.get(PAYLOAD_STORE_ENV, "").strip() or _payload_dir_env()


# What commands open for their run (an S3 client): closed when the command ends.
_RESOURCES: list[contextlib.AsyncExitStack] = []


async def _open_store(where: str | None) -> Any:
    from graphrun.storage import open_store

    if not where:
        return None
    stack = contextlib.AsyncExitStack()
    _RESOURCES.append(stack)
    try:
        return await open_store(where, stack)
    except ValueError as exc:
        raise CLIError(f"payload store: {exc}", 2) from None
    except ImportError as exc:
        raise CLIError(str(exc), 2) from None


async def _run_command(args: argparse.Namespace) -> int:
    try:
        return await _COMMANDS[args.command](args)
    finally:
        while _RESOURCES:
            with contextlib.suppress(Exception):
                await _RESOURCES.pop().aclose()


# -- Temporal errors --------------------------------------------------------------
def _rpc_status(exc: BaseException) -> Any:
    from temporalio.service import RPCError

    cur: BaseException | None = exc
    while cur is not None:
        if isinstance(cur, RPCError):
            return cur.status
        cur = cur.__cause__
    return None


def _is_not_found(exc: BaseException) -> bool:
    from temporalio.service import RPCStatusCode

    return bool(_rpc_status(exc) == RPCStatusCode.NOT_FOUND)


def _is_unavailable(exc: BaseException) -> bool:
    from temporalio.service import RPCStatusCode

    return bool(_rpc_status(exc) == RPCStatusCode.UNAVAILABLE)


def _unknown_thread(thread: str, conn: Connection) -> CLIError:
    return CLIError(f"thread {thread!r} not found (no workflow with id {thread!r} in namespace "
                    f"{conn.namespace!r} on {conn.address})")


def _no_worker(conn: Connection, what: str) -> CLIError:
    return CLIError(f"{what}: no graphrun worker answered on task queue {conn.task_queue!r}; "
                    f"start one with `graphrun worker --graph module:attr` (or `graphrun dev`)")


_TRACERS: list[Any] = []  # what the commands traced with: flushed before the process ends


def _tracing(conn: Connection) -> Any:
    """The GraphTracing --tracing (or the environment) asks for, or None."""
    from graphrun import tracing

    try:
        chosen = tracing.resolve(conn.tracing)
    except ValueError as exc:
        raise CLIError(f"--tracing: {exc}", 2) from None
    except ImportError as exc:
        raise CLIError(f"tracing needs the tracing extra ({exc}): "
                       f"pip install 'graphrun[tracing]'", 2) from None
    if chosen is None:
        return None
    if any(b.name == "otel" for b in chosen.backends):
        try:
            tracing.configure_otel_from_env()
        except ImportError as exc:
            raise CLIError(f"--tracing otel exports with OTLP/HTTP ({exc}): "
                           f"pip install 'graphrun[tracing]'", 2) from None
    _TRACERS.append(chosen)
    return chosen


def _flush_tracing() -> None:
    for t in _TRACERS:
        with contextlib.suppress(Exception):
            t.flush()


def _tracing_line(gc: Any) -> str:
    if gc.tracing is None:
        return ("tracing: off (--tracing langsmith|otel, or LANGSMITH_TRACING=true / "
                "OTEL_EXPORTER_OTLP_ENDPOINT)")
    return "tracing: " + ", ".join(b.name for b in gc.tracing.backends)


async def _connect(conn: Connection) -> Any:
    from graphrun.client import GraphClient

    options: dict[str, Any] = {}
    if conn.metrics_bind:
        from graphrun.metrics import prometheus_runtime

        try:
            options["runtime"] = prometheus_runtime(conn.metrics_bind)
        except Exception as exc:
            raise CLIError(f"--metrics-bind {conn.metrics_bind}: {exc}", 2) from exc
    traced = _tracing(conn)
    store = await _open_store(conn.payload_store)
    try:
        return await GraphClient.connect(conn.address, namespace=conn.namespace,
                                         task_queue=conn.task_queue, tls=conn.temporal.tls,
                                         api_key=conn.temporal.api_key,
                                         rpc_metadata=conn.temporal.rpc_metadata,
                                         encryption=conn.encryption, external_storage=store,
                                         tracing=traced, **options)
    except ImportError as exc:  # GRAPHRUN_ENCRYPTION_KEYS set, cryptography missing
        raise CLIError(str(exc)) from exc
    except Exception as exc:  # temporalio raises RuntimeError("Failed client connect: ...")
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if "Connection refused" in detail or "ConnectionRefused" in detail:
            detail = "connection refused"
        elif (hint := await asyncio.to_thread(_tls_refusal, conn, detail)) is not None:
            raise CLIError(f"cannot reach a Temporal server at {conn.temporal.describe()}: "
                           f"{hint}") from exc
        elif len(detail) > 160:
            detail = detail[:160] + "..."
        raise CLIError(f"cannot reach a Temporal server at {conn.temporal.describe()} "
                       f"({detail}); {_SERVER_HINT}") from exc


def _tls_refusal(conn: Connection, detail: str) -> str | None:
    """Why a TLS connection was refused, by a handshake of our own (see
    graphrun.connection.tls_refusal); None when it is not a TLS matter."""
    from graphrun.connection import tls_refusal

    if not conn.temporal.tls or "transport" not in detail.lower():
        return None
    return tls_refusal(conn.temporal)


_QUERY_TIMEOUT = _dt.timedelta(seconds=15)


async def _query(gc: Any, conn: Connection, thread: str, name: str, *args: Any) -> Any:
    from temporalio.client import WorkflowQueryFailedError
    from temporalio.service import RPCStatusCode

    handle = gc.client.get_workflow_handle(gc.workflow_id(thread))
    try:
        return await handle.query(name, args=list(args), rpc_timeout=_QUERY_TIMEOUT)
    except WorkflowQueryFailedError as exc:
        raise CLIError(f"query {name} on thread {thread!r} failed: {exc}") from exc
    except Exception as exc:
        if _is_not_found(exc):
            raise _unknown_thread(thread, conn) from exc
        if _rpc_status(exc) == RPCStatusCode.DEADLINE_EXCEEDED:
            raise _no_worker(conn, f"query {name} on thread {thread!r} timed out") from exc
        raise


# -- commands ------------------------------------------------------------------------
def _first_line(exc: BaseException) -> str:
    """An error's first line: a refused answer's pydantic details take several."""
    return str(exc).strip().split("\n", 1)[0]


async def cmd_invoke(args: argparse.Namespace) -> int:
    from graphrun import errors
    from graphrun.types import Command

    if args.resume is not None:
        payload: Any = Command(resume=parse_json_arg(args.resume, "--resume", bare_string=True,
                                                     allow_file=True))
    elif args.input is not None:
        payload = parse_json_arg(args.input, "--input", allow_file=True)
    else:
        payload = None
    conn = _connection(args)
    gc = await _connect(conn)
    remote = gc.graph(args.graph)
    config = {"configurable": {"thread_id": args.thread}}
    try:
        # The CLI has none of the graph's classes: it shows the result as plain JSON.
        # An input over the client's limits is refused here, before anything is sent.
        if args.stream:
            result = await asyncio.wait_for(_stream_run(remote, payload, config, args),
                                            args.timeout)
        else:
            result = await asyncio.wait_for(remote.thread(config).run(payload),
                                            args.timeout)
    except TimeoutError:
        raise _no_worker(conn, f"graph {args.graph!r} did not pause or finish within "
                               f"{args.timeout:g}s") from None
    except errors.GraphrunError as exc:
        raise CLIError(f"{type(exc).__name__}: {_first_line(exc)}") from exc
    return await _show_run(gc, conn, args, args.graph, result)


async def _stream_run(remote: Any, payload: Any, config: dict[str, Any],
                      args: argparse.Namespace) -> Any:
    """Print each chunk of the run as it arrives; return the run's result."""
    from graphrun.engine import stream_chunks
    from graphrun.payloads import RunResult

    modes = [m.strip() for m in args.stream.split(",") if m.strip()]
    async for item in remote.thread(config).live(payload, {"stream_mode": modes},
                                                  decode=untag):
        if isinstance(item, RunResult):
            return item
        for out in stream_chunks([item], modes, False):
            mode, chunk = out  # a list of modes: each chunk names its mode
            line = (dump_json({"mode": mode, "chunk": chunk}, indent=None) if args.json
                    else f"[{mode}] {dump_json(chunk, indent=None)}")
            print(line, flush=True)
    raise CLIError("the stream ended without the run's result")


async def _show_run(gc: Any, conn: Connection, args: argparse.Namespace, graph: str | None,
                    result: Any) -> int:
    """Print a run's result (RunResult) as `invoke` does: its pause, or its final state."""
    from graphrun import errors
    from graphrun.client import RemoteGraph

    try:
        RemoteGraph.raise_failure(result)
    except errors.NodeFailedError as exc:
        raise CLIError(f"thread {args.thread!r}: {_first_line(exc)}") from exc
    except errors.GraphrunError as exc:
        raise CLIError(f"{type(exc).__name__}: {_first_line(exc)}") from exc
    interrupts = [{"id": i["id"], "value": untag(i["value"])} for i in result.interrupts]
    values = untag(result.values) or {}
    snap = await _query(gc, conn, args.thread, "get_state", None)
    status = snap.get("status") or ("interrupted" if interrupts else "done")
    next_nodes = list(snap.get("next") or [])
    if args.json:
        print_lines([dump_json({"thread_id": args.thread, "graph": graph, "status": status,
                                "values": values, "next": next_nodes,
                                "interrupts": interrupts})])
        return 0
    lines = [f"thread {args.thread}{f' ({graph})' if graph else ''}: {status}", "values:",
             *format_values(values)]
    if next_nodes:
        lines.append(f"next: {', '.join(next_nodes)}")
    lines += format_questions(args.thread, interrupts)
    print_lines(lines)
    return 0


async def _open_thread(gc: Any, conn: Connection, thread: str) -> str | None:
    """The graph name of a thread whose workflow runs, so it can take an answer."""
    from temporalio.client import WorkflowExecutionStatus

    from graphrun.client import GRAPH_NAME

    try:
        desc = await gc.client.get_workflow_handle(gc.workflow_id(thread)).describe()
    except Exception as exc:
        if _is_not_found(exc):
            raise _unknown_thread(thread, conn) from exc
        raise
    from graphrun.client import GRAPH_STATUS

    # A thread stays open once its graph finishes (until it is deleted); older ones closed.
    if (desc.status != WorkflowExecutionStatus.RUNNING
            or desc.typed_search_attributes.get(GRAPH_STATUS) == "done"):
        raise _finished(thread)
    graph: str | None = desc.typed_search_attributes.get(GRAPH_NAME)
    return graph


def _finished(thread: str) -> CLIError:
    return CLIError(f"thread {thread!r} has finished: nothing to resume; invoke it with new "
                    f"input instead")


async def cmd_resume(args: argparse.Namespace) -> int:
    from temporalio.client import WorkflowUpdateFailedError

    from graphrun import errors, serde
    from graphrun.checkpoint import is_interrupt_id
    from graphrun.payloads import InvokeRequest, RunResult
    from graphrun.thread_handle import as_graphrun_error
    from graphrun.types import Command

    value = parse_json_arg(args.value, "VALUE", bare_string=True, allow_file=True)
    if args.interrupt_id is not None and not is_interrupt_id(args.interrupt_id):
        raise CLIError(f"--id {args.interrupt_id!r} is not an interrupt id (32 lowercase hex "
                       f"characters, as shown by `graphrun state {args.thread}`)", 2)
    answer = {args.interrupt_id: value} if args.interrupt_id else value
    conn = _connection(args)
    gc = await _connect(conn)
    target = f" to interrupt {args.interrupt_id}" if args.interrupt_id else ""
    try:
        if args.no_check:
            try:
                await gc.resume(args.thread, value, args.interrupt_id)
            except Exception as exc:
                if _is_not_found(exc):  # a signal to a finished workflow too
                    raise _unknown_thread(args.thread, conn) from exc
                raise
            print_lines([f"sent thread {args.thread} the answer{target} {one_line(value)} "
                         f"(not checked: `graphrun state {args.thread}` shows a refusal)"])
            return 0
        # Answer through the `invoke` update, as RemoteGraph does: the thread accepts the
        # answer and runs on, or refuses it (and changes nothing), and we hear which.
        data = serde.dumps(Command(resume=answer))
        gc.limits.check(data, "the resume value")  # before anything is sent
        graph = await _open_thread(gc, conn, args.thread)
        req = InvokeRequest(input=data,
                            config={"configurable": serde.dumps({"thread_id": args.thread})})
        handle = gc.client.get_workflow_handle(gc.workflow_id(args.thread))
        try:
            result = await asyncio.wait_for(
                handle.execute_update("invoke", req, result_type=RunResult), args.timeout)
        except WorkflowUpdateFailedError as exc:
            raise as_graphrun_error(exc) from exc
        except TimeoutError:
            raise _no_worker(conn, f"thread {args.thread!r} did not pause or finish within "
                                   f"{args.timeout:g}s") from None
        except Exception as exc:
            if _is_not_found(exc):  # it finished since we looked
                raise _finished(args.thread) from exc
            raise
    except errors.GraphrunError as exc:
        raise CLIError(f"{type(exc).__name__}: {_first_line(exc)}") from exc
    return await _show_run(gc, conn, args, graph, result)


async def cmd_state(args: argparse.Namespace) -> int:
    conn = _connection(args)
    gc = await _connect(conn)
    data = await _query(gc, conn, args.thread, "get_state", None)
    if args.json:
        print_lines([dump_json(data)])
        return 0
    print_lines(format_state(args.thread, data))
    return 0


async def cmd_history(args: argparse.Namespace) -> int:
    conn = _connection(args)
    gc = await _connect(conn)
    items = await _query(gc, conn, args.thread, "get_state_history", args.limit, None)
    if args.json:
        print_lines([dump_json(items)])
        return 0
    print_lines(format_history(args.thread, items))
    return 0


async def cmd_threads(args: argparse.Namespace) -> int:
    conn = _connection(args)
    gc = await _connect(conn)
    try:
        threads = await gc.list_threads(status=args.status, graph=args.graph, limit=args.limit)
    except Exception as exc:
        if _is_unavailable(exc):
            raise CLIError(f"cannot reach a Temporal server at {conn.address}; "
                           f"{_SERVER_HINT}") from exc
        raise CLIError(f"cannot list threads: {str(exc).splitlines()[0] if str(exc) else exc!r}"
                       " (are graphrun's search attributes registered? see `graphrun setup "
                       "--check`)") from exc
    rows = [{"thread_id": t.thread_id, "graph": t.graph, "status": t.status,
             "workflow_status": t.workflow_status} for t in threads]
    if args.json:
        print_lines([dump_json(rows)])
        return 0
    print_lines(format_threads(rows))
    return 0


async def cmd_delete(args: argparse.Namespace) -> int:
    gc = await _connect(_connection(args))
    if not await gc.delete_thread(args.thread):
        raise CLIError(f"no thread {args.thread!r} to delete")
    print_lines([f"deleted thread {args.thread}"])
    return 0


async def cmd_migrate(args: argparse.Namespace) -> int:
    gc = await _connect(_connection(args))
    reopened = await gc.migrate()
    if args.json:
        print_lines([dump_json(reopened)])
        return 0
    print_lines([*(f"reopened {t}" for t in reopened),
                 f"{len(reopened)} thread(s) reopened; every thread is now an open workflow"])
    return 0


async def cmd_upgrade_threads(args: argparse.Namespace) -> int:
    name = args.deployment_name or _env_default("--deployment-name")
    if not name:
        raise CLIError("upgrade-threads needs --deployment-name (or GRAPHRUN_DEPLOYMENT_NAME)", 2)
    gc = await _connect(_connection(args))
    try:
        woken = await gc.upgrade_threads(name)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    except Exception as exc:
        if _is_not_found(exc):
            raise CLIError(f"no Worker Deployment {name!r} in namespace {gc.client.namespace!r}; "
                           f"workers join one with --deployment-name") from exc
        raise
    if args.json:
        print_lines([dump_json(woken)])
        return 0
    print_lines([*(f"woke {w}" for w in woken),
                 f"{len(woken)} thread(s) woken; each moves to {name}'s current version "
                 f"when idle (after its run, if one is under way)"])
    return 0


async def cmd_graph(args: argparse.Namespace) -> int:
    """`graphrun graph GRAPH`: the graph's `get_graph()` drawing, found as `worker` finds it."""
    import json

    from graphrun.bridge import is_langgraph
    from graphrun.worker import as_graphrun

    ref: str = args.graph
    graph: Any = None
    if ":" in ref:  # MODULE:ATTR, loaded as `graphrun worker --graph` loads it
        _ensure_cwd_on_path()
        obj, attr = _load_ref(repr(ref), ref)
        if isinstance(obj, Mapping):  # a dict of graphs, as `worker` serves it
            if len(obj) != 1:
                raise CLIError(f"{ref!r} holds graphs {sorted(map(str, obj))}: put the one to "
                               f"draw in a module attribute of its own, or name it with --config")
            obj = next(iter(obj.values()))
        graph = as_graphrun(obj, attr.rsplit(".", 1)[-1]) if is_langgraph(obj) else obj
    else:  # a graph id: of --config / ./langgraph.json, else of the examples `dev` serves
        configured = args.config or os.path.exists("langgraph.json")
        graphs = (_graphs(argparse.Namespace(graph=None, config=args.config), default_config=True)
                  if configured else example_graphs())
        if ref not in graphs:
            where = f"--config {args.config or 'langgraph.json'}" if configured else "the examples"
            raise CLIError(f"no graph {ref!r} in {where}; graphs: {sorted(graphs)} (or pass "
                           f"MODULE:ATTR)")
        graph = graphs[ref]
        if hasattr(graph, "reason"):
            raise CLIError(graph.reason)
    if not callable(getattr(graph, "get_graph", None)) or not hasattr(graph, "spec"):
        raise CLIError(f"{ref!r} is a {type(graph).__name__}, not a compiled graph")
    xray: int | bool = args.depth if args.depth is not None else args.xray
    try:
        drawing = graph.get_graph(xray=xray)
    except ImportError as exc:
        raise CLIError(str(exc)) from exc
    if args.format == "json":
        text = json.dumps(drawing.to_json(), indent=2, default=str)
    elif args.format == "ascii":
        try:
            text = drawing.draw_ascii()
        except ImportError as exc:
            raise CLIError(f"{exc} (or use the default --format mermaid)") from exc
    else:
        text = drawing.draw_mermaid()
    print_lines([text.rstrip("\n")])
    return 0


# -- serving ---------------------------------------------------------------------------
def _ensure_cwd_on_path() -> None:
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)


def load_graphs(specs: Sequence[str]) -> dict[str, Any]:
    """`module:attr` -> {name: compiled graph}; attr may be a dict of graphs. A LangGraph
    graph (e.g. from `create_agent`) is converted with `from_langgraph`; unnamed, it is
    served under its attribute name."""
    from graphrun.bridge import is_langgraph
    from graphrun.worker import as_graphrun

    _ensure_cwd_on_path()
    graphs: dict[str, Any] = {}
    for spec in specs:
        obj, attr = _load_ref(f"--graph {spec!r}", spec, "myapp.graphs:graph")
        items = obj.items() if isinstance(obj, Mapping) else [(None, obj)]
        for name, graph in items:
            if is_langgraph(graph):
                graph = as_graphrun(graph, str(name or attr.rsplit(".", 1)[-1]))
            if not hasattr(graph, "spec"):
                raise CLIError(f"--graph {spec!r}{f'[{name!r}]' if name else ''} is a "
                               f"{type(graph).__name__}, not a compiled graph "
                               f"(builder.compile(name=...))")
            name = name or getattr(graph, "name", None)
            if not name or name == "LangGraph":
                raise CLIError(f"--graph {spec!r}: the graph has no name; compile it with "
                               f"builder.compile(name=...)")
            graphs[str(name)] = graph
    return graphs


def example_graphs() -> dict[str, Any]:
    """Every example graph (examples.EXAMPLES), if the examples package is importable."""
    _ensure_cwd_on_path()
    try:
        examples = importlib.import_module("examples")
        names = list(examples.EXAMPLES)
    except (ImportError, AttributeError):
        return {}
    graphs: dict[str, Any] = {}
    for name in names:
        try:
            graph = importlib.import_module(f"examples.{name}").graph
        except (ImportError, AttributeError) as exc:
            print(f"warning: skipping example {name!r}: {exc}", file=sys.stderr)
            continue
        graphs[getattr(graph, "name", None) or name] = graph
    return graphs


class _Stop(asyncio.Event):
    """Set on the first SIGINT / SIGTERM; `again`, on the next one."""

    def __init__(self) -> None:
        super().__init__()
        self.again = asyncio.Event()


def _stop_event() -> _Stop:
    """A _Stop the process's signals set."""
    stop = _Stop()

    def signalled() -> None:
        (stop.again if stop.is_set() else stop).set()

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        # Windows: no signal handlers on the loop; Ctrl-C raises KeyboardInterrupt instead.
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, signalled)
    return stop


def _load_ref(what: str, spec: str, example: str = "myapp.graphs:graph", code: int = 1
              ) -> tuple[Any, str]:
    """The object a MODULE:ATTR on the command line names (graphrun.loader), and its
    attribute path; CLIError saying which part is wrong (exit 2 for a malformed one,
    else `code`)."""
    try:
        module_name, attr = loader.split(spec)
    except loader.RefError:
        raise CLIError(f"{what}: expected MODULE:ATTR, e.g. {example}", 2) from None
    try:
        return loader.load(spec), attr
    except loader.RefError as exc:
        raise CLIError(f"{what}: {exc}", code) from None
    except ImportError as exc:
        raise CLIError(f"{what}: cannot import module {module_name!r}: {exc}", code) from exc


def _load_object(flag: str, spec: str, example: str) -> Any:
    """`--flag module:attr`: the object there."""
    _ensure_cwd_on_path()
    return _load_ref(f"{flag} {spec!r}", spec, example, code=2)[0]


def load_store(spec: str) -> Any:
    """`--store module:attr`: the object there (a LangGraph `BaseStore`)."""
    obj = _load_object("--store", spec, "myapp.memory:store")
    if not callable(getattr(obj, "batch", None)):  # BaseStore's one abstract method
        raise CLIError(f"--store {spec!r} is a {type(obj).__name__}, not a LangGraph store "
                       f"(BaseStore)", 2)
    return obj


def load_cache(spec: str) -> Any:
    """`--cache module:attr`: the object there (a LangGraph `BaseCache`)."""
    obj = _load_object("--cache", spec, "myapp.memory:cache")
    if not all(callable(getattr(obj, m, None)) for m in ("get", "aget", "set", "aset",
                                                          "clear", "aclear")):
        raise CLIError(f"--cache {spec!r} is a {type(obj).__name__}, not a LangGraph cache "
                       f"(BaseCache)", 2)
    return obj


async def _serve(client: Any, graphs: Mapping[str, Any], task_queue: str,
                 stop: _Stop, metrics: bool = False, store: Any = None,
                 cache: Any = None, health_bind: str | None = None,
                 **options: Any) -> None:
    """Run a worker until `stop`, then drain it: no new work, running nodes get the
    graceful-shutdown window, and a second signal (`stop.again`) ends the wait."""
    from graphrun.health import WorkerHealth
    from graphrun.metrics import waiting_reporter
    from graphrun.worker import create_worker

    # The client brings its tracing (or none: --tracing and the environment decided).
    worker = create_worker(client, graphs, task_queue=task_queue, tracing=None, store=store,
                           cache=cache, **options)
    reporter = (waiting_reporter(client, graphs) if metrics
                else contextlib.nullcontext())
    health = (WorkerHealth(worker, client, health_bind) if health_bind
              else contextlib.nullcontext())
    async with reporter, health as probe:
        run = asyncio.ensure_future(worker.run())
        waiter = asyncio.ensure_future(stop.wait())
        done, _ = await asyncio.wait({run, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if run in done:
            waiter.cancel()
            run.result()  # the worker stopped by itself: raise its error
            return
        if probe is not None:
            probe.draining = True
        grace = options.get("graceful_shutdown_timeout")
        if grace and grace.total_seconds() > 0:
            print_lines([f"draining: running nodes have {grace.total_seconds():g} s to "
                         f"finish; signal again to stop now"])
        shutdown = asyncio.ensure_future(worker.shutdown())
        again = asyncio.ensure_future(stop.again.wait())
        done, _ = await asyncio.wait({shutdown, again}, return_when=asyncio.FIRST_COMPLETED)
        if shutdown in done:
            again.cancel()
            await run
            return
        # Stop now: the nodes still running are left to Temporal, which runs them again
        # on another worker once their heartbeats stop.
        print_lines(["stopping now"])


def _graphs(args: argparse.Namespace, *, default_config: bool = False) -> dict[str, Any]:
    """--graph and --config (a langgraph.json; ./langgraph.json if asked and present)."""
    config = args.config or ("langgraph.json" if default_config and not args.graph
                             and os.path.exists("langgraph.json") else None)
    graphs = load_graphs(args.graph) if args.graph else {}
    if config:
        from graphrun.server.config import ConfigError, load_config

        try:
            graphs.update(load_config(config))
        except ConfigError as exc:
            raise CLIError(f"--config {config}: {exc}", 2) from None
    if not graphs:
        raise CLIError("no graphs: pass --graph MODULE:ATTR or --config langgraph.json", 2)
    if not _served(graphs):
        raise CLIError(f"--config {config}: no graph could be loaded: "
                       + "; ".join(g.reason for g in graphs.values()), 2)
    return graphs


def _served(graphs: Mapping[str, Any]) -> dict[str, Any]:
    """The graphs that loaded (a langgraph.json graph that failed is left out)."""
    return {k: g for k, g in graphs.items() if not hasattr(g, "reason")}


def _unserved_lines(graphs: Mapping[str, Any]) -> list[str]:
    return [f"NOT SERVED: {g.reason}" for g in graphs.values() if hasattr(g, "reason")]


def _config_file(args: argparse.Namespace) -> str | None:
    """The langgraph.json the server options come from: --config, else ./langgraph.json
    when there is one and no --graph."""
    return args.config or ("langgraph.json" if not args.graph
                           and os.path.exists("langgraph.json") else None)


def _server_options(args: argparse.Namespace, gc: Any, *, store_built: bool = False
                    ) -> tuple[dict[str, Any], list[str]]:
    """build_app's options from langgraph.json (its checkpointer.ttl onto the API's client,
    its http), and a line for each of its keys graphrun does not act on (`store_built`:
    the store served was built from its `store` section)."""
    config = _config_file(args)
    if not config:
        return {}, []
    from graphrun.server.config import (
        ConfigError,
        auth_options,
        http_options,
        thread_ttl,
        unused_keys,
        webhook_policy,
    )

    try:
        gc.default_ttl, refresh = thread_ttl(config)
        options = {"refresh_on_read": refresh, "http": http_options(config),
                   "webhooks": webhook_policy(config)}
        auth = auth_options(config)  # custom auth (graphrun.server.auth)
        if auth is not None:
            options["auth"] = auth
        notes = [f"{config}: not used: {line}"
                 for line in unused_keys(config, store_built=store_built)]
    except ConfigError as exc:
        raise CLIError(f"--config {config}: {exc}", 2) from None
    return options, notes


async def cmd_serve(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from graphrun.server import build_app
    except ImportError as exc:
        raise CLIError(f"graphrun serve needs the server extra ({exc}): "
                       f"pip install 'graphrun[server]'", 2) from None
    graphs = _graphs(args, default_config=True)
    conn = _connection(args)
    gc = await _connect(conn)
    await _require_setup(gc)
    options, notes = _server_options(args, gc)
    app = build_app(gc, graphs, cors_origins=args.cors_origin or (),
                    store=load_store(args.store) if args.store else None,
                    check_search_attributes=False,  # checked just above
                    **options)
    api_metrics = ("off (http.disable_meta)" if "meta" in app.state.http.disabled else
                   f"http://{args.host}:{args.port}/metrics (for Prometheus)")
    temporal_metrics = (f"http://{conn.metrics_bind}/metrics (for Prometheus)"
                        if conn.metrics_bind else
                        "off (--metrics-bind HOST:PORT serves them for Prometheus)")
    print_lines([f"graphrun serve on http://{args.host}:{args.port} (Temporal {conn.address}, "
                 f"task queue {conn.task_queue})",
                 f"graphs: {', '.join(sorted(_served(graphs)))}", *_unserved_lines(graphs),
                 "the graphs run on workers: graphrun worker --config/--graph",
                 f"API metrics: {api_metrics}",
                 f"Temporal client metrics: {temporal_metrics}", *notes])
    # Idle keep-alive connections stay open longer than a client's pool keeps them
    # (uvicorn's 5 s races clients reusing a connection as it closes).
    server = uvicorn.Server(uvicorn.Config(app, host=args.host, port=args.port,
                                           log_level="warning",
                                           timeout_keep_alive=KEEP_ALIVE_SECONDS))
    await server.serve()
    return 0


async def _require_setup(gc: Any) -> None:
    """Refuse to serve threads on a namespace that lacks graphrun's search attributes
    (`graphrun setup` registers them): every thread's workflow task would fail."""
    from graphrun.errors import SetupError
    from graphrun.namespace import require_search_attributes

    if not gc.search_attributes:
        return
    try:
        await require_search_attributes(gc.client)
    except SetupError as exc:
        raise CLIError(str(exc)) from exc


async def cmd_setup(args: argparse.Namespace) -> int:
    """`graphrun setup`: register graphrun's search attributes, report (and set) retention."""
    from graphrun import namespace as ns
    from graphrun.errors import SetupError
    from graphrun.visibility import SEARCH_ATTRIBUTES

    conn = _connection(args)
    gc = await _connect(conn)
    client = gc.client
    lines = [f"namespace {conn.namespace} on {conn.address}"]
    problems: list[str] = []
    state: dict[str, str] = {}
    try:
        state = await (ns.check_search_attributes(client) if args.check
                       else ns.add_search_attributes(client))
    except ns.OperatorDeniedError as exc:
        steps = [] if "tcld" in str(exc) else ns.cloud_steps(conn.namespace)
        problems.append("\n".join([str(exc), *steps]))
    except SetupError as exc:  # a wrong kind, or the server's refusal
        raise CLIError(str(exc)) from exc
    lines += [f"  {name} ({kind}): {state[name]}" for name, kind in SEARCH_ATTRIBUTES.items()
              if name in state]
    ttl = before = await ns.retention(client)
    if args.retention is not None:
        try:
            ttl = await ns.set_retention(client, args.retention)
        except SetupError as exc:
            problems.append(str(exc))
    changed = f" (was {ns.format_retention(before)})" if ttl != before else ""
    lines.append(f"retention: {ns.format_retention(ttl)}{changed}")
    if ttl is None or ttl < ns.SHORT_RETENTION:
        lines.append(f"warning: a retention of {ns.format_retention(ttl)} is short: threads "
                     f"stay open and do not depend on it, but closed executions (finished "
                     f"threads of earlier graphrun versions, runs continued as new, deleted "
                     f"threads' closed runs) are kept only that long; `graphrun setup "
                     f"--retention 30` keeps them 30 days")
    print_lines(lines)
    missing = [f"{name} ({SEARCH_ATTRIBUTES[name]})" for name, st in state.items()
               if st == "missing"]
    if missing:
        command = ns.setup_command(client)
        problems.insert(0, f"missing search attributes: {', '.join(missing)}; register them "
                           f"with `{command}`")
    if problems:
        raise CLIError("\n".join(problems))
    return 0


async def cmd_worker(args: argparse.Namespace) -> int:
    options = _worker_options(args)
    loaded = _graphs(args)
    graphs = _served(loaded)
    store = load_store(args.store) if args.store else None
    cache = load_cache(args.cache) if args.cache else None
    conn = _connection(args)
    stop = _stop_event()
    gc = await _connect(conn)
    await _require_setup(gc)
    print_lines([f"graphrun worker on {conn.address} (namespace {conn.namespace}, task queue "
                 f"{conn.task_queue})", f"serving graphs: {', '.join(sorted(graphs))}",
                 *_unserved_lines(loaded),
                 _encryption_line(conn.encryption), _storage_line(conn.payload_store),
                 _tracing_line(gc), _metrics_line(conn.metrics_bind),
                 *([f"store: {args.store}"] if store is not None else []),
                 *([f"cache: {args.cache}"] if cache is not None else []),
                 *_worker_lines(options), "ready; Ctrl-C to stop"])
    await _serve(gc.client, graphs, conn.task_queue, stop, metrics=bool(conn.metrics_bind),
                 store=store, cache=cache, **options)
    print_lines(["worker stopped"])
    return 0


def _worker_lines(options: Mapping[str, Any]) -> list[str]:
    grace = options["graceful_shutdown_timeout"].total_seconds()
    lines = [f"on SIGTERM: running nodes get {grace:g} s to finish"]
    if "tuner" in options:
        lines.append("slots: Temporal's resource-based tuner")
    if "node_threads" in options:
        lines.append(f"sync nodes: {options['node_threads']} threads")
    if "health_bind" in options:
        lines.append(f"health: http://{options['health_bind']}/healthz and /readyz")
    if "deployment_config" in options:
        config = options["deployment_config"]
        behavior = config.default_versioning_behavior.name.lower().replace("_", "-")
        lines.append(f"version: {config.version.deployment_name}:{config.version.build_id} "
                     f"(Worker Versioning, {behavior}); new threads come here once it is the "
                     f"deployment's current version")
    return lines


def _metrics_line(bind: str | None) -> str:
    if not bind:
        return "metrics: off (--metrics-bind HOST:PORT serves them for Prometheus)"
    return f"metrics: http://{bind}/metrics (Temporal's and graphrun's, for Prometheus)"


def _encryption_line(keys: Mapping[str, bytes] | None) -> str:
    if not keys:
        return "payloads: plain JSON (set GRAPHRUN_ENCRYPTION_KEYS to encrypt)"
    ids = list(keys)
    return f"payloads: encrypted with key {ids[0]!r}; decrypts keys {ids}"


def _storage_line(store: str | None) -> str:
    if not store:
        return ("large payloads: in history, up to Temporal's 2 MB limit (set "
                "GRAPHRUN_PAYLOAD_STORE to a directory or s3://BUCKET)")
    return f"large payloads (256 KiB or more): stored in {store}"


async def cmd_dev(args: argparse.Namespace) -> int:
    from graphrun.devserver import DevServer, default_payload_dir
    from graphrun.errors import SetupError

    configured = args.graph or args.config or os.path.exists("langgraph.json")
    graphs = _graphs(args, default_config=True) if configured else example_graphs()
    if not graphs:
        raise CLIError("no graphs to serve: the examples package is not importable from "
                       f"{os.getcwd()}; pass --graph module:attr")
    task_queue = args.task_queue or os.environ.get("GRAPHRUN_TASK_QUEUE") or DEFAULT_TASK_QUEUE
    namespace = args.namespace or os.environ.get("TEMPORAL_NAMESPACE") or DEFAULT_NAMESPACE
    state_dir = Path(args.state_dir)
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CLIError(f"--state-dir {str(state_dir)!r}: {exc.strerror or exc}") from exc
    db = state_dir.resolve() / DB_FILENAME
    keys = _encryption_keys()
    # Large states stay out of history by default: on one machine, files are enough.
    payload_dir = None if args.no_payload_store else str(
        Path(args.payload_dir or _payload_dir_env() or default_payload_dir(db)).resolve())
    store = _dev_store(args)
    built = not args.store  # graphrun's in-memory store, from langgraph.json's `store`
    stop = _stop_event()
    server = DevServer(port=args.port, ui=not args.no_ui,
                       ui_port=None if args.no_ui else args.ui_port, db_filename=db,
                       namespace=namespace, codec_endpoint=args.ui_codec_endpoint)
    try:
        await asyncio.to_thread(server.start)
    except SetupError as exc:  # the state dir's database has one of another kind
        raise CLIError(f"{exc} (state: {db})") from exc
    except RuntimeError as exc:
        first = str(exc).splitlines()[0]
        raise CLIError(f"cannot start the Temporal dev server: {first} (is port {args.port} "
                       f"in use? try --port)") from exc
    try:
        from graphrun.connection import TemporalConnection

        local = TemporalConnection(address=server.address, namespace=namespace)
        conn = Connection(address=server.address, namespace=namespace, temporal=local,
                          task_queue=task_queue, encryption=keys, payload_store=payload_dir,
                          tracing=args.tracing or "auto", metrics_bind=args.metrics_bind)
        gc = await _connect(conn)
        await _require_setup(gc)
        lines = [f"Temporal dev server: {server.address} (namespace {namespace})",
                 f"Web UI: {server.ui_url or '(disabled)'}",
                 f"state: {db}",
                 f"worker on task queue {task_queue!r} serving: "
                 f"{', '.join(sorted(_served(graphs)))}", *_unserved_lines(graphs),
                 _encryption_line(keys), _storage_line(payload_dir), _tracing_line(gc)]
        if args.metrics_bind:
            lines.append(_metrics_line(args.metrics_bind))
        if args.ui_codec_endpoint:
            lines.append(f"Web UI codec server: {args.ui_codec_endpoint}")
        elif keys and server.ui_url:
            lines.append("the Web UI shows encrypted payloads as such; run `graphrun "
                         "codec-server` and restart with --ui-codec-endpoint to read them")
        if server.address.rsplit(":", 1)[-1] != "7233":
            lines.append(f"export TEMPORAL_ADDRESS={server.address}")
        if payload_dir and payload_dir != _payload_dir_env():
            # Other commands read a large state from the same files.
            lines.append(f"export GRAPHRUN_PAYLOAD_DIR={payload_dir}")
        options, notes = _server_options(args, gc, store_built=built)
        lines += notes
        if built and store is not None:
            lines.append(_store_line(store))
        api = None if args.no_api else _api(gc, graphs, args.api_port, lines, store=store,
                                            **options)
        lines.append("ready; Ctrl-C to stop")
        print_lines(lines)
        sweeper = store.start_ttl_sweeper if built and store is not None else None
        if sweeper is not None:
            await sweeper()  # store.ttl.sweep_interval_minutes
        try:
            # The default store goes to the nodes too, unless a graph brings its own.
            own = any(getattr(g, "store", None) is not None for g in _served(graphs).values())
            await _serve(gc.client, _served(graphs), task_queue, stop,
                         metrics=bool(args.metrics_bind),
                         store=store if args.store or not own else None)
        finally:
            if sweeper is not None:
                await store.stop_ttl_sweeper()
            if api is not None:
                api[0].should_exit = True
                await asyncio.gather(api[1], return_exceptions=True)
    finally:
        await asyncio.to_thread(server.stop)
    print_lines(["stopped"])
    return 0


def _dev_store(args: argparse.Namespace) -> Any:
    """`graphrun dev`'s store: --store, else an in-memory one (as `langgraph dev`), with
    the index and TTLs of langgraph.json's `store` (graphrun.server.memory); None
    without LangGraph installed."""
    if args.store:
        return load_store(args.store)
    from graphrun.server.config import ConfigError, store_from_config

    config = _config_file(args)
    try:
        return store_from_config(config)
    except ConfigError as exc:
        raise CLIError(f"--config {config}: {exc}", 2) from None


def _store_line(store: Any) -> str:
    """What the in-memory store `graphrun dev` built keeps."""
    index, ttl = store.index_config, store.ttl_config or {}
    parts = ["store: in memory (this process's own)"]
    if index:
        parts.append(f"semantic search on {index.get('fields') or ['$']} "
                     f"({index['dims']} dims)")
    if ttl.get("default_ttl"):
        parts.append(f"items expire {ttl['default_ttl']} min after their last "
                     f"{'read or write' if ttl.get('refresh_on_read', True) else 'write'}")
    return ", ".join(parts)


def _api(gc: Any, graphs: Mapping[str, Any], port: int, lines: list[str],
         **options: Any) -> Any:
    """The LangGraph Server API next to the dev worker, if the server extra is there: for
    browser apps on this machine and LangGraph Studio."""
    try:
        import uvicorn

        from graphrun.server import build_app
    except ImportError:
        lines.append("LangGraph Server API: off (pip install 'graphrun[server]')")
        return None
    app = build_app(gc, graphs, cors_localhost=True, cors_origins=[STUDIO_ORIGIN],
                    private_network=True, studio_auth=True, **options)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning", lifespan="off",
                                           timeout_keep_alive=KEEP_ALIVE_SECONDS))

    async def serve() -> None:
        try:
            await server.serve()
        except (SystemExit, OSError):  # the port is taken: the worker goes on without it
            print(f"graphrun dev: the API could not listen on port {port}; pass --api-port",
                  file=sys.stderr)

    lines.append(f"LangGraph Server API: http://127.0.0.1:{port} (docs at /docs)")
    return server, asyncio.ensure_future(serve())


async def cmd_codec_server(args: argparse.Namespace) -> int:
    from graphrun.codec import EncryptionCodec
    from graphrun.codec_server import DEFAULT_ORIGIN, TOKEN_ENV, CodecServer

    keys = _encryption_keys()
    if not keys:
        raise CLIError("codec-server needs keys: set GRAPHRUN_ENCRYPTION_KEYS="
                       "'k1:<base64 of 32 bytes>' (newest first), as for the workers", 2)
    try:
        codec = EncryptionCodec(keys)
    except ImportError as exc:
        raise CLIError(str(exc)) from exc
    token = args.token or os.environ.get(TOKEN_ENV) or None
    origins = args.origin or [DEFAULT_ORIGIN]
    try:
        server = CodecServer(codec, host=args.host, port=args.port, origins=origins,
                             token=token, namespaces=args.namespace)
    except OSError as exc:
        raise CLIError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc} "
                       f"(try --port)") from exc
    stop = _stop_event()
    with server:
        print_lines([f"codec server: {server.url} (POST /encode, /decode)",
                     f"keys: {list(keys)} (encrypts with {next(iter(keys))!r})",
                     f"CORS origins: {', '.join(origins)}",
                     f"token: {'required' if token else 'none (set --token or ' + TOKEN_ENV + ')'}",
                     f"use: temporal server start-dev --ui-codec-endpoint {server.url}",
                     "ready; Ctrl-C to stop"])
        await stop.wait()
    print_lines(["stopped"])
    return 0


_COMMANDS = {
    "codec-server": cmd_codec_server,
    "dev": cmd_dev,
    "setup": cmd_setup,
    "worker": cmd_worker,
    "serve": cmd_serve,
    "invoke": cmd_invoke,
    "resume": cmd_resume,
    "state": cmd_state,
    "history": cmd_history,
    "threads": cmd_threads,
    "delete": cmd_delete,
    "migrate": cmd_migrate,
    "upgrade-threads": cmd_upgrade_threads,
    "graph": cmd_graph,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `graphrun` command; returns the exit code.

    Called with no `argv` (the console script, ``python -m graphrun.cli``), the process
    ends with ``os._exit`` once output is flushed: temporalio's Rust runtime threads can
    otherwise abort the interpreter while it finalizes (temporalio/sdk-python#300), which
    would turn a successful command into exit code 134. Called with a list, it returns.
    """
    code = _main(argv)
    if argv is None:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(code)
    return code


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        return int(exc.code or 0)
    _ensure_cwd_on_path()
    try:
        try:
            return asyncio.run(_run_command(args))
        finally:
            _flush_tracing()  # runs still queued would be lost when the process ends
    except CLIError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # anything else: still one line, not a traceback
        if isinstance(exc, KeyError) and "binary/encrypted" in str(exc):
            # temporalio's converter met a payload only a codec can read.
            print("error: the thread's payloads are encrypted and GRAPHRUN_ENCRYPTION_KEYS is "
                  "not set; set it to the workers' keys", file=sys.stderr)
            return 1
        if "TMPRL1105" in str(exc):
            # temporalio met a reference to an externally stored payload.
            print("error: the thread's large payloads are in external storage and "
                  "GRAPHRUN_PAYLOAD_DIR is not set; set it (or GRAPHRUN_PAYLOAD_STORE, or "
                  "--payload-store) to the workers' payload store (`graphrun dev` prints its "
                  "own)", file=sys.stderr)
            return 1
        if _is_unavailable(exc):
            print(f"error: lost the connection to the Temporal server ({exc}); {_SERVER_HINT}",
                  file=sys.stderr)
            return 1
        if os.environ.get("GRAPHRUN_DEBUG"):
            raise
        message = str(exc).splitlines()[0] if str(exc) else ""
        print(f"error: {type(exc).__name__}: {message} (set GRAPHRUN_DEBUG=1 for a traceback)",
              file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
