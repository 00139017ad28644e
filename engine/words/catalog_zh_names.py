"""The Chinese of the messages about code as students already write it (issue 14): imports and
module prefixes, PyTorch's leaves and keywords, shapes as numbers, index lists, the joins and
clamp. Rules of the same form as engine/words/catalog_zh.py's (read its docstring), tried
right after them by engine/words/messages.py.
"""

from __future__ import annotations

NAMES_RULES: tuple[tuple[str, str], ...] = (
    # --- imports and module prefixes (engine/language/modules.py, spelling.py) ---------------
    (
        r"importing (?P<path>\S*) is not supported; gradtrace understands (?P<named>[\w., ]+?) "
        r"and (?P<last>[\w.]+) \(from (?P<root>\w+), only the functions listed for it\)",
        "不支持导入 {path};gradtrace 认识的模块是 {named} 和 {last}({root} 中只能用列出的函数)",
    ),
    (
        r"importing (?P<path>\S*) is not supported; gradtrace understands (?P<named>[\w., ]+?) "
        r"and (?P<last>[\w.]+)",
        "不支持导入 {path};gradtrace 认识的模块是 {named} 和 {last}",
    ),
    (
        r"(?P<path>[\w.]+) is not supported; the functions of (?P<module>[\w.]+) that work are: "
        r"(?P<t_listed>.+)",
        "不支持 {path};{module} 中可用的函数有:{t_listed}",
    ),
    (
        r"'(?P<name>\w+)' is not imported: add `(?P<line>[^`]+)` at the top of the program",
        "'{name}' 还没有导入:请在程序开头加上 `{line}`",
    ),
    (
        r"import \* is not supported: import the names you use",
        "不支持 import *:请逐个导入要用的名字",
    ),
    (
        r"write (?P<name>[\w.]+) where you use it \(import (?P<module>[\w.]+)\)",
        "请在用到的地方写 {name}(先 import {module})",
    ),
    (r"(?P<fn>[\w.]+) is a function: call it", "{fn} 是一个函数:要调用它"),
    ("a seed is a whole number ≥ 0", "种子是一个 ≥ 0 的整数"),
    (r"(?P<fn>[\w.]+) takes one whole number", "{fn} 接受一个整数"),
    (
        r"(?P<path>[\w.]+) is a statement of its own, on its own line",
        "{path} 是单独的一条语句,要写在自己的一行",
    ),
    # --- PyTorch's leaves and keywords (calls.py) -------------------------------------------
    (
        r"as a statement, write name\.requires_grad_\(\) for a named tensor",
        "作为一条语句,请对一个有名字的张量写 name.requires_grad_()",
    ),
    (
        r"requires_grad_\(\) takes nothing here, or True",
        "requires_grad_() 在这里不接受参数,或者只接受 True",
    ),
    (
        r"(?P<kw>requires_grad|create_graph|retain_graph) is True or False",
        "{kw} 只能是 True 或 False",
    ),
    (
        r"(?P<kw>dtype|device) is a name, such as torch\.float32 \((?P=kw) is ignored: float64 "
        r"always\)",
        "{kw} 是一个名字,例如 torch.float32({kw} 会被忽略:总是用 float64)",
    ),
    (
        r"tensor takes a number or a list of numbers: (?P<call>.+)",
        "tensor 接受一个数或数的列表:{call}",
    ),
    ("tensor takes a number or a list of numbers", "tensor 接受一个数或数的列表"),
    (
        r"PyTorch's transpose\(x, a, b\) is supported for a matrix's two axes \(0, 1\); for "
        r"others write x\.permute\(…\) with every axis",
        "PyTorch 的 transpose(x, a, b) 只支持矩阵的两个轴 (0, 1);其他情况请写 x.permute(…),"
        "并给出每一个轴",
    ),
    (
        r"(?P<name>\w+) takes a value and two axes: (?P<call>.+)",
        "{name} 接受一个值和两个轴:{call}",
    ),
    (r"(?P<name>\w+) takes a value: (?P<call>.+)", "{name} 接受一个值:{call}"),
    (
        r"(?P<name>max|min) of one value \(a reduction over its elements\) is not supported; "
        r"(?P=name)\(a, b\) is elementwise",
        "不支持只给一个值的 {name}(对它的元素做归约);{name}(a, b) 是逐元素的",
    ),
    (r"pow takes a value and an exponent: (?P<call>.+)", "pow 接受一个值和一个指数:{call}"),
    # --- shapes as numbers (spelling.py, build_names.py) -------------------------------------
    (
        r"(?P<what>.+) is several numbers: index it \((?P<one>.+)\) or give it as a shape "
        r"\((?P<shape>.+)\)",
        "{what} 是好几个数:请取其中一个({one}),或把它当作形状({shape})",
    ),
    (
        r"(?P<what>.+) is all of the sizes; one whole number is needed here, as in (?P<one>.+)",
        "{what} 是所有维度的大小;这里只需要一个整数,例如 {one}",
    ),
    (
        r"(?P<what>.+) is several numbers; one is needed here",
        "{what} 是好几个数;这里只需要一个",
    ),
    (
        "the shape of a name only: give this value a name first",
        "只能取一个名字的形状:请先给这个值起个名字",
    ),
    (r"x\.size\(k\) takes one axis: x\.size\(0\)", "x.size(k) 只接受一个轴:x.size(0)"),
    (
        r"(?P<name>.+) is a scalar, which has no length: it has no axis (?P<a>-?\d+)",
        "{name} 是标量,没有长度:它没有轴 {a}",
    ),
    (
        r"(?P<name>.+) is of shape (?P<shape>\(.*\)): it has no axis (?P<a>-?\d+)",
        "{name} 的形状是 {shape}:它没有轴 {a}",
    ),
    (
        r"'(?P<name>.*)' holds (?P<t_what>.+), but a whole number is needed here \(n = 3, or a "
        r"loop's counter\)",
        "'{name}' 存的是{t_what},但这里需要一个整数(例如 n = 3,或循环的计数变量)",
    ),
    ("a tensor", "一个张量"),
    # --- ranges and index lists ------------------------------------------------------------
    (r"linspace needs a count ≥ 0, not (?P<n>-?\d+)", "linspace 需要一个 ≥ 0 的个数,不能是 {n}"),
    ("arange's step cannot be 0", "arange 的步长不能是 0"),
    ("arange would make too many numbers", "arange 会产生太多的数"),
    (
        r"arange takes a stop, or start, stop and step: (?P<a>.+) or (?P<b>.+)",
        "arange 接受一个终点,或者起点、终点和步长:{a} 或 {b}",
    ),
    (
        r"linspace takes start, stop and a count: (?P<call>.+)",
        "linspace 接受起点、终点和个数:{call}",
    ),
    ("an empty list of indices", "下标列表是空的"),
    (
        r"index lists of different lengths \((?P<listed>[\d, ]+)\) cannot be used together",
        "长度不同的下标列表({listed})不能一起使用",
    ),
    (
        r"'(?P<name>.*)' is not whole numbers, so it cannot index: an index is an int or a list "
        "of ints",
        "'{name}' 不是整数,不能用作下标:下标是一个整数或整数列表",
    ),
    # --- cat, stack, clamp (engine/autograd/ops/join.py, clamp.py; calls.py) -----------------
    (
        r"(?P<name>cat|stack) takes a list of values and an optional axis: (?P<call>.+)",
        "{name} 接受一个值的列表和一个可选的轴:{call}",
    ),
    (r"(?P<name>cat|stack) needs at least one value to join", "{name} 至少需要一个要拼接的值"),
    (
        r"cat cannot join scalars: give tensors \(or use stack\)",
        "cat 不能拼接标量:请给出张量(或改用 stack)",
    ),
    (
        r"(?P<name>cat) along axis (?P<a>-?\d+): shapes (?P<s1>.+?) and (?P<s2>.+?) differ on "
        "another axis",
        "沿轴 {a} 做 {name}:形状 {s1} 和 {s2} 在别的轴上不一致",
    ),
    (
        r"stack needs values of one shape: (?P<s1>.+?) and (?P<s2>.+?) differ",
        "stack 需要形状相同的值:{s1} 和 {s2} 不同",
    ),
    (r"clamp needs a bound: (?P<call>.+)", "clamp 至少需要一个界:{call}"),
    (r"clamp takes a value and its bounds: (?P<call>.+)", "clamp 接受一个值和它的上下界:{call}"),
    (r"(?P<kw>min|max) is given twice", "{kw} 给了两次"),
    (r"clamp's (?P<kw>min|max) is a number \(or None\)", "clamp 的 {kw} 是一个数(或 None)"),
    # --- statements the corpus meets (def, if, while, print: engine/language/parse_flow.py,
    # parse_functions.py, run_statements.py) ----------------------------------------------
    (r"print\(…\) is a statement of its own line", "print(…) 要单独写成一行语句"),
    (
        r"a comparison can only be a condition: if …:, while …:, a if … else b",
        "比较只能用作条件:if …:、while …:、a if … else b",
    ),
    (
        r"and/or and not can only join conditions: if …:, while …:",
        "and/or 和 not 只能连接条件:if …:、while …:",
    ),
    (r"return can only stand inside a def", "return 只能写在 def 里面"),
    (r"(?P<word>break|continue) can only stand inside a loop", "{word} 只能写在循环里面"),
    (
        r"(?P<t_what>.+) is (?P<t_desc>a (?:list|tuple) of \d+ values), not one value \(a "
        r"tensor\): use stack\(…\) to make a tensor of them, or sum\(…\) to add them",
        "{t_what}是{t_desc},不是一个值(张量):请用 stack(…) 把它们合成一个张量,"
        "或用 sum(…) 把它们加起来",
    ),
    (r"a (?P<t_kind>list|tuple) of (?P<n>\d+) values", "一个有 {n} 个值的{t_kind}"),
    ("list", "列表"),
    ("tuple", "元组"),
    ("the output", "输出"),
    ("this", "这个"),
)
