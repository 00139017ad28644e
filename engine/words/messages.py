"""Error messages in the reader's language: `translate(message, lang)`.

The engine raises its errors in English at some hundred places; rather than thread a language
through each, the answer is retold where it is made (the page's /api/render and GET /, the
image's error picture), and the API keeps English by default. The rules are regular
expressions over a whole message (engine/words/catalog_zh.py explains their form): the
language's own messages there, in catalog_zh_names.py (imports, shapes, index lists) and
catalog_zh_flow.py (def, control flow, backward, print); Python's syntax messages (which the
language passes on), the limits' and the drawing's and lessons' here. A message no rule knows
is returned as it is: tests/test_errors_zh.py runs a large corpus of bad programs and asserts
each message it meets is translated, its names and numbers kept.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from engine.words.catalog_zh import RULES
from engine.words.catalog_zh_flow import FLOW_RULES
from engine.words.catalog_zh_names import NAMES_RULES

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

# The limits of engine/limits.py (the setting's name is kept, so the README can be looked up).
LIMIT_RULES: tuple[tuple[str, str], ...] = (
    (
        r"the program is (?P<n>[\d,]+) characters long; the limit is (?P<m>[\d,]+) "
        r"\((?P<s>max_source_chars)\)",
        "程序有 {n} 个字符;上限是 {m}({s})",
    ),
    (
        r"the program has about (?P<n>[\d,]+) operators, more than the (?P<m>[\d,]+) graph nodes a "
        r"program may make \((?P<s>max_nodes)\)",
        "程序大约有 {n} 个运算符,超过了一个程序最多能产生的 {m} 个图节点({s})",
    ),
    (
        r"the program is nested too deeply to read \(the limit is (?P<n>\d+) levels, "
        r"(?P<s>max_depth)\)",
        "程序嵌套太深,无法读取(上限是 {n} 层,{s})",
    ),
    (
        r"the program is nested more than (?P<n>[\d,]+) levels? deep \((?P<s>max_depth)\)",
        "程序的嵌套超过了 {n} 层({s})",
    ),
    (
        r"brackets are nested more than (?P<n>[\d,]+) deep \((?P<s>max_depth)\)",
        "括号的嵌套超过了 {n} 层({s})",
    ),
    (
        r"the program makes more than (?P<n>[\d,]+) graph nodes once its loops are unrolled "
        r"\((?P<s>max_nodes)\)",
        "循环展开后,程序产生的图节点超过了 {n} 个({s})",
    ),
    (
        r"the program runs more than (?P<n>[\d,]+) statements once its loops are unrolled "
        r"\((?P<s>max_statements)\)",
        "循环展开后,程序运行的语句超过了 {n} 条({s})",
    ),
    (
        r"the program runs more than (?P<n>[\d,]+) statements once its loops are unrolled and "
        r"its calls inlined \((?P<s>max_statements)\)",
        "循环展开、函数调用内联之后,程序运行的语句超过了 {n} 条({s})",
    ),
    (
        r"calls nest more than (?P<n>[\d,]+) deep \((?P<s>max_call_depth)\)",
        "函数调用的嵌套超过了 {n} 层({s})",
    ),
    (
        r"this comparison would have (?P<n>[\d,]+) elements; the limit is (?P<m>[\d,]+) per "
        r"value \((?P<s>max_tensor_elements)\)",
        "这个比较会有 {n} 个元素;每个值的上限是 {m}({s})",
    ),
    (
        r"this loop would run (?P<n>[\d,]+) times; the limit is (?P<m>[\d,]+) iterations "
        r"\((?P<s>max_loop_iterations)\)",
        "这个循环会运行 {n} 次;上限是 {m} 次({s})",
    ),
    (
        r"the exponent (?P<b>\S+) is larger than the limit of (?P<m>\S+) \((?P<s>max_exponent)\)",
        "指数 {b} 超过了上限 {m}({s})",
    ),
    (
        r"this value would have (?P<n>[\d,]+) elements; the limit is (?P<m>[\d,]+) per value "
        r"\((?P<s>max_tensor_elements)\)",
        "这个值会有 {n} 个元素;每个值的上限是 {m}({s})",
    ),
    (
        r"this list has (?P<n>[\d,]+) numbers; the limit is (?P<m>[\d,]+) "
        r"\((?P<s>max_tensor_elements)\)",
        "这个列表有 {n} 个数;上限是 {m}({s})",
    ),
    (
        r"this range has (?P<n>[\d,]+) indices; the limit is (?P<m>[\d,]+) "
        r"\((?P<s>max_tensor_elements)\)",
        "这个 range 有 {n} 个下标;上限是 {m}({s})",
    ),
    (
        r"the value for '(?P<name>.*)' has (?P<n>[\d,]+) numbers; the limit is (?P<m>[\d,]+) "
        r"\((?P<s>max_tensor_elements)\)",
        "'{name}' 的值有 {n} 个数;上限是 {m}({s})",
    ),
    (
        r"this value of shape (?P<shape>.+) is empty, but counting its length-0 axes as 1 it has "
        r"(?P<n>[\d,]+) elements; the limit is (?P<m>[\d,]+) per value "
        r"\((?P<s>max_tensor_elements)\)",
        "形状为 {shape} 的这个值是空的,但把长度为 0 的轴按 1 计算,它有 {n} 个元素;"
        "每个值的上限是 {m}({s})",
    ),
    (
        r"(?P<op>\w+) of (?P<listed>.+) would make (?P<n>[\d,]+) elements inside it \(a value "
        r"larger than its result\); the limit is (?P<m>[\d,]+) per value "
        r"\((?P<s>max_tensor_elements)\)",
        "{listed} 的 {op} 会在内部产生 {n} 个元素(比它的结果还大);每个值的上限是 {m}({s})",
    ),
    (
        r"the program's values would hold more than (?P<n>[\d,]+) elements in all "
        r"\((?P<s>max_total_elements)\)",
        "程序的值总共会超过 {n} 个元素({s})",
    ),
    (
        r"building this gradient would make a value of (?P<n>[\d,]+) elements; the limit is "
        r"(?P<m>[\d,]+) per value \((?P<s>max_tensor_elements)\)",
        "构建这个梯度会产生一个有 {n} 个元素的值;每个值的上限是 {m}({s})",
    ),
    (
        r"building this gradient would make more graph nodes than the program may have "
        r"\((?P<s>max_nodes)\)",
        "构建这个梯度产生的图节点会超过程序允许的数量({s})",
    ),
    (
        r"building this gradient would make the program's values hold more elements than they may "
        r"in all \((?P<s>max_total_elements)\)",
        "构建这个梯度会让程序的值总共超过允许的元素数({s})",
    ),
    (
        r"the request took longer than (?P<n>\S+) s, the time a request may take \((?P<s>\w+)\)",
        "请求用时超过了 {n} 秒,即一个请求允许的时间({s})",
    ),
)

# What the drawing and the lessons say (engine/drawing, engine/lessons).
OTHER_RULES: tuple[tuple[str, str], ...] = (
    (
        r"This graph has (?P<n>\d+) nodes; the drawing stops at (?P<m>\d+)\. The steps and the "
        r"table still work\.",
        "这个图有 {n} 个节点;超过 {m} 个就不再绘制。步骤和表格仍然可用。",
    ),
    (
        "The server is busy drawing other graphs; try again\\.",
        "服务器正忙着绘制别的图;请再试一次。",
    ),
    (r"Graphviz failed: (?P<why>.*)", "Graphviz 出错:{why}"),
    ("Graphviz \\(dot\\) is not available on the server\\.", "服务器上没有 Graphviz(dot)。"),
    (
        r"Laying out this graph takes longer than (?P<n>\S+) s \((?P<s>max_layout_seconds)\); it "
        r"is too large to draw\.",
        "排布这个图需要超过 {n} 秒({s});它太大,无法绘制。",
    ),
    (
        r"Laying out this graph would take longer than the (?P<n>\S+) s a request may take "
        r"\((?P<s>\w+)\); it is too large to draw\.",
        "排布这个图会超过一个请求允许的 {n} 秒({s});它太大,无法绘制。",
    ),
    (
        r"The server is too busy to lay out this graph now: in (?P<n>\S+) s it got less than the "
        r"(?P<m>\S+) s of computing time a layout may use \((?P<s>max_layout_seconds)\)\. Try "
        r"again in a moment\.",
        "服务器现在太忙,无法排布这个图:{n} 秒内它得到的计算时间少于排布允许的 {m} 秒({s})。"
        "请稍后再试。",
    ),
    (r"the options for (?P<name>\w+) must be an object", "{name} 的选项必须是一个对象"),
    (
        r"(?P<name>\w+) has no option (?P<key>.+) \(it takes: (?P<t_takes>.*)\)",
        "{name} 没有选项 {key}(它可用的是:{t_takes})",
    ),
    (
        r"(?P<name>\w+)'s option (?P<key>.+) has the wrong kind of value",
        "{name} 的选项 {key} 的值类型不对",
    ),
    (r"unknown lesson (?P<name>.+); the lessons are (?P<all>.+)", "未知的课程 {name};课程有 {all}"),
    (
        r"the PyTorch and JAX lesson cannot write code for (?P<what>'.*') yet",
        "“PyTorch 与 JAX”课程还不能为 {what} 写出代码",
    ),
    (
        r"the memory lesson lists the saved values alive at each backward step: this program "
        r"would list (?P<n>[\d,]+) of them \((?P<k>[\d,]+) values over (?P<s>[\d,]+) steps\), more "
        r"than the lesson's limit of (?P<m>[\d,]+) \((?P<set>max_alive_cells)\); try a shorter "
        "program",
        "内存课程会列出反向传播每一步仍保存着的值:这个程序会列出 {n} 项({k} 个值,{s} 步),"
        "超过了本课程的上限 {m}({set});请换一个短一些的程序",
    ),
)

# What the address of a page or image can get wrong (app/query.py, engine/language/valuespec.py).
QUERY_RULES: tuple[tuple[str, str], ...] = (
    (
        r"this link uses format v=(?P<v>-?\d+); this server reads v=(?P<w>\d+)",
        "这个链接用的是格式 v={v};本服务器读取的是 v={w}",
    ),
    (r"no program: add \?source=… to the address", "没有程序:请在地址里加上 ?source=…"),
    (
        r"(?P<name>\w+) is (?P<t_allowed>'[^']*'(?: or '[^']*')+), not (?P<got>'.*')",
        "{name} 只能是 {t_allowed},不能是 {got}",
    ),
    (r"(?P<a>'[^']*') or (?P<t_b>'.+)", "{a} 或 {t_b}"),
    (r"(?P<name>\w+) must be a whole number, not (?P<got>.*)", "{name} 必须是整数,不能是 {got}"),
    (
        r"the compressed program is longer than (?P<n>\d+) characters",
        "压缩后的程序超过了 {n} 个字符",
    ),
    (r"the compressed program \(z=\) is not valid base64url", "压缩的程序(z=)不是有效的 base64url"),
    (r"the compressed program \(z=\) is damaged", "压缩的程序(z=)已损坏"),
    (r"the compressed program inflates past (?P<n>\d+) bytes", "压缩的程序解压后超过了 {n} 字节"),
    (r"the compressed program \(z=\) is not UTF-8 text", "压缩的程序(z=)不是 UTF-8 文本"),
    (r"values is longer than (?P<n>\d+) characters", "values 超过了 {n} 个字符"),
    (r"values is not valid JSON: (?P<why>.*)", "values 不是有效的 JSON:{why}"),
    ("values must be a JSON object", "values 必须是一个 JSON 对象"),
    (
        r"values are written name=number, like x=2,y=3 \(got (?P<got>.*)\)",
        "values 的写法是 名字=数,例如 x=2,y=3(收到的是 {got})",
    ),
    (r"(?P<name>.+) is not a name", "{name} 不是一个名字"),
    (r"the value for (?P<name>.+) is not a number: (?P<got>.*)", "{name} 的值不是数:{got}"),
    (r"the value for (?P<name>.+) must be finite", "{name} 的值必须是有限数"),
    (r"the value for (?P<name>.+) is nested too deeply", "{name} 的值嵌套太深"),
    (
        r"the value for (?P<name>.+) must be a number or a nested list of numbers",
        "{name} 的值必须是一个数或嵌套的数列表",
    ),
)

MAX_NESTING = 4  # fragments inside fragments: "grad(…): x gives NaN — hint — did you mean"
# The engine's messages are short (names and program text in them are cut to 100 characters);
# past this a rule with two open groups could take quadratic time, so the text stays as it is.
MAX_CHARS = 1_000


@functools.lru_cache(maxsize=1)
def _compiled() -> tuple[tuple[re.Pattern[str], str], ...]:
    rules = (
        *RULES,
        *NAMES_RULES,
        *FLOW_RULES,
        *PYTHON_RULES,
        *LIMIT_RULES,
        *OTHER_RULES,
        *QUERY_RULES,
    )
    return tuple((re.compile(en, re.DOTALL), zh) for en, zh in rules)


def translate(message: str, lang: str) -> str:
    """`message` in `lang`: the Chinese for lang "zh" when a rule knows it, else as it is."""
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
        try:
            out["message"] = say(key, lang, out.get("params") or {})
        except (KeyError, IndexError, ValueError):
            pass  # a template and its params out of step: the English stays
    elif isinstance(out.get("message"), str):
        out["message"] = translate(out["message"], lang)
    return out


def is_translated(message: str) -> bool:
    """Whether a rule knows `message` (tests: the catalog's coverage)."""
    return _zh(message, 0) is not None
