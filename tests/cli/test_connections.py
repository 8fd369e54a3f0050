"""Every command finds Temporal as the `temporal` CLI does: a temporal.toml profile, the
TEMPORAL_* environment over it, flags over both; mTLS through a TLS terminator that
requires a client certificate from a CA made in the test (tests/cli/tls_terminator.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphrun.client import GraphClient
from graphrun.connection import TemporalConfigError, resolve
from tests.cli.helpers import run_cli, usage_errors
from tests.cli.tls_terminator import Pki, TLSTerminator, make_pki


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def terminator(pki: Pki, dev_server: Any) -> Iterator[TLSTerminator]:
    with TLSTerminator(pki, dev_server.address) as t:
        yield t


def _profile_file(folder: Path, pki: Pki, address: str) -> Path:
    path = folder / "temporal.toml"
    path.write_text(f"""\
[profile.default]
address = "127.0.0.1:1"

[profile.secure]
address = "{address}"
namespace = "default"

[profile.secure.tls]
client_cert_path = "{pki.client_cert}"
client_key_path = "{pki.client_key}"
server_ca_cert_path = "{pki.ca}"
server_name = "localhost"
""")
    return path


def test_mtls_with_a_profile(terminator: TLSTerminator, pki: Pki, tmp_path: Path) -> None:
    config = _profile_file(tmp_path, pki, terminator.address)
    # The profile by flag, and by TEMPORAL_PROFILE; the config file by flag and by env.
    by_flag = run_cli("threads", "--config-file", str(config), "--profile", "secure")
    assert by_flag.code == 0, by_flag
    by_env = run_cli("threads", env={"TEMPORAL_CONFIG_FILE": str(config),
                                     "TEMPORAL_PROFILE": "secure"})
    assert by_env.code == 0, by_env
    assert by_env.out == by_flag.out

    # Certificates as flags over the environment's address, no file at all.
    flags = run_cli("threads", "--tls-cert-path", str(pki.client_cert), "--tls-key-path",
                    str(pki.client_key), "--tls-ca-path", str(pki.ca), "--tls-server-name",
                    "localhost", env={"TEMPORAL_ADDRESS": terminator.address})
    assert flags.code == 0, flags


def test_mtls_refusals_say_what_is_missing(terminator: TLSTerminator, pki: Pki,
                                           tmp_path: Path) -> None:
    trust = ("--tls-ca-path", str(pki.ca), "--tls-server-name", "localhost")
    no_cert = run_cli("threads", "--address", terminator.address, *trust)
    assert no_cert.code == 1, no_cert
    assert no_cert.err.strip() == (
        f"error: cannot reach a Temporal server at {terminator.address} (TLS): the server "
        f"requires a client certificate (mTLS): give one with --tls-cert-path and "
        f"--tls-key-path, TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH, or "
        f"a profile's tls.client_cert_path")
    stranger = run_cli("threads", "--address", terminator.address, *trust,
                       "--tls-cert-path", str(pki.stranger_cert),
                       "--tls-key-path", str(pki.stranger_key))
    assert stranger.code == 1, stranger
    assert "(mTLS): the server refused this client certificate" in stranger.err, stranger.err

    mine = ("--tls-cert-path", str(pki.client_cert), "--tls-key-path", str(pki.client_key))
    untrusted = run_cli("threads", "--address", terminator.address, *mine)
    assert untrusted.code == 1 and "the server's certificate is not trusted: give the CA " \
        "that signed it with --tls-ca-path" in untrusted.err, untrusted
    misnamed = run_cli("threads", "--address", terminator.address, *mine,
                       "--tls-ca-path", str(pki.ca), "--tls-server-name", "temporal.internal")
    assert misnamed.code == 1 and "not for the name 'temporal.internal': give the name it " \
        "holds with --tls-server-name" in misnamed.err, misnamed



def test_bad_connection_settings_are_usage_errors(pki: Pki, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:

    config = _profile_file(tmp_path, pki, "127.0.0.1:1")
    usage_errors(monkeypatch, capsys, ["threads"], [
        (["--profile", "staging"], {"TEMPORAL_CONFIG_FILE": str(config)},
         "Profile 'staging' not found"),
        (["--config-file", str(tmp_path / "none.toml")], {}, "none.toml does not exist"),
        (["--tls-cert-path", str(pki.client_cert)], {},
         "a client certificate needs its key"),
        (["--tls-cert-path", str(tmp_path / "gone.pem"), "--tls-key-path", str(pki.client_key)],
         {}, "gone.pem: No such file or directory"),
    ])


async def test_graph_client_takes_a_profile(terminator: TLSTerminator, pki: Pki,
                                            tmp_path: Path) -> None:
    config = _profile_file(tmp_path, pki, terminator.address)
    gc = await GraphClient.connect(profile="secure", config_file=str(config))
    assert await gc.list_threads(limit=1) is not None
    assert gc.client.service_client.config.target_host == terminator.address


def test_resolve_layers_profile_env_and_options(pki: Pki, tmp_path: Path, dev_server: Any,
                                                terminator: TLSTerminator) -> None:
    from graphrun.connection import tls_refusal

    # The handshake of our own finds nothing wrong with a connection that works, and
    # tells a plain server apart from one that wants a certificate.
    good = resolve(env={"TEMPORAL_CONFIG_FILE": str(_profile_file(tmp_path, pki,
                                                                  terminator.address))},
                   profile="secure")
    assert tls_refusal(good) is None
    plain = resolve(address=dev_server.address, tls=True, env={})
    assert "the server does not speak TLS" in (tls_refusal(plain) or "")

    config = _profile_file(tmp_path, pki, "temporal.example:7233")
    env = {"TEMPORAL_CONFIG_FILE": str(config), "TEMPORAL_PROFILE": "secure",
           "TEMPORAL_NAMESPACE": "from-env"}
    conn = resolve(env=env)
    assert (conn.address, conn.namespace) == ("temporal.example:7233", "from-env")
    assert conn.describe() == "temporal.example:7233 (mTLS, profile secure)"
    assert resolve(env=env, namespace="flag", address="a:1").connect_options()[
        "namespace"] == "flag"
    assert resolve(env=env, tls=False).tls is False  # --tls off wins over the profile
    keyed = resolve(env={"TEMPORAL_API_KEY": "k"})
    assert (keyed.tls, keyed.api_key, keyed.address) == (True, "k", "localhost:7233")
    assert resolve(env={}).connect_options() == {
        "target_host": "localhost:7233", "namespace": "default", "tls": False}
    with pytest.raises(TemporalConfigError, match="Profile 'nope' not found"):
        resolve(env=env, profile="nope")
