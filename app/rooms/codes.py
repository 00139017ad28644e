"""A room's code (short, read aloud, typed on a phone) and its instructor key (a secret).

Both come from `secrets`, so no code tells anything about another. The alphabet leaves out the
look-alikes 0/O, 1/I/L (and U, which reads as V on a projector): 30 letters and digits, so
6 characters give 30**6 ≈ 7.3e8 codes, and a code typed in lower case still works.
"""

from __future__ import annotations

import hmac
import re
import secrets

ALPHABET = "23456789ABCDEFGHJKMNPQRSTVWXYZ"
CODE_LENGTH = 6  # the spec allows 6–8; 6 is the quickest to type
CODE_PATTERN = re.compile(f"[{ALPHABET}]{{6,8}}")
KEY_BYTES = 24  # 192 bits, over the spec's 128


def new_code(length: int = CODE_LENGTH) -> str:
    """A fresh room code of `length` characters of ALPHABET."""
    return "".join(secrets.choice(ALPHABET) for _ in range(length))


def new_key() -> str:
    """A fresh instructor key: KEY_BYTES random bytes, URL-safe base64 (32 characters)."""
    return secrets.token_urlsafe(KEY_BYTES)


def new_member_id() -> str:
    """A random id for one connection: how answers are told apart, with no personal data."""
    return secrets.token_urlsafe(9)


def normalize(code: str) -> str | None:
    """The code as stored (upper case, spaces and dashes dropped), or None if it cannot be
    one: so that nothing else is ever looked up, and nothing long."""
    if len(code) > 16:
        return None
    text = code.strip().upper().replace(" ", "").replace("-", "")
    return text if CODE_PATTERN.fullmatch(text) else None


def key_matches(given: str | None, stored: str | None) -> bool:
    """Whether `given` is the key, in time that does not depend on where they differ."""
    if not given or not stored:
        return False
    return hmac.compare_digest(given.encode("utf-8", "replace"), stored.encode("utf-8"))
