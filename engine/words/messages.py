"""Messages in the reader's language, worded from their keys: `say(key, lang, params)`.

Every message the engine makes is keyed (engine/errors.py): its template is `msg_<key>` in
engine/words/en.json and zh.json, and an error object carries its key and params, so it is worded
again in any language where the answer is made (the page's /api/render and GET /, the image's
error picture, the widget), and the API keeps English by default. The one exception is Python's
own syntax messages, which the language passes on as CPython words them: `translate(message,
lang)` turns those into Chinese by the rules below, regular expressions over a whole message.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Mapping
from typing import Any

# "syntax error: <Python's words>", with the language's own hint after a string literal.
SYNTAX_RULES: tuple[tuple[str, str], ...] = (
    (
        r"syntax error: (?P<t_what>.+) \(strings are not part of the language\)",
        "语法错误:{t_what}(字符串不是本语言的一部分)",
    ),
    (r"syntax error: (?P<t_what>.+)", "语法错误:{t_what}"),
)

# Python's own syntax messages, as CPython 3.11–3.13 words them (after "syntax error: ").
PYTHON_RULES: tuple[tuple[str, str], ...] = (
    ("invalid syntax", "无效的语法"),
    (r"invalid syntax\. Perhaps you forgot a comma\?", "无效的语法。是不是漏了逗号?"),
    (
        r"invalid syntax\. Maybe you meant '==' or ':=' instead of '='\?",
        "无效的语法。是不是想写 '==' 或 ':=',而不是 '='?",
    ),
    (r"'(?P<b>.)' was never closed", "'{b}' 没有闭合"),
    (r"unmatched '(?P<b>.)'", "'{b}' 没有与之配对的左括号"),
    (
        r"closing parenthesis '(?P<c>.)' does not match opening parenthesis '(?P<o>.)' on line "
        r"(?P<n>\d+)",
        "右括号 '{c}' 与第 {n} 行的左括号 '{o}' 不匹配",
    ),
    (
        r"closing parenthesis '(?P<c>.)' does not match opening parenthesis '(?P<o>.)'",
        "右括号 '{c}' 与左括号 '{o}' 不匹配",
    ),
    ("unexpected indent", "意外的缩进"),
    ("unexpected unindent", "意外的取消缩进"),
    ("unindent does not match any outer indentation level", "取消缩进后与外层的任何缩进都对不齐"),
    ("inconsistent use of tabs and spaces in indentation", "缩进里混用了制表符和空格"),
    (
        r"expected an indented block after '(?P<kw>\w+)' statement on line (?P<n>\d+)",
        "第 {n} 行的 '{kw}' 语句之后需要一个缩进的代码块",
    ),
    ("expected an indented block", "这里需要一个缩进的代码块"),
    ("unexpected EOF while parsing", "程序在读完之前就结束了"),
    (
        "unexpected character after line continuation character",
        "续行符 \\ 之后出现了意外的字符",
    ),
    (
        r"unterminated (?P<t_kind>string|triple-quoted string) literal "
        r"\(detected at line (?P<n>\d+)\)",
        "{t_kind}没有结束(在第 {n} 行发现)",
    ),
    ("string", "字符串"),
    ("triple-quoted string", "三引号字符串"),
    (r"invalid non-printable character (?P<u>U\+[0-9A-F]+)", "无效的不可打印字符 {u}"),
    (r"invalid character '(?P<c>.+)' \((?P<u>U\+[0-9A-F]+)\)", "无效的字符 '{c}'({u})"),
    (r"invalid character in identifier", "名字里有无效的字符"),
    (
        r"invalid (?P<t_kind>decimal|hexadecimal|octal|binary|imaginary) literal",
        "无效的{t_kind}数字",
    ),
    ("decimal", "十进制"),
    ("hexadecimal", "十六进制"),
    ("octal", "八进制"),
    ("binary", "二进制"),
    ("imaginary", "虚数"),
    (
        r"invalid digit '(?P<d>.)' in (?P<t_kind>octal|binary) literal",
        "{t_kind}数字里有无效的数位 '{d}'",
    ),
    (
        r"leading zeros in decimal integer literals are not permitted; use an 0o prefix for "
        "octal integers",
        "十进制整数不能以 0 开头;八进制整数请用 0o 前缀",
    ),
    ("illegal target for annotation", "类型注解的目标不合法"),
    (
        "only single target \\(not tuple\\) can be annotated",
        "只有单个目标(不能是元组)可以加类型注解",
    ),
    (
        r"cannot assign to (?P<t_what>.+?) here\. Maybe you meant '==' instead of '='\?",
        "不能给{t_what}赋值。是不是想写 '==',而不是 '='?",
    ),
    (r"cannot assign to (?P<t_what>.+)", "不能给{t_what}赋值"),
    (r"cannot delete (?P<t_what>.+)", "不能删除{t_what}"),
    ("function call", "函数调用"),
    ("literal", "字面量"),
    ("expression", "表达式"),
    ("attribute", "属性"),
    ("subscript", "下标"),
    ("conditional expression", "条件表达式"),
    ("named expression", "命名表达式"),
    ("ellipsis", "省略号 ..."),
    (
        r"(?P<word>None|True|False|__debug__|lambda|comparison|yield expression|await expression)",
        " {word} ",
    ),
    (
        r"Missing parentheses in call to '(?P<name>\w+)'\. Did you mean (?P<call>.+)\?",
        "调用 '{name}' 缺少括号。是不是想写 {call}?",
    ),
    (r"expected '(?P<a>[^']+)' after '(?P<b>[^']+)' expression", "'{b}' 表达式后面缺少 '{a}'"),
    (
        r"'(?P<what>.+)' is an illegal expression for augmented assignment",
        "'{what}' 不能用在复合赋值里",
    ),
    (r"expected '(?P<c>[^']+)'", "这里缺少 '{c}'"),
    (r"expected (?P<what>.+)", "这里需要 {what}"),
    (
        r'expression cannot contain assignment, perhaps you meant "=="\?',
        '表达式里不能有赋值,是不是想写 "=="?',
    ),
    ("positional argument follows keyword argument", "位置参数写在了关键字参数之后"),
    (r"keyword argument repeated: (?P<k>.+)", "关键字参数重复了:{k}"),
    ("Generator expression must be parenthesized", "生成器表达式必须加括号"),
    ("trailing comma not allowed without surrounding parentheses", "没有括号时不能以逗号结尾"),
    ("too many nested parentheses", "括号嵌套太多"),
    (
        "assignment expression cannot be used in a comprehension iterable expression",
        "推导式的可迭代表达式里不能用 :=",
    ),
    (r"(?P<what>.+) is illegal here", "这里不能用 {what}"),
)

MAX_NESTING = 4  # fragments inside fragments: "cannot assign to <t_what>"
# Python's messages are short; past this a rule with two open groups could take quadratic
# time, so the text stays as it is.
MAX_CHARS = 1_000


@functools.lru_cache(maxsize=1)
def _compiled() -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(en, re.DOTALL), zh) for en, zh in (*SYNTAX_RULES, *PYTHON_RULES))


def translate(message: str, lang: str) -> str:
    """A syntax error's `message` (Python's words, after "syntax error: ") in `lang`: the
    Chinese for lang "zh" when a rule knows it, else as it is. Every other message is keyed:
    word it with `say`."""
    if lang != "zh" or not message or len(message) > MAX_CHARS:
        return message
    return _zh(message, 0) or message


def _zh(message: str, depth: int) -> str | None:
    for pattern, zh in _compiled():
        m = pattern.fullmatch(message)
        if m is not None:
            parts = {k: _part(k, v or "", depth) for k, v in m.groupdict().items()}
            return zh.format(**parts)
    return None


def _part(name: str, text: str, depth: int) -> str:
    if not name.startswith("t_") or depth >= MAX_NESTING:
        return text
    return _zh(text, depth + 1) or text


def say(key: str, lang: str, params: Mapping[str, Any]) -> str:
    """The message `key` worded in `lang` (English when `lang` lacks it) with its params; a
    param that is itself a message ({"key", "params"} or a Msg) is worded in `lang` too."""
    from engine.words import words

    template = words(lang).get("msg_" + key) or words("en").get("msg_" + key)
    if template is None:
        raise KeyError(f"no message 'msg_{key}' in engine/words/en.json")
    return template.format_map({k: _param(v, lang) for k, v in params.items()})


def _param(value: Any, lang: str) -> Any:
    if isinstance(value, Mapping) and "key" in value:
        return say(str(value["key"]), lang, value.get("params") or {})
    key = getattr(value, "key", None)
    if isinstance(key, str) and hasattr(value, "params"):
        return say(key, lang, value.params)
    return value


def translate_error(error: Mapping[str, Any], lang: str) -> dict[str, Any]:
    """An error object ({"message", "line", …}) with its message in `lang`: worded again from
    its key when it has one, else (Python's own syntax messages) by the rules."""
    out = dict(error)
    key = out.get("key")
    if isinstance(key, str):
        # A template and its params out of step (an older answer kept somewhere): the English
        # stays.
        with contextlib.suppress(KeyError, IndexError, ValueError):
            out["message"] = say(key, lang, out.get("params") or {})
    elif isinstance(out.get("message"), str):
        out["message"] = translate(out["message"], lang)
    return out
