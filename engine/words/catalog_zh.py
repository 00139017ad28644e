"""The Chinese of the engine's error messages (engine/words/messages.py applies it).

Each rule is (English, Chinese): a regular expression over a whole message, its named groups the
parts that vary, and the Chinese it becomes. A group is inserted as it was written (a name, a
number, a shape, program text), except one whose name starts with `t_`: that is a fragment of a
message, translated by the same rules. Order matters: the first rule that matches the whole
message wins, so an ending shared by many messages (" — did you mean …?") comes first.
"""

from __future__ import annotations

RULES: tuple[tuple[str, str], ...] = (
    # --- endings and wrappers, around any message --------------------------------------
    (r"(?P<t_head>.+) — did you mean '(?P<word>.*)'\?", "{t_head}——你是不是想写 '{word}'?"),
    (r"grad\(…\): (?P<t_inner>.+)", "grad(…):{t_inner}"),
    (
        r"syntax error: (?P<t_what>.+) \(strings are not part of the language\)",
        "语法错误:{t_what}(字符串不是本语言的一部分)",
    ),
    (r"syntax error: (?P<t_what>.+)", "语法错误:{t_what}"),
    # --- numbers that are not finite (the program's text first, then what went wrong) ---
    (
        r"(?P<expr>.+) gives (?P<t_bad>NaN \(not a number\)|an infinite value) — (?P<t_hint>.+)",
        "{expr} 的结果是{t_bad}——{t_hint}",
    ),
    (
        r"(?P<expr>.+) gives (?P<t_bad>NaN \(not a number\)|an infinite value)",
        "{expr} 的结果是{t_bad}",
    ),
    (
        r"(?P<expr>.+) has a gradient that is (?P<t_bad>NaN \(not a number\)|infinite) — "
        r"(?P<t_hint>.+)",
        "{expr} 的梯度是{t_bad}——{t_hint}",
    ),
    (
        r"(?P<expr>.+) has a gradient that is (?P<t_bad>NaN \(not a number\)|infinite)",
        "{expr} 的梯度是{t_bad}",
    ),
    ("NaN \\(not a number\\)", "非数 NaN"),
    ("an infinite value|infinite", "无穷大"),
    ("division by zero", "除以零"),
    (
        r"the result is beyond float64's range \(about (?P<n>.+)\)",
        "结果超出了 float64 的范围(约 {n})",
    ),
    (
        "a negative base with a fractional exponent, a zero base with a negative exponent, or a "
        "result too large for float64",
        "负数的分数次幂、零的负数次幂,或结果超出了 float64 的范围",
    ),
    (
        r"exp overflows float64 above about (?P<n>\d+)",
        "exp 的参数大于约 {n} 时会超出 float64 的范围",
    ),
    (
        r"log needs positive numbers: log\(0\) is −inf, log of a negative is NaN",
        "log 需要正数:log(0) 是 −inf,负数的 log 是 NaN",
    ),
    (
        r"sqrt needs numbers ≥ 0, and its gradient at 0 is infinite",
        "sqrt 需要 ≥ 0 的数,而且它在 0 处的梯度是无穷大",
    ),
    ("this number is too large for a float64", "这个数太大,float64 放不下"),
    ("grad\\(…\\) gives a value that is not finite", "grad(…) 给出的值不是有限数"),
    # --- the text itself --------------------------------------------------------------
    (
        "the program is empty: type an expression such as x\\*y \\+ x",
        "程序是空的:输入一个表达式,例如 x*y + x",
    ),
    ("the program has no statements", "程序里没有语句"),
    (r"the text holds a control character \((?P<u>U\+[0-9A-F]+)\)", "文本里有一个控制字符({u})"),
    (
        r"the text holds an invisible direction control character \((?P<u>U\+[0-9A-F]+)\), which "
        "can make code read differently from what runs",
        "文本里有一个不可见的文字方向控制字符({u}),它会让代码看起来与实际运行的不同",
    ),
    (
        r"the text holds a broken character \(an unpaired surrogate\)",
        "文本里有一个损坏的字符(不成对的代理项)",
    ),
    ("this number has too many digits", "这个数的位数太多"),
    ("this whole number is too large", "这个整数太大"),
    # --- what is not part of the language -----------------------------------------------
    (
        r"the operator (?P<op>\S+) is not part of the language \(use \+ - \* / \*\* @\)",
        "运算符 {op} 不是本语言的一部分(可用 + - * / ** @)",
    ),
    (
        r"augmented assignment \(\+=, \*=, …\) is not part of the language: write x = x \+ …",
        "复合赋值(+=、*= 等)不是本语言的一部分:请写成 x = x + …",
    ),
    (
        r"attribute access \((?P<attr>.*)\) is not part of the language; only methods such as "
        r"\.sum\(\), \.tanh\(\) and \.T, and \.shape",
        "属性访问({attr})不是本语言的一部分;只能用 .sum()、.tanh() 和 .T 这样的方法,以及 .shape",
    ),
    (
        r"attribute access \((?P<attr>.*)\) is not part of the language; only methods such as "
        r"\.sum\(\), \.tanh\(\) and \.T",
        "属性访问({attr})不是本语言的一部分;只能用 .sum()、.tanh() 和 .T 这样的方法",
    ),
    (
        r"names starting with __ \('(?P<name>.*)'\) are not part of the language",
        "以 __ 开头的名字('{name}')不是本语言的一部分",
    ),
    (r"complex numbers are not part of the language", "复数不是本语言的一部分"),
    (r"(?P<t_what>.+) is not part of the language", "{t_what}不是本语言的一部分"),
    (r"this kind of code \((?P<kind>\w+)\)", "这种代码({kind})"),
    ("a list comprehension", "列表推导式"),
    ("a set comprehension", "集合推导式"),
    ("a dict comprehension", "字典推导式"),
    ("a generator expression", "生成器表达式"),
    ("a while loop", "while 循环"),
    ("an if-expression", "条件表达式(… if … else …)"),
    ("an f-string", "f-string(格式化字符串)"),
    ("a dict", "字典"),
    ("a set", "集合"),
    ("a string", "字符串"),
    ("a comparison", "比较"),
    ("and/or", "and/or 逻辑运算"),
    ("the := operator", ":= 运算符"),
    (r"(?P<star>\*\*?)unpacking", "{star} 解包"),
    ("an annotated assignment", "带类型注解的赋值"),
    (
        r"(?P<kw>import|lambda|def|class|if|with|try|return|del|global|nonlocal|raise|assert|"
        r"pass|break|continue|await|yield)",
        "{kw} ",  # "import 不是…": a space between the keyword and the Chinese
    ),
    ("only - and \\+ can stand before a value", "值的前面只能是 - 或 +"),
    ("a minus sign can stand only before a number here", "这里负号只能放在数字前面"),
    ("only named functions can be called", "只能调用有名字的函数"),
    (
        "a loop must be for name in range\\(n\\) with a constant n",
        "循环必须写成 for name in range(n),n 为常数",
    ),
    ("a for loop cannot have an else block", "for 循环不能带 else 块"),
    (
        r"the loop variable must be one name: for i in range\(n\)",
        "循环变量必须是一个名字:for i in range(n)",
    ),
    (r"range\(\) step cannot be (?P<n>\S+)", "range() 的步长不能是 {n}"),
    (r"a slice step cannot be (?P<n>\S+)", "切片的步长不能是 {n}"),
    (
        r"only the last statement can be a bare expression; give this one a name: name = …",
        "只有最后一条语句可以是单独的表达式;请给这一条起个名字:name = …",
    ),
    ("assign to one name at a time: name = expression", "一次只能给一个名字赋值:name = 表达式"),
    (
        "the program computes nothing: its last statement must give a value",
        "程序什么也没有计算:最后一条语句必须给出一个值",
    ),
    # --- names ------------------------------------------------------------------------
    (r"unknown function '(?P<name>.*)'", "未知函数 '{name}'"),
    (r"unknown method \.(?P<name>.*)\(\)", "未知方法 .{name}()"),
    (r"'(?P<name>.*)' is used before it is assigned", "'{name}' 在赋值之前就被使用了"),
    (r"'(?P<name>.*)' is a value, not a function", "'{name}' 是一个值,不是函数"),
    (
        r"'(?P<name>.*)' is a function: call it, as in (?P<call>.*), or pass it to grad",
        "'{name}' 是一个函数:要调用它(例如 {call}),或把它交给 grad",
    ),
    (
        r"'(?P<name>.*)' is a function: call it, as in (?P<call>.*)",
        "'{name}' 是一个函数:要调用它,例如 {call}",
    ),
    (r"'(?P<name>.*)' is a function name; choose another name", "'{name}' 是函数名;请换一个名字"),
    (
        r"'(?P<name>.*)' is the loop variable; it cannot be assigned inside its loop",
        "'{name}' 是循环变量;不能在它的循环里给它赋值",
    ),
    (r"'(?P<name>.*)' only exists inside its loop", "'{name}' 只在它的循环里存在"),
    (
        r"\.(?P<name>.*) is a method: call it, as in (?P<call>.*)",
        ".{name} 是一个方法:要调用它,例如 {call}",
    ),
    (
        r"'(?P<name>.*)' is a value, but a fixed whole number \(or a loop variable\) is needed "
        "here",
        "'{name}' 是一个值,但这里需要一个固定的整数(或循环变量)",
    ),
    (
        r"a fixed whole number \(or a loop variable\) is needed here",
        "这里需要一个固定的整数(或循环变量)",
    ),
    (r"a fixed whole number is needed here", "这里需要一个固定的整数"),
    (r"a whole number is needed here, not a fraction", "这里需要整数,不能是小数"),
    (r"division by zero in a whole-number expression", "整数表达式里除以了零"),
    # --- calls, keywords, arguments -----------------------------------------------------
    (
        r"(?P<name>\w+)\(\) has no keyword '(?P<kw>.*)'; (?P=name) takes (?P<ok>.+)",
        "{name}() 没有关键字参数 '{kw}';{name} 可用的是 {ok}",
    ),
    (r"(?P<name>\w+)\(\) has no keyword '(?P<kw>.*)'", "{name}() 没有关键字参数 '{kw}'"),
    (r"unknown keyword (?P<kw>.+)", "未知的关键字参数 {kw}"),
    ("keepdims is True or False", "keepdims 只能是 True 或 False"),
    (r"axes is a tuple of whole numbers: axes=\(1, 0\)", "axes 是由整数组成的元组:axes=(1, 0)"),
    (r"(?P<kw>axis|axes) is given twice", "{kw} 给了两次"),
    (r"(?P<name>\w+) takes one axis", "{name} 只接受一个轴"),
    (r"(?P<name>\w+) takes one value: (?P<call>.+)", "{name} 接受一个值:{call}"),
    (r"(?P<name>\w+) takes two values: (?P<call>.+)", "{name} 接受两个值:{call}"),
    (r"(?P<name>\w+) takes logits and labels: (?P<call>.+)", "{name} 接受 logits 和标签:{call}"),
    (
        r"(?P<name>\w+) takes a value and an optional axis: (?P<call>.+)",
        "{name} 接受一个值和一个可选的轴:{call}",
    ),
    (
        r"(?P<name>\w+) takes an output and a name: (?P<call>.+)",
        "{name} 接受一个输出和一个名字:{call}",
    ),
    (r"(?P<name>\w+) takes one whole number: (?P<call>.+)", "{name} 接受一个整数:{call}"),
    (r"(?P<name>\w+) takes a whole number ≥ 0: (?P<call>.+)", "{name} 接受一个 ≥ 0 的整数:{call}"),
    (
        r"(?P<name>\w+) takes a shape and a number: (?P<call>.+)",
        "{name} 接受一个形状和一个数:{call}",
    ),
    (r"(?P<name>\w+) needs a shape: (?P<call>.+)", "{name} 需要一个形状:{call}"),
    (r"full's fill value must be a number", "full 的填充值必须是一个数"),
    (
        r"seed\(n\) is a statement of its own, on its own line",
        "seed(n) 是单独的一条语句,要写在自己的一行",
    ),
    (
        r"grad\(L, x\) takes the gradient with respect to a name: x must be a name bound to a "
        "value",
        "grad(L, x) 对一个名字求梯度:x 必须是绑定到某个值的名字",
    ),
    (
        r"grad\(L, x\): x is a constant here, so it has no gradient; use a leaf or a value "
        "computed from one",
        "grad(L, x):这里的 x 是常数,没有梯度;请用叶子节点或由叶子算出的值",
    ),
    # --- lists, shapes, axes, indices ---------------------------------------------------
    ("an empty list has no values", "空列表里没有值"),
    ("the rows of this list have different lengths", "这个列表的各行长度不同"),
    (r"a list can hold only numbers \(or lists of numbers\)", "列表里只能放数(或数的列表)"),
    (r"shapes (?P<listed>.+) do not broadcast", "形状 {listed} 无法广播"),
    (
        r"shapes (?P<a>\([\d, ]*\)) and (?P<b>\([\d, ]*\)) cannot be multiplied with @: (?P<c>\d+) "
        r"columns against "
        r"(?P<r>\d+) rows",
        "形状 {a} 和 {b} 不能用 @ 相乘:{c} 列对 {r} 行",
    ),
    (
        "@ needs tensors, not scalars: use \\* to multiply by a number",
        "@ 需要张量,不能是标量:乘以一个数请用 *",
    ),
    (r"(?P<name>\w+) needs a vector or a tensor, not a scalar", "{name} 需要向量或张量,不能是标量"),
    (r"a shape cannot have negative sizes: (?P<shape>.+)", "形状的大小不能是负数:{shape}"),
    (
        r"cannot reshape (?P<a>.+) \((?P<n>\d+) elements\) into (?P<b>.+)",
        "无法把 {a}({n} 个元素)变形为 {b}",
    ),
    (
        r"(?P<what>.+): axis (?P<a>-?\d+) is out of range for a value with (?P<n>\d+) dims",
        "{what}:轴 {a} 超出了 {n} 维值的范围",
    ),
    (r"(?P<what>.+): an axis is repeated in (?P<axis>.+)", "{what}:{axis} 中有重复的轴"),
    (
        r"transpose: axes (?P<axes>.+) are not a permutation of (?P<n>\d+) dims",
        "transpose:axes {axes} 不是 {n} 个维度的一个排列",
    ),
    (
        r"index (?P<k>-?\d+) is out of range for an axis of length (?P<n>\d+)",
        "下标 {k} 超出了长度为 {n} 的轴的范围",
    ),
    (
        r"too many indices: (?P<k>\d+) for a value of shape (?P<shape>.+)",
        "下标太多:形状为 {shape} 的值用了 {k} 个下标",
    ),
    ("only constant ints and slices can index a value", "只能用常数整数和切片做下标"),
    (
        r"mean over an axis of length 0: there is nothing to average",
        "对长度为 0 的轴求 mean:没有可以平均的数",
    ),
    (r"mse of an empty value: there is nothing to average", "对空值求 mse:没有可以平均的数"),
    (
        r"a value can have at most (?P<n>\d+) dimensions \(NumPy broadcasts no more\); this one "
        r"would have (?P<k>\d+)",
        "一个值最多有 {n} 个维度(NumPy 不能广播更多);这个值会有 {k} 个",
    ),
    # --- class labels -----------------------------------------------------------------
    ("class labels are whole numbers: 0, 1, 2, …", "类别标签是整数:0、1、2、…"),
    (
        r"label (?P<t>-?\d+) is not a class of (?P<c>\d+) \((?P<range>.+)\)",
        "标签 {t} 不是 {c} 个类别之一({range})",
    ),
    (
        r"cross_entropy needs logits of shape \(C,\) or \(N, C\), got (?P<shape>.+)",
        "cross_entropy 需要形状为 (C,) 或 (N, C) 的 logits,得到的是 {shape}",
    ),
    (
        r"cross_entropy needs at least one class: logits of shape (?P<shape>.+) have none",
        "cross_entropy 至少需要一个类别:形状为 {shape} 的 logits 一个也没有",
    ),
    (
        r"cross_entropy with logits of shape (?P<shape>.+) needs one int label",
        "形状为 {shape} 的 logits 的 cross_entropy 需要一个整数标签",
    ),
    (
        r"cross_entropy with logits of shape (?P<shape>.+) needs (?P<n>\d+) int labels, one per "
        "row",
        "形状为 {shape} 的 logits 的 cross_entropy 需要 {n} 个整数标签,每行一个",
    ),
    (
        r"cross_entropy's second argument is the class labels: an int or a list of ints",
        "cross_entropy 的第二个参数是类别标签:一个整数或整数列表",
    ),
    (
        "these are class labels for cross_entropy; they cannot also be used as a value",
        "这些是 cross_entropy 的类别标签;不能同时当作值使用",
    ),
    ("labels can only be given to cross_entropy", "标签只能交给 cross_entropy"),
    ("the output must be a value, not labels", "输出必须是一个值,不能是标签"),
    # --- the values given for free names ------------------------------------------------
    (
        r"a value is given for '(?P<name>.*)', but the program has no free name '(?P=name)' "
        r"\(free names: (?P<t_free>.*)\)",
        "给 '{name}' 提供了值,但程序里没有自由名 '{name}'(自由名:{t_free})",
    ),
    ("none", "无"),
    (
        r"the value for '(?P<name>.*)' is class labels for cross_entropy: a whole number or a list "
        "of whole numbers",
        "'{name}' 的值是 cross_entropy 的类别标签:一个整数或整数列表",
    ),
    (r"the value for '(?P<name>.*)' is an empty list of labels", "'{name}' 的值是一个空的标签列表"),
    (r"the value for '(?P<name>.*)' is not a finite number", "'{name}' 的值不是有限数"),
    (
        r"the value for '(?P<name>.*)' must be a number or a nested list of numbers with rows of "
        "equal length",
        "'{name}' 的值必须是一个数,或各行等长的嵌套数列表",
    ),
    (r"the value for '(?P<name>.*)': (?P<t_why>.+)", "'{name}' 的值:{t_why}"),
)
