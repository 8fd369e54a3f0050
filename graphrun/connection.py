"""Where Temporal is and how to reach it, found as the `temporal` CLI and every Temporal SDK
find it (`temporalio.envconfig`): a profile of a TOML file (``temporal.toml``, or
``$TEMPORAL_CONFIG_FILE``; ``$TEMPORAL_PROFILE``, default "default"), then ``TEMPORAL_*``
environment variables over it, then what the caller passes over both.

    TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY (implies TLS), TEMPORAL_TLS,
    TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH (mTLS),
    TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_SERVER_NAME, TEMPORAL_GRPC_META_<KEY>

    conn = resolve(profile="prod")                      # or resolve(address=..., tls=True)
    client = await Client.connect(**conn.connect_options())
"""

from __future__ import annotations

import dataclasses
import os
import socket
import ssl
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from temporalio.envconfig import ClientConfigProfile, ClientConfigTLS
from temporalio.service import TLSConfig

DEFAULT_ADDRESS = "localhost:7233"
DEFAULT_NAMESPACE = "default"


class TemporalConfigError(ValueError):
    """The connection's configuration cannot be used: a profile or file that is not
    there, a file that does not parse, a certificate that cannot be read."""


@dataclasses.dataclass(frozen=True)
class TemporalConnection:
    """What `Client.connect` needs, resolved; `describe()` says it in one line."""

    address: str
    namespace: str
    api_key: str | None = dataclasses.field(default=None, repr=False)
    tls: bool | TLSConfig = False
    rpc_metadata: Mapping[str, str] = dataclasses.field(default_factory=dict, repr=False)
    profile: str | None = None  # the profile it came from, if a file had one

    def connect_options(self) -> dict[str, Any]:
        """Keyword arguments for `temporalio.client.Client.connect`."""
        options: dict[str, Any] = {"target_host": self.address, "namespace": self.namespace,
                                   "tls": self.tls}
        if self.api_key:
            options["api_key"] = self.api_key
        if self.rpc_metadata:
            options["rpc_metadata"] = dict(self.rpc_metadata)
        return options

    def describe(self) -> str:
        how = []
        if isinstance(self.tls, TLSConfig):
            how.append("mTLS" if self.tls.client_cert else "TLS")
        elif self.tls:
            how.append("TLS")
        if self.api_key:
            how.append("API key")
        if self.profile:
            how.append(f"profile {self.profile}")
        return self.address + (f" ({', '.join(how)})" if how else "")


def resolve(*, address: str | None = None, namespace: str | None = None,
            api_key: str | None = None, tls: bool | None = None,
            tls_cert_path: str | None = None, tls_key_path: str | None = None,
            tls_ca_path: str | None = None, tls_server_name: str | None = None,
            profile: str | None = None, config_file: str | None = None,
            env: Mapping[str, str] | None = None) -> TemporalConnection:
    """The connection the profile, the environment and these options describe (each
    over the one before). Certificates are read here, so a wrong path fails now, naming
    the file, not later inside a TLS handshake."""
    env = os.environ if env is None else env
    file = config_file or env.get("TEMPORAL_CONFIG_FILE") or None
    if file is not None and not Path(file).is_file():
        # envconfig skips a missing file without a word; one named on purpose must exist.
        raise TemporalConfigError(f"Temporal config file {file} does not exist")
    chosen = profile or env.get("TEMPORAL_PROFILE") or None
    try:
        loaded = ClientConfigProfile.load(profile=chosen,
                                          config_source=Path(file) if file else None,
                                          override_env_vars=dict(env))
    except Exception as exc:  # temporal_sdk_bridge.ConfigError: a missing profile, bad TOML
        detail = " ".join(str(exc).split())
        raise TemporalConfigError(f"Temporal config{f' ({file})' if file else ''}: "
                                  f"{detail}") from None
    settings = _tls_settings(loaded.tls, tls, tls_cert_path, tls_key_path, tls_ca_path,
                             tls_server_name)
    key = api_key or loaded.api_key or None
    if settings is None:
        connect_tls: bool | TLSConfig = bool(key)  # an API key goes over TLS
    else:
        connect_tls = _read_tls(settings)
    return TemporalConnection(
        address=address or loaded.address or DEFAULT_ADDRESS,
        namespace=namespace or loaded.namespace or DEFAULT_NAMESPACE,
        api_key=key, tls=connect_tls, rpc_metadata=dict(loaded.grpc_meta),
        profile=chosen if (file or chosen) else None)


def _tls_settings(loaded: ClientConfigTLS | None, tls: bool | None, cert: str | None,
                  key: str | None, ca: str | None, server_name: str | None
                  ) -> ClientConfigTLS | None:
    """The profile's TLS settings with the options over them; None: not configured."""
    if tls is None and not (cert or key or ca or server_name):
        return loaded
    settings = loaded or ClientConfigTLS()
    return ClientConfigTLS(
        disabled=not tls if tls is not None else False,
        server_name=server_name or settings.server_name,
        server_root_ca_cert=Path(ca) if ca else settings.server_root_ca_cert,
        client_cert=Path(cert) if cert else settings.client_cert,
        client_private_key=Path(key) if key else settings.client_private_key)


def _read_tls(settings: ClientConfigTLS) -> bool | TLSConfig:
    if settings.disabled:
        return False
    if bool(settings.client_cert) != bool(settings.client_private_key):
        raise TemporalConfigError(
            "a client certificate needs its key and a key its certificate (--tls-cert-path "
            "with --tls-key-path, or TEMPORAL_TLS_CLIENT_CERT_PATH with "
            "TEMPORAL_TLS_CLIENT_KEY_PATH)")
    try:
        return settings.to_connect_tls_config()
    except OSError as exc:
        raise TemporalConfigError(f"cannot read a TLS certificate or key: {exc.filename}: "
                                  f"{exc.strerror}") from None


def tls_refusal(conn: TemporalConnection, timeout: float = 3.0) -> str | None:
    """Why a TLS connection to `conn` fails, found by a TLS handshake of our own with the
    same certificates (temporalio's error says only that the transport failed); None
    when the handshake goes through or TLS is off."""
    if not conn.tls:
        return None
    tls = conn.tls if isinstance(conn.tls, TLSConfig) else TLSConfig()
    host, _, port = conn.address.rpartition(":")
    context = ssl.create_default_context(
        cadata=tls.server_root_ca_cert.decode() if tls.server_root_ca_cert else None)
    context.set_alpn_protocols(["h2"])
    shook = False  # whether the handshake itself went through
    try:
        with tempfile.TemporaryDirectory() as folder:
            if tls.client_cert and tls.client_private_key:
                cert, key = Path(folder, "cert.pem"), Path(folder, "key.pem")
                cert.write_bytes(tls.client_cert)
                key.write_bytes(tls.client_private_key)
                context.load_cert_chain(cert, key)
            with socket.create_connection((host, int(port)), timeout=timeout) as raw, \
                    context.wrap_socket(raw, server_hostname=tls.domain or host) as sock:
                shook = True
                # TLS 1.3 servers refuse a client certificate after the handshake: the
                # refusal (an alert, or the connection closed) answers the first read,
                # where an HTTP/2 server that took it answers with its settings.
                sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
                if not sock.recv(1):
                    raise ConnectionResetError("the server closed the connection")
    except ssl.SSLCertVerificationError as exc:
        if "match" in str(exc.verify_message) or "mismatch" in str(exc):
            return (f"the server's certificate is not for the name "
                    f"{tls.domain or host!r}: give the name it holds with "
                    f"--tls-server-name (TEMPORAL_TLS_SERVER_NAME)")
        return ("the server's certificate is not trusted: give the CA that signed it with "
                "--tls-ca-path (TEMPORAL_TLS_SERVER_CA_CERT_PATH, or a profile's "
                "tls.server_ca_cert_path)")
    except (ssl.SSLError, ConnectionResetError, BrokenPipeError) as exc:
        if not shook and not _asks_for_certificate(exc):
            return (f"the server does not speak TLS ({_reason(exc)}); is it a plain "
                    f"server? Then connect without --tls / TEMPORAL_TLS")
        if tls.client_cert:
            return ("the server refused this client certificate (signed by a CA it does "
                    f"not trust?): {_reason(exc)}")
        return ("the server requires a client certificate (mTLS): give one with "
                "--tls-cert-path and --tls-key-path, TEMPORAL_TLS_CLIENT_CERT_PATH and "
                "TEMPORAL_TLS_CLIENT_KEY_PATH, or a profile's tls.client_cert_path")
    except (OSError, ValueError):
        return None  # not a TLS matter (unreachable, timed out): the caller says so
    return None


def _asks_for_certificate(exc: BaseException) -> bool:
    """A TLS 1.2 server refuses a missing or unknown client certificate within the
    handshake, with an alert that says so."""
    reason = str(_reason(exc)).upper()
    return "CERTIFICATE" in reason or "UNKNOWN_CA" in reason


def _reason(exc: BaseException) -> str:
    return getattr(exc, "reason", None) or type(exc).__name__
