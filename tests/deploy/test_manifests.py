"""Static checks of deploy/kubernetes/: no cluster, no kubectl, no kustomize needed.

* Every manifest (and every manifest as each component in components/ patches it)
  validates against the Kubernetes OpenAPI schemas of K8S_VERSION that
  ``kubernetes-validate`` ships, in strict mode: an unknown or misspelt field fails.
* Cross-checks the schemas cannot express: every ``graphrun ...`` command line (the
  manifests' and docker/docker-compose.yml's) parses with the CLI's own parser; the
  worker's probes hit the paths and the port its ``--health-bind`` serves, its metrics
  port is the one annotated for Prometheus, and its termination grace outlasts its
  drain; the Job runs ``graphrun setup`` with a retention; the API is probed on /ok
  and reached by its Service; the Secret template holds placeholders only and every
  secret a workload reads is in it; images are pinned to a tag; the pods run as the
  image's non-root user; kustomization.yaml lists every manifest and copies the image
  tag into GRAPHRUN_BUILD_ID.
"""

from __future__ import annotations

import copy
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip("yaml")
kubernetes_validate = pytest.importorskip("kubernetes_validate")

ROOT = Path(__file__).resolve().parents[2]
KUBE = ROOT / "deploy" / "kubernetes"
COMPOSE = ROOT / "docker" / "docker-compose.yml"
DOCKERFILE = ROOT / "docker" / "Dockerfile"
K8S_VERSION = "1.35.0"  # a recent release whose schemas kubernetes-validate ships
WORKLOADS = {"graphrun-setup": "Job", "graphrun-worker": "Deployment",
             "graphrun-api": "Deployment"}


# -- loading ----------------------------------------------------------------------------


def _docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


@pytest.fixture(scope="module")
def kustomization() -> dict[str, Any]:
    return yaml.safe_load((KUBE / "kustomization.yaml").read_text())


def _manifest_files() -> list[Path]:
    return sorted(p for p in KUBE.glob("*.yaml") if p.name != "kustomization.yaml")


@pytest.fixture(scope="module")
def manifests() -> list[dict[str, Any]]:
    """Every object of deploy/kubernetes/*.yaml, the Secret template included."""
    return [d for p in _manifest_files() for d in _docs(p)]


def _find(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    found = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    assert len(found) == 1, (kind, name, len(found))
    return found[0]


def _pod(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["spec"]["template"]["spec"]


def _container(doc: dict[str, Any]) -> dict[str, Any]:
    (container,) = _pod(doc)["containers"]
    return container


def _env(container: dict[str, Any]) -> dict[str, Any]:
    """name -> value, or the valueFrom mapping."""
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env", [])}


def _args(command: list[str]) -> Any:
    from graphrun.cli import build_parser

    assert command[0] == "graphrun", command
    return build_parser().parse_args(command[1:])  # SystemExit(2) on an unknown flag


# -- schemas ----------------------------------------------------------------------------


def _validate(doc: dict[str, Any]) -> None:
    try:
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
    except kubernetes_validate.ValidationError as exc:
        where = "/".join(map(str, exc.path))
        pytest.fail(f"{doc['kind']} {doc['metadata']['name']}: {where}: {exc.message}")


def test_every_manifest_matches_the_kubernetes_schemas(manifests: list[dict[str, Any]]) -> None:
    assert {d["kind"] for d in manifests} >= {"Namespace", "ConfigMap", "Secret", "Job",
                                              "Deployment", "Service",
                                              "PodDisruptionBudget"}
    for doc in manifests:
        _validate(doc)


def test_strict_validation_rejects_unknown_fields(manifests: list[dict[str, Any]]) -> None:
    """Guards the check itself: a misspelt field and a wrong type both fail."""
    worker = copy.deepcopy(_find(manifests, "Deployment", "graphrun-worker"))
    _container(worker)["readinessProb"] = _container(worker).pop("readinessProbe")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(worker, K8S_VERSION, strict=True)
    job = copy.deepcopy(_find(manifests, "Job", "graphrun-setup"))
    job["spec"]["backoffLimit"] = "six"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(job, K8S_VERSION, strict=True)


# -- kustomize ---------------------------------------------------------------------------


def test_kustomization_lists_every_manifest_but_the_secret(
        kustomization: dict[str, Any]) -> None:
    """`kubectl apply -k` applies everything but the Secret template: secret values are
    made outside git (kubectl create secret, a secret manager)."""
    assert kustomization["kind"] == "Kustomization"
    resources = kustomization["resources"]
    for name in resources:
        assert (KUBE / name).is_file(), name
    files = {p.name for p in _manifest_files()}
    assert set(resources) == files - {"secret.yaml"}, (resources, files)
    assert kustomization["namespace"] == "graphrun"


def _image_tag(image: str) -> str:
    repo, sep, tag = image.rpartition(":")
    assert sep and repo and "/" not in tag, f"{image}: not pinned to a tag"
    return tag


def test_images_are_pinned(manifests: list[dict[str, Any]],
                           kustomization: dict[str, Any]) -> None:
    images = {_container(_find(manifests, kind, name))["image"]
              for name, kind in WORKLOADS.items()}
    assert len(images) == 1, images  # one image: setup, worker and API agree
    (image,) = images
    assert _image_tag(image) not in ("", "latest")
    (entry,) = kustomization["images"]
    assert image == f"{entry['name']}:{entry['newTag']}"


def test_build_id_follows_the_image_tag(manifests: list[dict[str, Any]],
                                        kustomization: dict[str, Any]) -> None:
    """Worker Versioning: the worker's GRAPHRUN_BUILD_ID is its image's tag, and
    kustomize's replacement keeps it so when the tag changes (images runs before
    replacements)."""
    worker = _find(manifests, "Deployment", "graphrun-worker")
    container = _container(worker)
    env = _env(container)
    assert env["GRAPHRUN_DEPLOYMENT_NAME"] == "graphrun"
    assert env["GRAPHRUN_BUILD_ID"] == _image_tag(container["image"])
    (rep,) = kustomization["replacements"]
    source, (target,) = rep["source"], rep["targets"]
    assert (source["kind"], source["name"]) == ("Deployment", "graphrun-worker")
    assert source["fieldPath"] == f"spec.template.spec.containers.[name={container['name']}].image"
    assert source["options"] == {"delimiter": ":", "index": 1}
    assert container["image"].split(":")[1] == env["GRAPHRUN_BUILD_ID"]
    assert target["select"] == {"kind": "Deployment", "name": "graphrun-worker"}
    assert target["fieldPaths"] == [f"spec.template.spec.containers.[name={container['name']}]"
                                    ".env.[name=GRAPHRUN_BUILD_ID].value"]


def test_versioning_variables_are_the_clis(manifests: list[dict[str, Any]]) -> None:
    """GRAPHRUN_DEPLOYMENT_NAME and GRAPHRUN_BUILD_ID are what `graphrun worker` reads for
    --deployment-name and --build-id (GRAPHRUN_<FLAG>), once it has those flags."""
    from graphrun import cli

    flags = {flag for flag, *_ in getattr(cli, "WORKER_FLAGS", [])}
    if not {"--deployment-name", "--build-id"} <= flags:
        pytest.skip("this graphrun has no Worker Versioning flags yet")
    env = _env(_container(_find(manifests, "Deployment", "graphrun-worker")))
    for flag in ("--deployment-name", "--build-id"):
        assert "GRAPHRUN_" + flag.lstrip("-").replace("-", "_").upper() in env


def _apply_json_patch(doc: dict[str, Any], ops: list[dict[str, Any]]) -> dict[str, Any]:
    """RFC 6902 `add` (with `-` to append) and `remove`: what the components use."""
    doc = copy.deepcopy(doc)
    for op in ops:
        *parents, last = [p.replace("~1", "/").replace("~0", "~")
                          for p in op["path"].lstrip("/").split("/")]
        node: Any = doc
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if op["op"] == "add":
            if isinstance(node, list):
                node.insert(len(node) if last == "-" else int(last), op["value"])
            else:
                node[last] = op["value"]
        elif op["op"] == "remove":
            assert last in node, op["path"]
            del node[last]
        else:
            raise AssertionError(f"unexpected op {op['op']}")
    return doc


def _component_results(path: Path, manifests: list[dict[str, Any]]
                       ) -> list[dict[str, Any]]:
    """The objects a component patches, as they are after its patches."""
    comp = yaml.safe_load((path / "kustomization.yaml").read_text())
    assert comp["kind"] == "Component"
    assert comp["apiVersion"] == "kustomize.config.k8s.io/v1alpha1"
    patched: dict[tuple[str, str], dict[str, Any]] = {}
    for entry in comp["patches"]:
        target = entry["target"]
        key = (target["kind"], target["name"])
        ops = (yaml.safe_load((path / entry["path"]).read_text()) if "path" in entry
               else yaml.safe_load(entry["patch"]))
        base = patched.get(key) or _find(manifests, *key)
        patched[key] = _apply_json_patch(base, ops)
    return list(patched.values())


@pytest.mark.parametrize("component", ["mtls", "temporal-config"])
def test_components_patch_into_valid_manifests(
        component: str, manifests: list[dict[str, Any]]) -> None:
    results = _component_results(KUBE / "components" / component, manifests)
    workloads = [d for d in results if d["kind"] in ("Job", "Deployment")]
    assert {d["metadata"]["name"] for d in workloads} == set(WORKLOADS)
    for doc in results:
        _validate(doc)
    for doc in workloads:  # what is mounted is where the variables point
        container = _container(doc)
        volumes = {v["name"]: v for v in _pod(doc)["volumes"]}
        mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
        added = [n for n in mounts if "secret" in volumes[n]]
        (name,) = added
        assert mounts[name].startswith("/etc/temporal/")
        paths = [v for k, v in _env(container).items()
                 if k.startswith("TEMPORAL_") and isinstance(v, str) and v.startswith("/")]
        assert paths and all(p.startswith(mounts[name] + "/") for p in paths), paths
        assert volumes[name]["secret"]["secretName"].startswith("graphrun-temporal-")


def test_mtls_component_uses_temporalio_variables(manifests: list[dict[str, Any]]) -> None:
    """temporalio's environment configuration names (TEMPORAL_TLS_CLIENT_CERT_PATH, ...):
    every graphrun command reads them, as the `temporal` CLI does."""
    for doc in _component_results(KUBE / "components" / "mtls", manifests):
        env = _env(_container(doc))
        assert env["TEMPORAL_TLS_CLIENT_CERT_PATH"] == "/etc/temporal/tls/tls.crt"
        assert env["TEMPORAL_TLS_CLIENT_KEY_PATH"] == "/etc/temporal/tls/tls.key"
        assert env["TEMPORAL_TLS_SERVER_CA_CERT_PATH"] == "/etc/temporal/tls/ca.crt"
        assert env["TEMPORAL_TLS"] == "true"


def test_temporal_config_component(manifests: list[dict[str, Any]]) -> None:
    """A temporal.toml profile: the file and profile variables are set, and the ConfigMap
    no longer sets the address and namespace (environment variables override a profile)."""
    results = _component_results(KUBE / "components" / "temporal-config", manifests)
    config = _find(results, "ConfigMap", "graphrun-config")
    assert "TEMPORAL_ADDRESS" not in config["data"]
    assert "TEMPORAL_NAMESPACE" not in config["data"]
    for name, kind in WORKLOADS.items():
        env = _env(_container(_find(results, kind, name)))
        assert env["TEMPORAL_CONFIG_FILE"] == "/etc/temporal/config/temporal.toml"
        assert env["TEMPORAL_PROFILE"]


# -- the graphrun commands ---------------------------------------------------------------


def _graphrun_command_lines(manifests: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    lines = []
    for doc in manifests:
        if doc["kind"] in ("Job", "Deployment"):
            for c in _pod(doc)["containers"] + _pod(doc).get("initContainers", []):
                lines.append((f"{doc['metadata']['name']}/{c['name']}",
                              [*c.get("command", []), *c.get("args", [])]))
    compose = yaml.safe_load(COMPOSE.read_text())
    for name, service in compose["services"].items():
        command = service.get("command")
        if isinstance(command, list) and command and command[0] == "graphrun":
            lines.append((f"compose {name}", command))
        elif isinstance(command, list):  # a shell script of a one-shot service
            for line in "\n".join(command).splitlines():
                words = shlex.split(line, comments=True) if line.strip() else []
                if words[:1] == ["graphrun"]:
                    lines.append((f"compose {name}", words))
    return lines


def test_every_graphrun_command_line_parses(manifests: list[dict[str, Any]]) -> None:
    """A renamed or removed flag breaks this test, not a deployment."""
    lines = _graphrun_command_lines(manifests)
    subcommands = {}
    for where, command in lines:
        assert command[0] == "graphrun", (where, command)
        subcommands[where] = _args(command).command
    assert {"setup", "worker", "serve"} <= set(subcommands.values()), subcommands
    manifest_commands = {w.split("/")[0]: c for w, c in subcommands.items()
                         if not w.startswith("compose ")}
    assert manifest_commands == {"graphrun-setup": "setup", "graphrun-worker": "worker",
                                 "graphrun-api": "serve"}


def test_the_config_is_the_images(manifests: list[dict[str, Any]]) -> None:
    """--config names the langgraph.json docker/Dockerfile puts in /app."""
    text = DOCKERFILE.read_text()
    assert re.search(r"^WORKDIR /app$", text, re.M)
    assert re.search(r"^COPY docker/langgraph\.json \./langgraph\.json$", text, re.M)
    for name in ("graphrun-worker", "graphrun-api"):
        args = _args(_container(_find(manifests, "Deployment", name))["command"])
        assert args.config == "/app/langgraph.json", name


# -- the setup Job -----------------------------------------------------------------------


def test_setup_job(manifests: list[dict[str, Any]]) -> None:
    job = _find(manifests, "Job", "graphrun-setup")
    args = _args(_container(job)["command"])
    assert args.command == "setup"
    assert not args.check  # registers the attributes, not only checks them
    assert args.retention is not None and args.retention >= 7
    assert _pod(job)["restartPolicy"] in ("Never", "OnFailure")
    assert job["spec"]["backoffLimit"] >= 1


# -- the worker --------------------------------------------------------------------------


def _port(container: dict[str, Any], port: int | str) -> int:
    if isinstance(port, int):
        return port
    (found,) = [p["containerPort"] for p in container["ports"] if p.get("name") == port]
    return found


def test_worker_probes_hit_what_health_bind_serves(manifests: list[dict[str, Any]]) -> None:
    """/readyz (polling, Temporal reachable; 503 while draining) for readiness, /healthz
    (the process answers) for liveness, on --health-bind's port, on every interface."""
    from graphrun.health import parse_bind

    worker = _find(manifests, "Deployment", "graphrun-worker")
    container = _container(worker)
    args = _args(container["command"])
    assert args.command == "worker"
    host, port = parse_bind(args.health_bind)
    assert host == "0.0.0.0"  # the kubelet reaches the pod's IP, not its loopback
    probes = {kind: container[kind]["httpGet"] for kind in
              ("readinessProbe", "livenessProbe", "startupProbe") if kind in container}
    assert probes["readinessProbe"]["path"] == "/readyz"
    assert probes["livenessProbe"]["path"] == "/healthz"
    if "startupProbe" in probes:
        assert probes["startupProbe"]["path"] == "/healthz"
    for kind, probe in probes.items():
        assert _port(container, probe["port"]) == port, kind


def test_worker_metrics_are_scraped(manifests: list[dict[str, Any]]) -> None:
    from graphrun.health import parse_bind

    worker = _find(manifests, "Deployment", "graphrun-worker")
    container = _container(worker)
    host, port = parse_bind(_args(container["command"]).metrics_bind)
    assert host == "0.0.0.0"
    annotations = worker["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert int(annotations["prometheus.io/port"]) == port
    assert annotations["prometheus.io/path"] == "/metrics"
    assert port in [p["containerPort"] for p in container["ports"]]


def test_worker_termination_grace_outlasts_its_drain(manifests: list[dict[str, Any]]) -> None:
    """Kubernetes sends SIGKILL terminationGracePeriodSeconds after SIGTERM: the worker's
    drain (--graceful-shutdown, GRAPHRUN_GRACEFUL_SHUTDOWN, default 20 s) ends first,
    with time left for the SDK to shut down."""
    from graphrun import cli

    worker = _find(manifests, "Deployment", "graphrun-worker")
    container = _container(worker)
    args = _args(container["command"])
    env = _env(container)
    assert "GRAPHRUN_GRACEFUL_SHUTDOWN" in env  # said, not left to a default
    grace = args.graceful_shutdown
    if grace is None:
        grace = float(env["GRAPHRUN_GRACEFUL_SHUTDOWN"])
    assert _pod(worker)["terminationGracePeriodSeconds"] >= grace + 10
    assert _pod(worker)["terminationGracePeriodSeconds"] > cli.DEFAULT_GRACE
    strategy = worker["spec"]["strategy"]["rollingUpdate"]
    assert strategy["maxUnavailable"] == 0  # a rollout never drops below the replicas


# -- the API -----------------------------------------------------------------------------


def test_api_deployment_and_service(manifests: list[dict[str, Any]]) -> None:
    api = _find(manifests, "Deployment", "graphrun-api")
    container = _container(api)
    args = _args(container["command"])
    assert args.command == "serve"
    assert args.host == "0.0.0.0"
    readiness = container["readinessProbe"]["httpGet"]
    assert readiness["path"] == "/ok"  # needs no API key
    assert _port(container, readiness["port"]) == args.port
    # /ok is 503 while Temporal is unreachable: not a reason to restart the API.
    assert "httpGet" not in container["livenessProbe"]
    assert _port(container, container["livenessProbe"]["tcpSocket"]["port"]) == args.port
    service = _find(manifests, "Service", "graphrun-api")
    (sport,) = service["spec"]["ports"]
    assert _port(container, sport["targetPort"]) == args.port
    labels = api["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    annotations = api["spec"]["template"]["metadata"]["annotations"]
    assert int(annotations["prometheus.io/port"]) == args.port


def test_selectors_match_their_pods(manifests: list[dict[str, Any]]) -> None:
    for doc in manifests:
        if doc["kind"] == "Deployment":
            labels = doc["spec"]["template"]["metadata"]["labels"]
            assert doc["spec"]["selector"]["matchLabels"].items() <= labels.items()
    for doc in manifests:
        if doc["kind"] == "PodDisruptionBudget":
            selector = doc["spec"]["selector"]["matchLabels"]
            assert any(d["kind"] == "Deployment" and selector.items()
                       <= d["spec"]["template"]["metadata"]["labels"].items()
                       for d in manifests), doc["metadata"]["name"]


# -- configuration and secrets -----------------------------------------------------------


def test_every_workload_reads_the_config(manifests: list[dict[str, Any]]) -> None:
    config = _find(manifests, "ConfigMap", "graphrun-config")["data"]
    assert {"TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "GRAPHRUN_TASK_QUEUE"} <= set(config)
    assert re.fullmatch(r"[\w.-]+:\d+", config["TEMPORAL_ADDRESS"])
    for name, kind in WORKLOADS.items():
        refs = [e["configMapRef"]["name"] for e in _container(_find(manifests, kind, name))
                .get("envFrom", [])]
        assert refs == ["graphrun-config"], name


# What a real credential looks like: long base64 or hex runs, LangSmith's and OpenAI's
# key prefixes, PEM blocks.
REAL_LOOKING = re.compile(r"[A-Za-z0-9+/=_-]{24,}|\b(lsv2|sk|pk)_[A-Za-z0-9]|-----BEGIN")


def test_secret_template_holds_placeholders_only(manifests: list[dict[str, Any]]) -> None:
    (secret,) = [d for d in manifests if d["kind"] == "Secret"]
    assert "data" not in secret  # stringData, readable placeholders
    values = secret["stringData"]
    assert {"TEMPORAL_API_KEY", "GRAPHRUN_ENCRYPTION_KEYS", "LANGSMITH_API_KEY"} <= set(values)
    for key, value in values.items():
        assert value == "" or re.fullmatch(r"<[^<>]+>", value), (key, value)
        assert not REAL_LOOKING.search(value), (key, value)
    # Nor is one in the ConfigMap or a workload's literal variables.
    literals = list(_find(manifests, "ConfigMap", "graphrun-config")["data"].values())
    for name, kind in WORKLOADS.items():
        literals += [v for v in _env(_container(_find(manifests, kind, name))).values()
                     if isinstance(v, str)]
    for value in literals:
        assert not REAL_LOOKING.search(value), value


def test_secrets_read_are_in_the_template(manifests: list[dict[str, Any]]) -> None:
    """Every secret a workload reads is a key of the template and optional: a key left out
    of the real Secret is an unset variable, not a pod that cannot start."""
    (secret,) = [d for d in manifests if d["kind"] == "Secret"]
    keys = set(secret["stringData"])
    read = set()
    for name, kind in WORKLOADS.items():
        for env in _container(_find(manifests, kind, name)).get("env", []):
            ref = env.get("valueFrom", {}).get("secretKeyRef")
            if ref:
                assert ref["name"] == secret["metadata"]["name"], (name, env)
                assert ref["key"] in keys and ref.get("optional") is True, (name, env)
                assert env["name"] == ref["key"]
                read.add(ref["key"])
    assert read == keys, (read, keys)
    api_env = _env(_container(_find(manifests, "Deployment", "graphrun-api")))
    assert "GRAPHRUN_API_KEY" in api_env  # the API's own auth


def test_pods_run_as_the_images_user(manifests: list[dict[str, Any]]) -> None:
    user = re.findall(r"^USER (\d+):(\d+)$", DOCKERFILE.read_text(), re.M)[-1]
    for name, kind in WORKLOADS.items():
        doc = _find(manifests, kind, name)
        pod = _pod(doc)
        sc = pod["securityContext"]
        assert sc["runAsNonRoot"] is True
        assert (str(sc["runAsUser"]), str(sc["runAsGroup"])) == user, name
        assert sc["seccompProfile"]["type"] == "RuntimeDefault"
        assert pod["automountServiceAccountToken"] is False
        container = _container(doc)
        csc = container["securityContext"]
        assert csc["allowPrivilegeEscalation"] is False
        assert csc["capabilities"]["drop"] == ["ALL"]
        if csc.get("readOnlyRootFilesystem"):  # then /tmp is writable
            mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
            volumes = {v["name"]: v for v in pod["volumes"]}
            assert "emptyDir" in volumes[mounts["/tmp"]], name
        resources = container["resources"]
        assert resources["requests"]["cpu"] and resources["requests"]["memory"], name
        assert resources["limits"]["memory"], name
