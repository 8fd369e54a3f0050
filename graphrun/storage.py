"""Large state: Temporal's external payload storage, with a local-directory driver.

Temporal refuses a payload over 2 MB (and a gRPC message over 4 MB), so a thread
whose state keeps growing would one day wedge: its node's input, its update's
result, its continue-as-new input no longer fit. With external storage, the SDK
puts every payload at or over a threshold into a blob store and writes a small
reference into history instead. It does so for every payload graphrun sends
(workflow and activity input and results, updates, queries, continue-as-new), in
the client and in the worker alike, so both need the same drivers.

    from graphrun.client import GraphClient
    from graphrun.storage import LocalDirectoryDriver

    gc = await GraphClient.connect(external_storage="/var/lib/graphrun/payloads")
    gc = await GraphClient.connect(external_storage=my_s3_driver)     # any StorageDriver

The SDK ships an S3 driver (``temporalio.contrib.aws.s3driver``) and a GCS one; this
module adds `LocalDirectoryDriver` for one machine (``graphrun dev``, tests) or a
shared filesystem. With encryption on, payloads are encrypted first and stored as
ciphertext (the SDK runs the codec before external storage).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from temporalio.api.common.v1 import Payload
from temporalio.converter import (
    ExternalStorage,
    StorageDriver,
    StorageDriverClaim,
    StorageDriverRetrieveContext,
    StorageDriverStoreContext,
    StorageDriverWorkflowInfo,
)

__all__ = [
    "DEFAULT_THRESHOLD",
    "PAYLOAD_DIR_ENV",
    "PAYLOAD_STORE_ENV",
    "ExternalStorage",
    "LocalDirectoryDriver",
    "StorageDriver",
    "open_store",
    "storage_from",
    "storage_from_env",
]

DEFAULT_THRESHOLD = 256 * 1024
"""Payloads this size (serialized bytes) or larger go to the blob store: the SDK's default,
well under Temporal's 2 MB payload limit and its 512 KB warning."""

PAYLOAD_DIR_ENV = "GRAPHRUN_PAYLOAD_DIR"
"""Environment variable naming a directory for `LocalDirectoryDriver` (the CLI reads it)."""

PAYLOAD_STORE_ENV = "GRAPHRUN_PAYLOAD_STORE"
"""Environment variable naming the store of the CLI's commands: a directory, or
``s3://BUCKET`` (`open_store`); over ``GRAPHRUN_PAYLOAD_DIR`` when both are set."""

StorageLike = ExternalStorage | StorageDriver | Sequence[StorageDriver] | str | os.PathLike[str]


class LocalDirectoryDriver(StorageDriver):
    """Stores each payload in a file named by the SHA-256 of its bytes, under `path`, in
    a folder of the thread it belongs to (its workflow: `threads/<hash of namespace and
    workflow id>/sha256/...`).

    Content addressing makes a store idempotent (a retried task writes the same file).
    The claim holds the hash and the thread's folder name, not the path, so the
    directory can be moved. Deleting a thread (`GraphClient.delete_thread`, the API, its
    TTL) deletes its folder (`delete_workflow`). Payloads stored by earlier versions sit
    in `sha256/` at the top, shared by every thread: remove old ones yourself, by
    modification time, once older than the longest a thread may stay paused plus the
    namespace's retention.

    Args:
        path: the directory (created on first store).
        name: the driver's name in references; keep it stable while histories that
            name it must be read.
    """

    def __init__(self, path: str | os.PathLike[str], *, name: str = "graphrun.local") -> None:
        self.path = Path(path)
        self._name = name

    def name(self) -> str:
        return self._name

    def type(self) -> str:
        return "graphrun.local"

    def __repr__(self) -> str:
        return f"LocalDirectoryDriver({str(self.path)!r}, name={self._name!r})"

    def _file(self, digest: str, scope: str = "") -> Path:
        base = self.path / "threads" / scope if scope else self.path
        return base / "sha256" / digest[:2] / digest

    @staticmethod
    def scope(namespace: str, workflow_id: str) -> str:
        """The folder name of a thread's payloads (hex: any workflow id is safe)."""
        return hashlib.sha256(f"{namespace}\x00{workflow_id}".encode()).hexdigest()[:40]

    async def delete_workflow(self, namespace: str, workflow_id: str) -> None:
        """Delete every payload stored for the workflow (a deleted thread)."""
        folder = self.path / "threads" / self.scope(namespace, workflow_id)
        await asyncio.to_thread(shutil.rmtree, folder, True)

    def _write(self, data: bytes, scope: str = "") -> str:
        digest = hashlib.sha256(data).hexdigest()
        target = self._file(digest, scope)
        try:
            # Stored again (a retry, or continue-as-new carrying it): refresh its time, so
            # cleaning up by age never removes what a live thread still names.
            os.utime(target)
            return digest
        except FileNotFoundError:
            pass
        target.parent.mkdir(parents=True, exist_ok=True)
        # Write aside, then rename: a reader never sees half a file.
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return digest

    def _read(self, claim: StorageDriverClaim) -> Payload:
        digest = claim.claim_data.get("hash_value", "")
        scope = claim.claim_data.get("thread", "")
        if claim.claim_data.get("hash_algorithm") != "sha256" or len(digest) != 64 or \
                not _hex(digest) or not (scope == "" or (len(scope) == 40 and _hex(scope))):
            raise ValueError(f"{self._name}: not a claim of this driver: {dict(claim.claim_data)}")
        try:
            data = self._file(digest, scope).read_bytes()
        except FileNotFoundError:
            raise FileNotFoundError(
                f"{self._name}: payload sha256:{digest} is not in {self.path}; every client "
                f"and worker of these threads needs the same payload directory") from None
        if hashlib.sha256(data).hexdigest() != digest:
            raise ValueError(f"{self._name}: payload sha256:{digest} in {self.path} is corrupt")
        return Payload.FromString(data)

    async def store(self, context: StorageDriverStoreContext, payloads: Sequence[Payload]
                    ) -> list[StorageDriverClaim]:
        # File I/O off the event loop: payloads here are the large ones.
        blobs = [p.SerializeToString() for p in payloads]
        target = context.target
        scope = (self.scope(target.namespace, target.id)
                 if isinstance(target, StorageDriverWorkflowInfo) and target.id else "")
        digests = await asyncio.to_thread(lambda: [self._write(b, scope) for b in blobs])
        kept = {"thread": scope} if scope else {}
        return [StorageDriverClaim({"hash_algorithm": "sha256", "hash_value": d, **kept})
                for d in digests]

    async def retrieve(self, context: StorageDriverRetrieveContext,
                       claims: Sequence[StorageDriverClaim]) -> list[Payload]:
        return await asyncio.to_thread(lambda: [self._read(c) for c in claims])


def _hex(text: str) -> bool:
    return all(c in "0123456789abcdef" for c in text)


async def delete_payloads(storage: ExternalStorage | None, namespace: str,
                          workflow_id: str) -> None:
    """Delete what the drivers that keep payloads per workflow stored for this one."""
    for driver in storage.drivers if storage is not None else ():
        delete = getattr(driver, "delete_workflow", None)
        if delete is not None:
            await delete(namespace, workflow_id)


def storage_from(value: StorageLike, *, threshold: int = DEFAULT_THRESHOLD) -> ExternalStorage:
    """`ExternalStorage` from a directory, a driver, or drivers (or an ExternalStorage, as is).

    With several drivers the first one stores and every one reads: keep an old driver
    after the last so histories written with it stay readable.

    Args:
        value: a directory (a `LocalDirectoryDriver` there), a `StorageDriver`, a list
            of drivers, or an `ExternalStorage` (returned unchanged).
        threshold: payloads of at least this many bytes are stored externally.
    """
    if isinstance(value, ExternalStorage):
        return value
    if isinstance(value, str | os.PathLike):
        drivers: list[StorageDriver] = [LocalDirectoryDriver(value)]
    elif isinstance(value, StorageDriver):
        drivers = [value]
    else:
        drivers = list(value)
    first = drivers[0] if drivers else None
    return ExternalStorage(drivers=drivers, payload_size_threshold=threshold,
                           driver_selector=(lambda _ctx, _p: first) if len(drivers) > 1
                           else None)


async def open_store(where: str, resources: contextlib.AsyncExitStack) -> StorageLike:
    """The store `where` names: a directory, or ``s3://BUCKET`` for the SDK's S3 driver
    with an aioboto3 client configured as AWS's tools are (AWS_REGION, credentials,
    AWS_ENDPOINT_URL for an S3-compatible store such as MinIO), kept open in
    `resources`. The driver keys objects by namespace and workflow id itself, so a
    bucket takes no prefix."""
    if where.startswith("s3://"):
        bucket = where[len("s3://"):].rstrip("/")
        if not bucket or "/" in bucket:
            raise ValueError(f"{where!r}: s3://BUCKET, without a path (the S3 driver keys "
                             f"objects by namespace and workflow id itself)")
        try:
            import aioboto3
            from temporalio.contrib.aws.s3driver import S3StorageDriver
            from temporalio.contrib.aws.s3driver.aioboto3 import new_aioboto3_client
        except ImportError as exc:
            raise ImportError(f"s3:// payload storage needs aioboto3 ({exc}): "
                              f"pip install 'temporalio[aioboto3]'") from exc
        client = await resources.enter_async_context(aioboto3.Session().client("s3"))
        return S3StorageDriver(client=new_aioboto3_client(client), bucket=bucket)
    if "://" in where:
        raise ValueError(f"{where!r}: a directory or s3://BUCKET (in Python, any "
                         f"StorageDriver, e.g. the SDK's GCS driver)")
    return where


def storage_from_env(environ: Mapping[str, str] | None = None) -> ExternalStorage | None:
    """A `LocalDirectoryDriver` storage in ``$GRAPHRUN_PAYLOAD_DIR``, or None when unset."""
    path = (os.environ if environ is None else environ).get(PAYLOAD_DIR_ENV, "").strip()
    return storage_from(path) if path else None
