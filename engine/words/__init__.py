"""The words gradtrace shows, one file per language (en.json, zh.json, the same keys in each):
the page's, the exports', the drawing's own (`svg_…`), and every message's template (`msg_…`,
worded by engine.words.messages.say from a message's key). They live with the library because
the drawing and the messages need them and the engine reads no page files; the server hands the
page's words to the page in its start-up data, and gradtrace's exports put them in their files
(gradtrace/assets.py: not the templates, which are worded on the server)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType

HERE = Path(__file__).resolve().parent
LANGS = ("en", "zh")  # English first: the fallback for a missing word


@lru_cache(maxsize=1)
def all_words() -> Mapping[str, Mapping[str, str]]:
    """{lang: {key: word}} for every language, read once and never changed."""
    return MappingProxyType(
        {
            lang: MappingProxyType(json.loads((HERE / f"{lang}.json").read_text("utf-8")))
            for lang in LANGS
        }
    )


def words(lang: str) -> Mapping[str, str]:
    """The words of `lang` (English for any other)."""
    return all_words().get(lang) or all_words()["en"]
