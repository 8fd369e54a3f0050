"""Large state in S3 through the SDK's S3StorageDriver, against moto's S3 server started
here (``moto[server]`` and ``temporalio[aioboto3]`` are in the dev extra): a 5 MB state
pauses, resumes and is read, the objects are in the bucket, and history holds references.
"""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from temporalio.client import Client

from graphrun import Command
from graphrun.client import GraphClient, data_converter
from graphrun.storage import DEFAULT_THRESHOLD
from graphrun.worker import create_worker
from tests.temporal.storage_helpers import big_state_graph, history_payloads, is_reference

_MISSING = "needs the dev extra: pip install -e '.[dev]' (moto[server], temporalio[aioboto3])"
moto_server = pytest.importorskip("moto.server", reason=_MISSING)
aioboto3 = pytest.importorskip("aioboto3", reason=_MISSING)
s3driver = pytest.importorskip("temporalio.contrib.aws.s3driver.aioboto3", reason=_MISSING)
from temporalio.contrib.aws.s3driver import S3StorageDriver  # noqa: E402

BUCKET = "graphrun-payloads"
SIZE = 5_000_000


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    """moto's S3-compatible server on a free loopback port."""
    port = _free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


@pytest.fixture(scope="module")
async def s3(s3_endpoint: str) -> AsyncIterator[Any]:
    """An aioboto3 S3 client on moto, with the bucket the driver needs (it creates none)."""
    session = aioboto3.Session(aws_access_key_id="test", aws_secret_access_key="test",
                               region_name="us-east-1")
    async with session.client("s3", endpoint_url=s3_endpoint) as client:
        await client.create_bucket(Bucket=BUCKET)
        yield client


async def test_s3_driver_round_trips_a_large_state(temporal_client: Client, s3: Any) -> None:
    driver = S3StorageDriver(client=s3driver.new_aioboto3_client(s3), bucket=BUCKET)
    config = temporal_client.config()
    config["data_converter"] = data_converter(external_storage=driver)
    client = Client(**config)
    queue = f"s3-{uuid.uuid4()}"
    name = f"s3-big-{uuid.uuid4().hex[:8]}"
    async with create_worker(client, {name: big_state_graph(name, size=SIZE)},
                             task_queue=queue):
        graph = GraphClient(client, task_queue=queue).graph(name)
        tid = f"s3-{uuid.uuid4()}"
        cfg = {"configurable": {"thread_id": tid}}
        t0 = time.monotonic()
        out = await graph.ainvoke({"blob": "", "answers": []}, cfg)
        assert out["__interrupt__"][0].value["size"] == SIZE
        snap = await graph.aget_state(cfg)
        assert len(snap.values["blob"]) == SIZE and snap.next == ("ask",)
        out = await graph.ainvoke(Command(resume="ship it"), cfg)
        assert out["answers"] == ["ship it"] and out["blob"] == snap.values["blob"]
        took = time.monotonic() - t0

    found, runs = await history_payloads(client, tid)
    largest = max(p.ByteSize() for p in found)
    refs = sum(map(is_reference, found))
    assert largest < DEFAULT_THRESHOLD and refs > 0
    listed = await s3.list_objects_v2(Bucket=BUCKET)
    keys = [o["Key"] for o in listed.get("Contents", [])]
    # The SDK keys objects by namespace and workflow id, then content hash.
    assert any(f"/wi/{tid}/" in k for k in keys), keys
    print(f"\nS3 (moto): {SIZE} chars of state, pause/get_state/resume {took:.1f}s; "
          f"{runs} run(s), {refs} references, largest payload in history {largest} B, "
          f"{len(keys)} objects in the bucket")


async def test_commands_choose_s3_from_the_environment(dev_server: Any, s3: Any,
                                                       s3_endpoint: str) -> None:
    """`GRAPHRUN_PAYLOAD_STORE=s3://BUCKET` with AWS's own settings: a worker process and a
    CLI reader share the bucket, and neither writes a large payload into history."""
    from tests.cli.helpers import Background, run_cli

    queue, tid = f"s3-cli-{uuid.uuid4()}", f"s3-cli-{uuid.uuid4()}"
    env = {"GRAPHRUN_PAYLOAD_STORE": f"s3://{BUCKET}", "AWS_ENDPOINT_URL": s3_endpoint,
           "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
           "AWS_DEFAULT_REGION": "us-east-1", "TEMPORAL_ADDRESS": dev_server.address,
           "GRAPHRUN_TASK_QUEUE": queue}
    worker = Background.start("worker", "--graph", "tests.temporal.storage_helpers:cli_big",
                              env=env)
    try:
        worker.wait_for("ready")
        assert f"large payloads (256 KiB or more): stored in s3://{BUCKET}" in worker.lines
        r = run_cli("invoke", "cli-big", "--thread", tid, "--input",
                    '{"blob": "", "answers": []}', "--json", env=env, timeout=60)
        assert r.code == 0, r
        state = run_cli("state", tid, "--json", env=env)
        assert state.code == 0, state
        assert '"size": 3000000' in state.out
    finally:
        worker.kill()
    client = await Client.connect(dev_server.address)
    found, _ = await history_payloads(client, tid)
    assert max(p.ByteSize() for p in found) < DEFAULT_THRESHOLD
    listed = await s3.list_objects_v2(Bucket=BUCKET)
    assert any(f"/wi/{tid}/" in o["Key"] for o in listed.get("Contents", []))
    bad = run_cli("threads", "--payload-store", f"s3://{BUCKET}/prefix", env=env)
    assert bad.code == 2 and "s3://BUCKET, without a path" in bad.err, bad
