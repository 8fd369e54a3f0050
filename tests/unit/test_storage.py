"""graphrun.storage without a server: the local driver's files, claims and errors, and
how storage_from / storage_from_env / data_converter build ExternalStorage."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.converter import (
    DataConverter,
    StorageDriverRetrieveContext,
    StorageDriverStoreContext,
)

from graphrun.client import data_converter, graphrun_converter
from graphrun.storage import (
    DEFAULT_THRESHOLD,
    PAYLOAD_DIR_ENV,
    LocalDirectoryDriver,
    storage_from,
    storage_from_env,
)


def _roundtrip(driver: LocalDirectoryDriver, payloads: list[Payload]) -> list[Payload]:
    async def go() -> list[Payload]:
        claims = await driver.store(StorageDriverStoreContext(), payloads)
        return await driver.retrieve(StorageDriverRetrieveContext(), claims)
    return asyncio.run(go())


def test_local_driver_stores_by_content_hash(tmp_path) -> None:
    driver = LocalDirectoryDriver(tmp_path)
    a = Payload(metadata={"encoding": b"json/plain"}, data=b'"a"' * 1000)
    b = Payload(metadata={"encoding": b"json/plain"}, data=b'"b"' * 1000)
    assert _roundtrip(driver, [a, b, a]) == [a, b, a]
    files = sorted(tmp_path.rglob("sha256/*/*"))
    assert len(files) == 2                        # the same bytes make one file
    claims = asyncio.run(driver.store(StorageDriverStoreContext(), [a]))
    assert set(claims[0].claim_data) == {"hash_algorithm", "hash_value"}  # no path


def test_local_driver_refuses_corrupt_missing_and_foreign_claims(tmp_path) -> None:
    driver = LocalDirectoryDriver(tmp_path)
    p = Payload(data=b"x" * 100)
    [claim] = asyncio.run(driver.store(StorageDriverStoreContext(), [p]))
    [path] = tmp_path.rglob("sha256/*/*")
    path.write_bytes(b"tampered")
    with pytest.raises(ValueError, match="corrupt"):
        asyncio.run(driver.retrieve(StorageDriverRetrieveContext(), [claim]))
    path.unlink()
    with pytest.raises(FileNotFoundError, match="same payload directory"):
        asyncio.run(driver.retrieve(StorageDriverRetrieveContext(), [claim]))
    foreign = dataclasses.replace(claim, claim_data={"hash_algorithm": "sha256",
                                                     "hash_value": "../../etc/passwd"})
    with pytest.raises(ValueError, match="not a claim"):
        asyncio.run(driver.retrieve(StorageDriverRetrieveContext(), [foreign]))


def test_storage_from_and_env(tmp_path) -> None:
    storage = storage_from(tmp_path)
    assert isinstance(storage.drivers[0], LocalDirectoryDriver)
    assert storage.payload_size_threshold == DEFAULT_THRESHOLD
    assert storage_from(storage) is storage
    new, old = LocalDirectoryDriver(tmp_path / "new", name="new"), \
        LocalDirectoryDriver(tmp_path / "old", name="old")
    both = storage_from([new, old], threshold=10)
    assert both.payload_size_threshold == 10
    assert both._select_driver(both._select_context, Payload(data=b"x" * 100)) is new
    assert storage_from_env({}) is None
    assert storage_from_env({PAYLOAD_DIR_ENV: str(tmp_path)}).drivers[0].path == tmp_path


def test_converters_keep_external_storage(tmp_path) -> None:
    storage = storage_from(tmp_path)
    assert data_converter(external_storage=storage).external_storage is storage
    assert data_converter().external_storage is None
    plain = dataclasses.replace(DataConverter.default, external_storage=storage)
    assert graphrun_converter(plain).external_storage is storage
