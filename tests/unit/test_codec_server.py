"""The codec server over real HTTP on loopback: Temporal's remote codec protocol, CORS, tokens."""

from __future__ import annotations

import base64
import http.client
import json
from collections.abc import Iterator
from typing import Any

import pytest
from google.protobuf import json_format
from temporalio.api.common.v1 import Payload, Payloads

from graphrun.codec import ENCODING, KEY_ID_METADATA, EncryptionCodec
from graphrun.codec_server import CodecServer

K1 = bytes(range(32))
K2 = bytes(range(50, 82))
UI = "http://127.0.0.1:8233"
SECRET = "ssn 078-05-1120"


@pytest.fixture
def server() -> Iterator[CodecServer]:
    with CodecServer(EncryptionCodec({"k2": K2, "k1": K1}), port=0, origins=[UI],
                     token="s3cret") as srv:
        yield srv


def _request(srv: CodecServer, method: str, path: str, body: Any = None,
             headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], Any]:
    host, port = srv.url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    conn.request(method, path, body=data, headers=headers or {})
    resp = conn.getresponse()
    raw = resp.read()
    conn.close()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, (
        json.loads(raw) if raw else None)


AUTH = {"Authorization": "Bearer s3cret", "Content-Type": "application/json",
        "X-Namespace": "default"}


def _plain_payloads() -> dict[str, Any]:
    p = Payload(metadata={"encoding": b"json/plain"}, data=json.dumps({"id": SECRET}).encode())
    return json.loads(json_format.MessageToJson(Payloads(payloads=[p])))


def _meta(payload: dict[str, Any]) -> dict[str, str]:
    return {k: base64.b64decode(v).decode() for k, v in payload["metadata"].items()}


def test_encode_then_decode_round_trip(server: CodecServer) -> None:
    status, headers, encoded = _request(server, "POST", "/encode", _plain_payloads(), AUTH)
    assert status == 200 and headers["content-type"] == "application/json"
    [enc] = encoded["payloads"]
    assert _meta(enc) == {"encoding": ENCODING.decode(), KEY_ID_METADATA: "k2"}
    assert SECRET.encode() not in base64.b64decode(enc["data"])
    # The path prefix does not matter: only the last part of the path counts.
    status, _, decoded = _request(server, "POST", "/default/decode", encoded, AUTH)
    assert status == 200
    [dec] = decoded["payloads"]
    assert _meta(dec) == {"encoding": "json/plain"}
    assert json.loads(base64.b64decode(dec["data"])) == {"id": SECRET}


async def test_decodes_what_an_older_key_encrypted(server: CodecServer) -> None:
    [old] = await EncryptionCodec({"k1": K1}).encode(
        [Payload(metadata={"encoding": b"json/plain"}, data=b'"old"')])
    body = json.loads(json_format.MessageToJson(Payloads(payloads=[old])))
    status, _, decoded = _request(server, "POST", "/decode", body, AUTH)
    assert status == 200 and base64.b64decode(decoded["payloads"][0]["data"]) == b'"old"'


async def test_unknown_key_id_is_a_400_naming_it(server: CodecServer) -> None:
    [enc] = await EncryptionCodec({"k9": bytes(32)}).encode([Payload(data=b"x")])
    body = json.loads(json_format.MessageToJson(Payloads(payloads=[enc])))
    status, _, err = _request(server, "POST", "/decode", body, AUTH)
    assert status == 400 and "key id 'k9'" in err["message"]


def test_cors_preflight_for_the_ui_origin(server: CodecServer) -> None:
    status, headers, _ = _request(server, "OPTIONS", "/decode", headers={
        "Origin": UI, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type,x-namespace"})
    assert status == 204
    assert headers["access-control-allow-origin"] == UI
    assert "POST" in headers["access-control-allow-methods"]
    allowed = {h.strip() for h in headers["access-control-allow-headers"].split(",")}
    assert {"content-type", "x-namespace", "authorization"} <= allowed
    # The actual request from the UI gets the header too.
    status, headers, _ = _request(server, "POST", "/decode", _plain_payloads(),
                                  {**AUTH, "Origin": UI})
    assert status == 200 and headers["access-control-allow-origin"] == UI


def test_other_origins_get_no_cors_and_are_refused(server: CodecServer) -> None:
    status, headers, _ = _request(server, "OPTIONS", "/decode", headers={
        "Origin": "http://evil.example", "Access-Control-Request-Method": "POST"})
    assert status == 403 and "access-control-allow-origin" not in headers
    status, headers, err = _request(server, "POST", "/decode", _plain_payloads(),
                                    {**AUTH, "Origin": "http://evil.example"})
    assert status == 403 and "access-control-allow-origin" not in headers
    assert "--origin http://evil.example" in err["message"]


def test_401_without_the_token(server: CodecServer) -> None:
    for headers in ({"Content-Type": "application/json"},
                    {"Authorization": "Bearer wrong"},
                    {"Authorization": "s3cret"}):
        status, resp_headers, err = _request(server, "POST", "/decode", _plain_payloads(),
                                             {**headers, "Origin": UI})
        assert status == 401, headers
        assert resp_headers["www-authenticate"].startswith("Bearer")
        # The browser may read the refusal: the CORS header is on errors too.
        assert resp_headers["access-control-allow-origin"] == UI
        assert "token" in err["message"]


def test_bad_requests(server: CodecServer) -> None:
    assert _request(server, "POST", "/decode", b"not json", AUTH)[0] == 400
    assert _request(server, "POST", "/decode", {"payloads": "nope"}, AUTH)[0] == 400
    assert _request(server, "POST", "/elsewhere", _plain_payloads(), AUTH)[0] == 404
    assert _request(server, "GET", "/decode", None, AUTH)[0] == 405


def test_without_a_token_and_limited_to_a_namespace() -> None:
    with CodecServer(EncryptionCodec({"k1": K1}), port=0, origins=[UI],
                     namespaces=["payments"]) as srv:
        ok = _request(srv, "POST", "/encode", _plain_payloads(),
                      {"Content-Type": "application/json", "X-Namespace": "payments"})
        assert ok[0] == 200
        other = _request(srv, "POST", "/encode", _plain_payloads(),
                         {"Content-Type": "application/json", "X-Namespace": "default"})
        assert other[0] == 403 and "'default'" in other[2]["message"]
