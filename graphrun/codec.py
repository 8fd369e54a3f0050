"""Opt-in payload encryption: AES-256-GCM with key ids, for key rotation.

Every payload graphrun sends through Temporal (workflow input, activity input and
results, query results, signal and update arguments, failure details) is
serialised whole and encrypted before it leaves the process, so Temporal's
history holds ciphertext. The encrypted payload says which key encrypted it:

    metadata: {"encoding": b"binary/encrypted", "encryption-key-id": b"k2"}
    data:     12-byte nonce + AES-GCM(ciphertext + tag); the key id is the associated data

Keys are an ordered mapping ``key id -> 32 random bytes``, newest first. The
newest key encrypts; any key decrypts the payloads that name it. To rotate, put
a new key first and keep the old ones for as long as histories written with them
must be read (paused threads, replays, the Web UI's codec server).

From the environment (the ``graphrun`` CLI, worker, dev and codec-server commands
read it)::

    GRAPHRUN_ENCRYPTION_KEYS="k2:<base64 of 32 bytes>,k1:<base64 of 32 bytes>"

Make a key with ``python -c "import base64, os; print(base64.b64encode(os.urandom(32)).decode())"``.

Payloads that are not encrypted are decoded as they are, so a plain
``temporal workflow signal --input '{"resume": true}'`` still answers an
encrypted thread (its own payload is then stored unencrypted). Search attributes
never pass through a codec (Temporal indexes them), so ``GraphStatus`` and
``GraphName`` stay readable, and so do the workflow id, type and task queue.

Example:
    >>> from graphrun.client import GraphClient
    >>> gc = await GraphClient.connect(encryption={"k1": key})   # doctest: +SKIP
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from temporalio.api.common.v1 import Payload
from temporalio.converter import PayloadCodec

from graphrun.errors import EncryptionKeyError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = [
    "ENCODING",
    "KEYS_ENV",
    "KEY_ID_METADATA",
    "KEY_SIZE",
    "EncryptionCodec",
    "EncryptionKeyError",
    "codec_from",
    "keys_from_env",
    "parse_keys",
]

ENCODING = b"binary/encrypted"
"""The ``encoding`` metadata of an encrypted payload."""

KEY_ID_METADATA = "encryption-key-id"
"""Metadata key naming the key that encrypted a payload."""

KEYS_ENV = "GRAPHRUN_ENCRYPTION_KEYS"
"""Environment variable holding ``id:base64key`` pairs, comma separated, newest first."""

KEY_SIZE = 32
"""Key length in bytes (AES-256)."""

_NONCE_SIZE = 12
_TAG_SIZE = 16
_KEY_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


def _check_key_id(key_id: object) -> str:
    if not isinstance(key_id, str) or not _KEY_ID.fullmatch(key_id):
        raise EncryptionKeyError(
            f"encryption key id {key_id!r} is not valid: use 1 to 64 characters from "
            f"A-Z a-z 0-9 . _ -", key_id=key_id if isinstance(key_id, str) else None)
    return key_id


def _aesgcm(key: bytes) -> AESGCM:
    try:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError as exc:  # the `encryption` extra is not installed
        raise ImportError("payload encryption needs the 'cryptography' package: "
                          "pip install 'graphrun[encryption]'") from exc
    return AESGCM(key)


class EncryptionCodec(PayloadCodec):
    """A temporalio PayloadCodec: AES-256-GCM, the key id in each payload's metadata.

    Args:
        keys: key id -> 32-byte key, newest first. The first key encrypts; every
            key decrypts payloads that name its id.

    Raises:
        EncryptionKeyError: no keys, a key that is not 32 bytes, or a bad key id.
    """

    def __init__(self, keys: Mapping[str, bytes]) -> None:
        if not keys:
            raise EncryptionKeyError("no encryption keys given: pass {key_id: 32-byte key}, "
                                     f"newest first (or set {KEYS_ENV})")
        ciphers: dict[str, AESGCM] = {}
        for key_id, key in keys.items():
            _check_key_id(key_id)
            if not isinstance(key, bytes | bytearray) or len(key) != KEY_SIZE:
                size = f"{len(key)} bytes" if isinstance(key, bytes | bytearray) else \
                    type(key).__name__
                raise EncryptionKeyError(f"encryption key {key_id!r} must be {KEY_SIZE} bytes, "
                                         f"got {size}", key_id=key_id)
            ciphers[key_id] = _aesgcm(bytes(key))
        self._ciphers = ciphers
        self.key_id: str = next(iter(ciphers))
        """The id of the key that encrypts (the newest)."""

    @property
    def key_ids(self) -> tuple[str, ...]:
        """Every known key id, newest first."""
        return tuple(self._ciphers)

    def __repr__(self) -> str:  # never the key bytes
        return f"EncryptionCodec(key_ids={list(self._ciphers)!r})"

    def encrypt(self, payload: Payload) -> Payload:
        """Encrypt one payload (metadata and data) with the newest key."""
        key_id = self.key_id.encode()
        nonce = os.urandom(_NONCE_SIZE)
        sealed = self._ciphers[self.key_id].encrypt(
            nonce, payload.SerializeToString(), ENCODING + b":" + key_id)
        return Payload(metadata={"encoding": ENCODING, KEY_ID_METADATA: key_id},
                       data=nonce + sealed)

    def decrypt(self, payload: Payload) -> Payload:
        """Decrypt one payload; a payload that is not encrypted is returned as it is.

        Raises:
            EncryptionKeyError: the payload names a key id this codec does not know,
                or does not decrypt under the key of that id.
        """
        if payload.metadata.get("encoding") != ENCODING:
            return payload
        raw_id = payload.metadata.get(KEY_ID_METADATA, b"")
        key_id = raw_id.decode(errors="replace")
        cipher = self._ciphers.get(key_id)
        if cipher is None:
            named = f"key id {key_id!r}" if raw_id else "no key id"
            raise EncryptionKeyError(
                f"payload encrypted with {named}, which is not among the known encryption "
                f"keys {list(self._ciphers)}. Add that key (under the same id) to "
                f"{KEYS_ENV} or to encryption={{...}}; keep old keys after a rotation.",
                key_id=key_id or None)
        data = payload.data
        if len(data) < _NONCE_SIZE + _TAG_SIZE:
            raise EncryptionKeyError(f"encrypted payload (key id {key_id!r}) is truncated: "
                                     f"{len(data)} bytes", key_id=key_id)
        from cryptography.exceptions import InvalidTag

        try:
            plain = cipher.decrypt(data[:_NONCE_SIZE], data[_NONCE_SIZE:],
                                   ENCODING + b":" + raw_id)
        except InvalidTag:
            raise EncryptionKeyError(
                f"payload encrypted with key id {key_id!r} does not decrypt with the key "
                f"known under that id: the key differs from the one that encrypted it, or "
                f"the payload was altered", key_id=key_id) from None
        return Payload.FromString(plain)

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self.encrypt(p) for p in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self.decrypt(p) for p in payloads]


def _b64(text: str) -> bytes:
    text = text.strip()
    padded = text + "=" * (-len(text) % 4)
    altchars = b"-_" if ("-" in text or "_" in text) else None
    return base64.b64decode(padded, altchars=altchars, validate=True)


def parse_keys(text: str) -> dict[str, bytes]:
    """Parse ``"k2:<base64>,k1:<base64>"`` (newest first) into ``{"k2": ..., "k1": ...}``.

    Keys are standard or URL-safe base64 of 32 bytes; spaces around items are
    ignored. Error messages never include key material.

    Raises:
        EncryptionKeyError: an item without ``id:``, a bad id, a repeated id, a key
            that is not base64 of 32 bytes, or no keys at all.
    """
    keys: dict[str, bytes] = {}
    for n, item in enumerate(text.split(","), start=1):
        item = item.strip()
        if not item:
            continue
        key_id, sep, b64 = item.partition(":")
        key_id = key_id.strip()
        if not sep:
            raise EncryptionKeyError(f"{KEYS_ENV}: item {n} is not KEY_ID:BASE64_KEY")
        _check_key_id(key_id)
        if key_id in keys:
            raise EncryptionKeyError(f"{KEYS_ENV}: key id {key_id!r} appears twice",
                                     key_id=key_id)
        try:
            key = _b64(b64)
        except (binascii.Error, ValueError):
            raise EncryptionKeyError(f"{KEYS_ENV}: key {key_id!r} is not valid base64",
                                     key_id=key_id) from None
        if len(key) != KEY_SIZE:
            raise EncryptionKeyError(f"{KEYS_ENV}: key {key_id!r} is {len(key)} bytes; "
                                     f"it must be {KEY_SIZE} (base64 of 32 random bytes)",
                                     key_id=key_id)
        keys[key_id] = key
    if not keys:
        raise EncryptionKeyError(f"{KEYS_ENV} holds no keys: expected "
                                 f"'KEY_ID:BASE64_KEY[,OLDER_ID:BASE64_KEY...]'")
    return keys


def keys_from_env(environ: Mapping[str, str] | None = None) -> dict[str, bytes] | None:
    """The keys in ``$GRAPHRUN_ENCRYPTION_KEYS``, or None when it is unset or empty."""
    text = (os.environ if environ is None else environ).get(KEYS_ENV, "")
    return parse_keys(text) if text.strip() else None


def codec_from(encryption: Mapping[str, bytes] | str | PayloadCodec) -> PayloadCodec:
    """A codec from keys (a mapping, newest first), a ``KEYS_ENV``-style string, or a codec."""
    if isinstance(encryption, PayloadCodec):
        return encryption
    if isinstance(encryption, str):
        return EncryptionCodec(parse_keys(encryption))
    return EncryptionCodec(encryption)
