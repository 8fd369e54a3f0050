"""graphrun.codec: AES-GCM payloads with key ids, rotation, the key string of the environment,
and graphrun's data converter with and without a codec."""

from __future__ import annotations

import base64
import dataclasses
import os

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter, PayloadCodec

from graphrun.client import GraphDataConverter, data_converter, graphrun_converter
from graphrun.codec import (
    ENCODING,
    KEY_ID_METADATA,
    KEYS_ENV,
    EncryptionCodec,
    codec_from,
    keys_from_env,
    parse_keys,
)
from graphrun.errors import EncryptionKeyError, GraphrunError

K1 = bytes(range(32))
K2 = bytes(range(100, 132))
SECRET = "card 4111-1111-1111-1111"


def _json_payload(text: str) -> Payload:
    return Payload(metadata={"encoding": b"json/plain"}, data=f'"{text}"'.encode())


async def test_round_trip_hides_data_and_metadata_and_names_the_key() -> None:
    codec = EncryptionCodec({"k1": K1})
    original = _json_payload(SECRET)
    [enc] = await codec.encode([original])
    assert enc.metadata["encoding"] == ENCODING
    assert enc.metadata[KEY_ID_METADATA] == b"k1"
    assert set(enc.metadata) == {"encoding", KEY_ID_METADATA}   # json/plain is inside
    assert SECRET.encode() not in enc.data and b"json/plain" not in enc.data
    [dec] = await codec.decode([enc])
    assert dec == original


async def test_each_encryption_uses_a_fresh_nonce() -> None:
    codec = EncryptionCodec({"k1": K1})
    a, b = await codec.encode([_json_payload("x"), _json_payload("x")])
    assert a.data != b.data


async def test_rotation_newest_encrypts_any_decrypts() -> None:
    old = EncryptionCodec({"k1": K1})
    [by_k1] = await old.encode([_json_payload(SECRET)])
    rotated = EncryptionCodec({"k2": K2, "k1": K1})
    assert rotated.key_id == "k2" and rotated.key_ids == ("k2", "k1")
    [by_k2] = await rotated.encode([_json_payload(SECRET)])
    assert by_k2.metadata[KEY_ID_METADATA] == b"k2"
    assert await rotated.decode([by_k1, by_k2]) == [_json_payload(SECRET)] * 2


async def test_unknown_key_id_is_a_clear_error() -> None:
    [by_k2] = await EncryptionCodec({"k2": K2}).encode([_json_payload(SECRET)])
    with pytest.raises(EncryptionKeyError, match=r"key id 'k2'.*known encryption keys \['k1'\]"
                       ) as info:
        await EncryptionCodec({"k1": K1}).decode([by_k2])
    assert info.value.key_id == "k2"
    assert isinstance(info.value, GraphrunError) and isinstance(info.value, ValueError)


async def test_a_different_key_under_the_same_id_or_altered_data_fails_authentication() -> None:
    [enc] = await EncryptionCodec({"k1": K1}).encode([_json_payload(SECRET)])
    with pytest.raises(EncryptionKeyError, match="does not decrypt with the key"):
        await EncryptionCodec({"k1": K2}).decode([enc])
    tampered = Payload()
    tampered.CopyFrom(enc)
    tampered.data = enc.data[:-1] + bytes([enc.data[-1] ^ 1])
    with pytest.raises(EncryptionKeyError, match="altered"):
        await EncryptionCodec({"k1": K1}).decode([tampered])
    # The key id is authenticated too: relabelling a payload does not make it decrypt.
    relabelled = Payload()
    relabelled.CopyFrom(enc)
    relabelled.metadata[KEY_ID_METADATA] = b"k2"
    with pytest.raises(EncryptionKeyError):
        await EncryptionCodec({"k2": K1}).decode([relabelled])


async def test_plain_payloads_pass_through_decode() -> None:
    # A `temporal workflow signal --input '{"resume": true}'` arrives unencrypted.
    plain = Payload(metadata={"encoding": b"json/plain"}, data=b'{"resume": true}')
    assert await EncryptionCodec({"k1": K1}).decode([plain]) == [plain]


@pytest.mark.parametrize("keys, match", [
    ({}, "no encryption keys"),
    ({"k1": b"short"}, "must be 32 bytes, got 5 bytes"),
    ({"k1": "x" * 32}, "must be 32 bytes, got str"),
    ({"bad id": K1}, "key id 'bad id' is not valid"),
    ({"": K1}, "is not valid"),
])
def test_bad_keys_are_refused(keys: dict, match: str) -> None:
    with pytest.raises(EncryptionKeyError, match=match):
        EncryptionCodec(keys)


def test_repr_never_shows_key_material() -> None:
    codec = EncryptionCodec({"k1": K1})
    assert repr(codec) == "EncryptionCodec(key_ids=['k1'])"


def _b64(key: bytes) -> str:
    return base64.b64encode(key).decode()


def test_parse_keys_newest_first() -> None:
    keys = parse_keys(f" k2:{_b64(K2)} , k1:{base64.urlsafe_b64encode(K1).decode().rstrip('=')}")
    assert list(keys) == ["k2", "k1"]
    assert keys == {"k2": K2, "k1": K1}


@pytest.mark.parametrize("text, match", [
    ("", "holds no keys"),
    (" , ", "holds no keys"),
    (_b64(K1), "item 1 is not KEY_ID:BASE64_KEY"),
    (f"k1:{_b64(K1)},k1:{_b64(K2)}", "'k1' appears twice"),
    ("k1:not base64!!", "'k1' is not valid base64"),
    (f"k1:{_b64(b'x' * 16)}", "'k1' is 16 bytes; it must be 32"),
    (f"a b:{_b64(K1)}", "'a b' is not valid"),
])
def test_parse_keys_errors(text: str, match: str) -> None:
    with pytest.raises(EncryptionKeyError, match=match) as info:
        parse_keys(text)
    assert _b64(K1) not in str(info.value) and _b64(K2) not in str(info.value)


def test_keys_from_env() -> None:
    assert keys_from_env({}) is None
    assert keys_from_env({KEYS_ENV: "  "}) is None
    assert keys_from_env({KEYS_ENV: f"k1:{_b64(K1)}"}) == {"k1": K1}


def test_codec_from_accepts_keys_a_string_or_a_codec() -> None:
    codec = EncryptionCodec({"k1": K1})
    assert codec_from(codec) is codec
    from_str = codec_from(f"k2:{_b64(K2)},k1:{_b64(K1)}")
    assert isinstance(from_str, EncryptionCodec) and from_str.key_ids == ("k2", "k1")
    from_map = codec_from({"k1": K1})
    assert isinstance(from_map, EncryptionCodec) and from_map.key_id == "k1"


# -- the data converter ----------------------------------------------------------------------

async def test_data_converter_is_a_converter_and_callable() -> None:
    assert isinstance(data_converter, DataConverter)
    assert data_converter.payload_codec is None and not data_converter.encrypted
    enc = data_converter(encryption={"k1": K1})
    assert isinstance(enc, GraphDataConverter) and enc.encrypted
    assert enc.payload_converter_class is data_converter.payload_converter_class
    assert data_converter.payload_codec is None          # the shared one is unchanged
    [payload] = await enc.encode([{"secret": SECRET}])
    assert payload.metadata["encoding"] == ENCODING and SECRET.encode() not in payload.data
    assert await enc.decode([payload]) == [{"secret": SECRET}]
    # A plain graphrun converter cannot read it.
    with pytest.raises(KeyError, match="Unknown payload encoding binary/encrypted"):
        await data_converter.decode([payload])
    assert data_converter(encryption=None).payload_codec is None


def test_graphrun_converter_keeps_a_codec() -> None:
    enc = data_converter(encryption={"k1": K1})
    assert graphrun_converter(enc) is enc
    assert graphrun_converter(data_converter) is data_converter
    # Some other converter: graphrun's payload converter, no codec...
    plain = graphrun_converter(pydantic_data_converter)
    assert isinstance(plain, GraphDataConverter) and plain.payload_codec is None
    assert graphrun_converter(DataConverter.default).payload_codec is None

    # ...but a codec it had is kept: replacing a converter never turns encryption off.
    class Marker(PayloadCodec):
        async def encode(self, payloads):  # pragma: no cover - never called
            return list(payloads)

        async def decode(self, payloads):  # pragma: no cover - never called
            return list(payloads)

    codec = Marker()
    other = dataclasses.replace(DataConverter.default, payload_codec=codec)
    kept = graphrun_converter(other)
    assert kept.payload_codec is codec
    assert kept.payload_converter_class is data_converter.payload_converter_class


def test_with_data_converter_keeps_an_encrypting_client() -> None:
    from graphrun.client import with_data_converter

    class FakeClient(Client):
        # Client.__init__ needs a service client; config()/data_converter are all we use.
        def __init__(self, converter: DataConverter) -> None:
            self._converter = converter

        @property
        def data_converter(self) -> DataConverter:
            return self._converter

    enc = data_converter(encryption={"k1": K1})
    client = FakeClient(enc)
    assert with_data_converter(client) is client


def test_generated_keys_work() -> None:
    key = os.urandom(32)
    assert parse_keys(f"prod-2025.1:{_b64(key)}") == {"prod-2025.1": key}
