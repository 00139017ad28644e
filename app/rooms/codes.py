"""A room's code (short, read aloud, typed on a phone) and its instructor key (a secret).

Codes come from `secrets`, so no code tells anything about another. The alphabet leaves out the
look-alikes 0/O, 1/I/L (and U, which reads as V on a projector): 30 letters and digits, so
6 characters give 30**6 ≈ 7.3e8 codes, and a code typed in lower case still works.

A key is signed by the server: a random nonce and an HMAC of the code and the nonce under the
servers' secret (room_secret, or one the replicas share through Redis). So a key proves that
the server made it for that code even when the room is gone: an instructor's page can put a
room back that a Redis restart lost, and nobody else can. The room stores the nonce, so that a
key drives only the room it was made for, not a later room that drew the same code.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets
from collections.abc import Iterable

ALPHABET = "23456789ABCDEFGHJKMNPQRSTVWXYZ"
CODE_LENGTH = 6  # the spec allows 6–8; 6 is the quickest to type
CODE_PATTERN = re.compile(f"[{ALPHABET}]{{6,8}}")
NONCE_BYTES = 8
TAG_BYTES = 16  # 128 bits of HMAC-SHA256: the spec's "at least 128 bits" of secret
KEY_BYTES = NONCE_BYTES + TAG_BYTES  # 32 characters of URL-safe base64


def new_code(length: int = CODE_LENGTH) -> str:
    """A fresh room code of `length` characters of ALPHABET."""
    return "".join(secrets.choice(ALPHABET) for _ in range(length))


def new_secret() -> str:
    """A fresh signing secret (hex), for when room_secret is not set."""
    return secrets.token_hex(32)


def _tag(secret: str, code: str, nonce: bytes) -> bytes:
    msg = b"gradtrace-room:" + code.encode() + b":" + nonce
    return hmac.new(secret.encode(), msg, hashlib.sha256).digest()[:TAG_BYTES]


def new_key(secret: str, code: str) -> str:
    """A fresh instructor key for `code`, signed with `secret` (URL-safe base64, 32 chars)."""
    nonce = secrets.token_bytes(NONCE_BYTES)
    return base64.urlsafe_b64encode(nonce + _tag(secret, code, nonce)).decode()


def key_nonce(key: str | None) -> str | None:
    """The nonce of a well-formed key (hex: what a room stores), else None."""
    raw = _decode(key)
    return raw[:NONCE_BYTES].hex() if raw else None


def _decode(key: str | None) -> bytes | None:
    if not isinstance(key, str) or len(key) != 4 * KEY_BYTES // 3:
        return None
    try:
        raw = base64.urlsafe_b64decode(key.encode("ascii"))
    except (binascii.Error, UnicodeEncodeError, ValueError):
        return None
    return raw if len(raw) == KEY_BYTES else None


def key_signed(key: str | None, code: str, secret_list: Iterable[str]) -> bool:
    """Whether `key` was made for `code` under one of the secrets (constant time each)."""
    raw = _decode(key)
    if raw is None:
        return False
    nonce, tag = raw[:NONCE_BYTES], raw[NONCE_BYTES:]
    return any(hmac.compare_digest(tag, _tag(s, code, nonce)) for s in secret_list)


def new_member_id() -> str:
    """A random member id (the page keeps it in its tab): how answers are told apart, with no
    personal data."""
    return secrets.token_urlsafe(9)


def normalize(code: str) -> str | None:
    """The code as stored (upper case, spaces and dashes dropped), or None if it cannot be
    one: so that nothing else is ever looked up, and nothing long."""
    if len(code) > 16:
        return None
    text = code.strip().upper().replace(" ", "").replace("-", "")
    return text if CODE_PATTERN.fullmatch(text) else None


def key_matches(
    given: str | None, code: str, nonce: str | None, secret_list: Iterable[str]
) -> bool:
    """Whether `given` drives the room `code` whose key had `nonce`."""
    mine = key_nonce(given)
    if mine is None or nonce is None or not hmac.compare_digest(mine, nonce):
        return False
    return key_signed(given, code, secret_list)
