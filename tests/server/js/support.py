"""What the JS SDK tests share: node, the npm packages of package.json (installed once
into a cache outside the repo), the browser bundle, and an API host of their own.

The packages are installed with ``npm ci`` from package-lock.json into
``$GRAPHRUN_JS_CACHE`` (default ``~/.cache/graphrun-js``) ``/<hash>/``, the hash being
that of package.json, package-lock.json and .npmrc (and the platform: esbuild's binary
is a per-platform package), so a later run reuses them and a changed pin installs anew.
Without node or npm the tests fail, naming what to install: CI installs node.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import os
import platform
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typing_extensions import TypedDict

from graphrun import START, StateGraph
from tests.server.conftest import GRAPHS, _ApiHost

JS_DIR = Path(__file__).parent
LOCKED = ("package.json", "package-lock.json", ".npmrc")
INSTALL_TIMEOUT = 600
NODE_HINT = "install node >= 20 with npm; Debian 12's own nodejs package is node 18"


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"'{name}' is not on PATH: the JS SDK tests need node >= 20 and npm "
                    f"({NODE_HINT}).", pytrace=False)
    return found


def node() -> str:
    path = _tool("node")
    version = subprocess.run([path, "--version"], capture_output=True, text=True,
                             check=True).stdout.strip()
    major = int(version.lstrip("v").split(".")[0])
    if major < 20:
        pytest.fail(f"node {version} is too old: the JS SDK needs node >= 20 ({NODE_HINT}).",
                    pytrace=False)
    return path


def _key() -> str:
    h = hashlib.sha256(f"{platform.system()}-{platform.machine()}".encode())
    for name in LOCKED:
        h.update(name.encode() + b"\0" + (JS_DIR / name).read_bytes() + b"\0")
    return h.hexdigest()[:16]


def cache_dir() -> Path:
    root = Path(os.environ.get("GRAPHRUN_JS_CACHE", Path.home() / ".cache" / "graphrun-js"))
    return root / _key()


def node_modules() -> Path:
    """package.json's packages, installed (once per pin) in the cache."""
    target = cache_dir()
    modules = target / "node_modules"
    if (target / ".installed").exists():
        return modules
    node()
    npm = _tool("npm")
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one install at a time (pytest-xdist, two runs)
        if (target / ".installed").exists():
            return modules
        work = target.parent / f"{target.name}.tmp-{os.getpid()}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        for name in LOCKED:
            shutil.copyfile(JS_DIR / name, work / name)
        # --ignore-scripts: esbuild's postinstall only optimises; its binary is the
        # optional package @esbuild/<platform>, which npm installs as any other.
        done = subprocess.run([npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund"],
                              cwd=work, capture_output=True, text=True,
                              timeout=INSTALL_TIMEOUT)
        if done.returncode != 0:
            shutil.rmtree(work, ignore_errors=True)
            pytest.fail(f"npm ci of tests/server/js/package.json failed "
                        f"({done.returncode}):\n{done.stdout}\n{done.stderr}", pytrace=False)
        shutil.rmtree(target, ignore_errors=True)
        work.rename(target)
        (target / ".installed").write_text("ok\n")
    return modules


def sdk_bundle() -> Path:
    """LangGraph's JS SDK as one ES module for a browser (esbuild), built once per pin."""
    modules = node_modules()
    out = cache_dir() / "bundle" / "langgraph-sdk.js"
    if out.exists():
        return out
    tmp = out.with_suffix(f".tmp-{os.getpid()}.js")
    out.parent.mkdir(exist_ok=True)
    done = subprocess.run(
        [node(), str(modules / "esbuild" / "bin" / "esbuild"), "--bundle", "--format=esm",
         "--platform=browser", "--target=es2022", "--log-level=warning",
         f"--outfile={tmp}"],
        input='export { Client } from "@langchain/langgraph-sdk";\n',
        cwd=modules.parent, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        pytest.fail(f"esbuild could not bundle the SDK:\n{done.stdout}\n{done.stderr}",
                    pytrace=False)
    tmp.rename(out)
    return out


def sdk_version() -> str:
    import json

    pkg = node_modules() / "@langchain" / "langgraph-sdk" / "package.json"
    return str(json.loads(pkg.read_text())["version"])


# A graph whose run takes a while, so that a background run can be found running:
# cancelled, or refused a second run with multitask_strategy "reject".
SLOW_SECONDS = 3.0


class _Errand(TypedDict):
    item: str


async def _take_time(state: _Errand) -> _Errand:
    await asyncio.sleep(SLOW_SECONDS)
    return {"item": f"{state['item']} (done)"}


errand = (StateGraph(_Errand).add_node("take_time", _take_time).add_edge(START, "take_time")
        .compile(name="errand"))


def ApiHost(address: str, **app_options: Any) -> _ApiHost:
    """conftest's API host serving conftest's graphs and `errand`, with `build_app`'s
    options (CORS)."""
    return _ApiHost(address, {**GRAPHS, "errand": errand}, **app_options)


_shared: dict[str, _ApiHost] = {}


def shared_host(address: str) -> _ApiHost:
    """The host of test_js_sdk.py and test_browser.py (CORS for localhost origins), one
    per dev server, kept until the session ends (close_shared): a thread left
    interrupted behind a stopped worker costs every later thread search that lists it
    about 30 s (the query waits for a poller), so these threads' worker stays up."""
    host = _shared.get(address)
    if host is None:
        host = _shared[address] = ApiHost(address, cors_localhost=True)
    return host


def close_shared() -> None:
    while _shared:
        _shared.popitem()[1].close()
