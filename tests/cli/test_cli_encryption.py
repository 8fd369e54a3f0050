"""`GRAPHRUN_ENCRYPTION_KEYS` in the `graphrun` command: every command that connects encrypts,
and `graphrun codec-server` serves the keys over Temporal's remote codec protocol."""

from __future__ import annotations

import base64
import http.client
import json
import uuid
from collections.abc import Iterator

import pytest

from graphrun.devserver import DevServer
from tests.cli.helpers import Background, CLIWorker, run_cli

K1 = base64.b64encode(bytes(range(32))).decode()
KEYS = {"GRAPHRUN_ENCRYPTION_KEYS": f"k1:{K1}"}
ITEM = "Encrypted GPU for cli-otter-4412"


@pytest.fixture(scope="module")
def encrypted_worker(dev_server: DevServer) -> Iterator[CLIWorker]:
    tq = f"cli-enc-{uuid.uuid4()}"
    bg = Background.start("worker", "--graph", "examples.purchase:graph",
                          "--address", dev_server.address, "--task-queue", tq, env=KEYS)
    try:
        bg.wait_for("ready")
        assert any("payloads: encrypted with key 'k1'" in line for line in bg.lines), bg.lines
        yield CLIWorker(dev_server.address, tq, bg)
        code, _ = bg.interrupt()
        assert code == 0, bg.lines
    finally:
        bg.kill()


def test_commands_use_the_keys(encrypted_worker: CLIWorker) -> None:
    w = encrypted_worker
    thread = f"cli-enc-{uuid.uuid4().hex[:10]}"
    r = w.run("invoke", "purchase", "--thread", thread, "--input",
              json.dumps({"item": ITEM, "amount": 5.0, "status": "pending"}), env=KEYS)
    assert r.code == 0, r
    assert "interrupted" in r.out and ITEM in r.out

    # Without the keys the same thread cannot be read; the error says what to set.
    r = w.run("state", thread)
    assert r.code == 1, r
    assert r.err.startswith("error: ") and "GRAPHRUN_ENCRYPTION_KEYS" in r.err
    assert len(r.err.strip().splitlines()) == 1

    r = w.run("state", thread, "--json", env=KEYS)
    assert r.code == 0 and json.loads(r.out)["values"]["item"] == ITEM
    r = w.run("resume", thread, "true", env=KEYS)
    assert r.code == 0, r
    r = w.run("state", thread, "--json", env=KEYS)
    assert json.loads(r.out)["values"]["status"] == "charged"


def test_malformed_keys_are_a_usage_error(encrypted_worker: CLIWorker) -> None:
    r = encrypted_worker.run("state", "t", env={"GRAPHRUN_ENCRYPTION_KEYS": "k1:tooshort"})
    assert r.code == 2, r
    assert r.err.startswith("error: GRAPHRUN_ENCRYPTION_KEYS: key 'k1'")
    assert "tooshort" not in r.err


def test_codec_server_command() -> None:
    r = run_cli("codec-server", "--port", "0")
    assert r.code == 2 and "GRAPHRUN_ENCRYPTION_KEYS" in r.err

    bg = Background.start("codec-server", "--port", "0", "--origin", "http://127.0.0.1:9999",
                          env={**KEYS, "GRAPHRUN_CODEC_TOKEN": "tok"})
    try:
        bg.wait_for("ready")
        url = next(line for line in bg.lines if line.startswith("codec server: "))
        port = int(url.split("http://127.0.0.1:")[1].split()[0])
        body = json.dumps({"payloads": [{"metadata": {"encoding": base64.b64encode(
            b"json/plain").decode()}, "data": base64.b64encode(b'"hi"').decode()}]})

        def post(path: str, data: str, token: str | None) -> tuple[int, dict]:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            headers = {"Content-Type": "application/json", "X-Namespace": "default"}
            if token:
                headers["Authorization"] = f"Bearer {token}"
            conn.request("POST", path, body=data, headers=headers)
            resp = conn.getresponse()
            out = json.loads(resp.read())
            conn.close()
            return resp.status, out

        assert post("/encode", body, None)[0] == 401
        status, encoded = post("/encode", body, "tok")
        assert status == 200
        meta = encoded["payloads"][0]["metadata"]
        assert base64.b64decode(meta["encryption-key-id"]) == b"k1"
        status, decoded = post("/decode", json.dumps(encoded), "tok")
        assert status == 200 and base64.b64decode(decoded["payloads"][0]["data"]) == b'"hi"'
        code, _ = bg.interrupt()
        assert code == 0, bg.lines
    finally:
        bg.kill()
