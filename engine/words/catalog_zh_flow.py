"""The Chinese of the messages about functions, control flow, backward and print (issue 14):
def and lambda, grad(f), if/while/for and their conditions, unpacking, `+=`, L.backward(),
x.grad, print, item(), NumPy's generators, and the did-you-mean warning. Rules of the same form
as engine/words/catalog_zh.py's (read its docstring), tried after engine/words/catalog_zh.py's
and catalog_zh_names.py's by engine/words/messages.py.

A message that quotes PyTorch's or JAX's own error keeps that quote in English: it is the text
a student will meet (and search for) when the same code runs in PyTorch or JAX.
"""

from __future__ import annotations

FLOW_RULES: tuple[tuple[str, str], ...] = (
    # --- the did-you-mean warning (engine/language/name_warnings.py) ------------------------
    (
        r"'(?P<name>.*)' is never assigned; did you mean '(?P<word>.*)'\?",
        "'{name}' 从未被赋值;你是不是想写 '{word}'?",
    ),
    # --- def, lambda and their calls (parse_functions.py, run_functions.py) ------------------
    (
        r"a function's arguments must be plain names \(no \*args, \*\*kwargs, / or \*\)",
        "函数的参数必须是普通的名字(不能有 *args、**kwargs、/ 或 *)",
    ),
    ("decorators are not part of the language", "装饰器不是本语言的一部分"),
    (r"(?P<name>\w+) has no statements", "{name} 里没有语句"),
    (r"the argument '(?P<name>.*)' is named twice", "参数 '{name}' 的名字出现了两次"),
    (
        r"a lambda can only be named \(f = lambda x: …\), called, or passed to grad",
        "lambda 只能被命名(f = lambda x: …)、被调用,或交给 grad",
    ),
    (
        r"(?P<f>\w+)\(\) takes (?P<n>\d+) arguments? but (?P<k>\d+) (?:were|was) given",
        "{f}() 接受 {n} 个参数,但给了 {k} 个",
    ),
    (r"(?P<f>\w+)\(\) got two values for '(?P<k>.*)'", "{f}() 的参数 '{k}' 得到了两个值"),
    (r"(?P<f>\w+)\(\) has no argument '(?P<k>.*)'", "{f}() 没有参数 '{k}'"),
    (r"(?P<f>\w+)\(\) is missing its argument '(?P<k>.*)'", "{f}() 缺少参数 '{k}'"),
    (r"(?P<f>\w+) calls itself; recursion is not supported", "{f} 调用了它自己;不支持递归"),
    # "f calls g, which calls h, which calls f again": each link a fragment
    (r"(?P<t_chain>.+) again; recursion is not supported", "{t_chain};不支持递归"),
    (r"(?P<a>\w+) calls (?P<t_rest>\w+, which calls .+)", "{a} 调用了 {t_rest}"),
    (r"(?P<b>\w+), which calls (?P<t_rest>.+)", "{b},{b} 又调用了 {t_rest}"),
    ("recursion is not supported", "不支持递归"),
    (
        r"(?P<t_what>.+) is None: the function returns nothing",
        "{t_what}是 None:这个函数什么也没有返回",
    ),
    (
        r"(?P<t_what>.+) is the function (?P<name>.+): call it, as in (?P<call>.+)",
        "{t_what}是函数 {name}:要调用它,例如 {call}",
    ),
    (r"(?P<t_what>.+) is (?P<t_desc>.+), not a value", "{t_what}是{t_desc},不是一个值"),
    (r"(?P<t_what>.+) is not a function", "{t_what}不是函数"),
    # --- grad(f) (parse_functions.py, run_functions.py) --------------------------------------
    (
        r"grad\(f\) takes a function: the name of a def, a lambda, grad\(g\) or a function of "
        r"one value such as tanh",
        "grad(f) 接受一个函数:一个 def 的名字、一个 lambda、grad(g),或 tanh 这样只接受一个值的函数",
    ),
    (
        r"grad\(f\) differentiates with respect to f's first argument; the keyword (?P<kw>\w+) "
        "is not supported",
        "grad(f) 对 f 的第一个参数求导;不支持关键字参数 {kw}",
    ),
    (
        r"grad\(f\) is a function: call it, as in grad\(f\)\(x\)",
        "grad(f) 是一个函数:要调用它,例如 grad(f)(x)",
    ),
    (r"(?P<fn>.+) needs the value to differentiate at", "{fn} 需要给出求导处的值"),
    (
        r"grad\(f\)\(x\) differentiates at a value, not (?P<t_what>.+)",
        "grad(f)(x) 要在一个值处求导,不能是{t_what}",
    ),
    (
        r"grad\(f\) needs f to give one number, but it gives shape (?P<shape>\(.*?\)) \(JAX: "
        r"(?P<quote>Gradient only defined for scalar-output functions)\)",
        "grad(f) 需要 f 给出一个数,但它给出的形状是 {shape}(JAX:{quote})",
    ),
    # --- conditions, loops, unpacking, assignment (parse_flow.py, run_flow.py) ---------------
    (
        r"a comparison can only be a condition \(if …:, while …:, a if … else b\) or shown "
        r"\(print\(a == b\), or the program's last line\), not a value to compute with",
        "比较只能用作条件(if …:、while …:、a if … else b)或用来显示(print(a == b),"
        "或程序的最后一行),不能当作参与计算的值",
    ),
    (
        r"only < > <= >= == != compare values here \(not in, is, …\)",
        "这里只能用 < > <= >= == != 比较值(不能用 in、is 等)",
    ),
    (
        r"a condition needs one number, but this is a tensor of shape (?P<shape>\(.*?\)) "
        r"\(PyTorch: (?P<quote>Boolean value of Tensor with more than one value is ambiguous)\); "
        r"compare one element, or use \.sum\(\) or \.max\(\)",
        "条件需要一个数,但这是一个形状为 {shape} 的张量(PyTorch:{quote});"
        "请比较其中一个元素,或用 .sum() 或 .max()",
    ),
    (r"a condition needs a number, not (?P<t_what>.+)", "条件需要一个数,不能是{t_what}"),
    (
        r"cannot compare values of shapes (?P<listed>.+): they do not broadcast",
        "无法比较形状为 {listed} 的值:它们无法广播",
    ),
    (r"(?P<t_what>.+) cannot be compared here", "{t_what}在这里不能比较"),
    ("a while loop cannot have an else block", "while 循环不能带 else 块"),
    (r"a 0-d tensor \(one number\) cannot be looped over", "0 维张量(一个数)不能用来循环"),
    (r"(?P<t_what>.+) cannot be looped over", "{t_what}不能用来循环"),
    (
        r"(?P<name>zip|enumerate)\(…\) can only be looped over: for … in (?P=name)\(…\):",
        "{name}(…) 只能用来循环:for … in {name}(…):",
    ),
    (r"(?P<f>\w+)\(…\) takes other arguments here", "{f}(…) 在这里不接受这些参数"),
    (
        r"sum of a list takes the list and a start: sum\(xs, start\)",
        "对列表求 sum 接受列表和一个起始值:sum(xs, start)",
    ),
    (
        r"(?P<n>\d+) values cannot be unpacked into (?P<k>\d+) names",
        "{n} 个值不能拆分给 {k} 个名字",
    ),
    (
        r"only names can be assigned: name = …, or a, b = …",
        "只能给名字赋值:name = …,或 a, b = …",
    ),
    (
        r"only x \+= e, x -= e, x \*= e and x /= e, on a name, are part of the language",
        "本语言只支持对一个名字写 x += e、x -= e、x *= e 和 x /= e",
    ),
    (
        r"assigning to an index \(x\[i\] = …\) is not part of the language: values are never "
        r"changed in place; build a new one \(cat, stack, or arithmetic\)",
        "给下标赋值(x[i] = …)不是本语言的一部分:值从不就地修改;"
        "请构造一个新的值(用 cat、stack 或算术运算)",
    ),
    (
        r"assigning to an attribute \(x\.grad = …\) is not part of the language; only "
        r"x\.requires_grad = True",
        "给属性赋值(x.grad = …)不是本语言的一部分;只能写 x.requires_grad = True",
    ),
    (
        r"only x\.requires_grad = True is supported: a tensor without it is already a constant",
        "只支持 x.requires_grad = True:没有它的张量本来就是常数",
    ),
    (
        r"write name\.requires_grad = True for a named tensor",
        "请对一个有名字的张量写 name.requires_grad = True",
    ),
    (
        r"'(?P<name>.*)' is used before it is assigned in (?P<f>\w+) \(a name a function "
        r"assigns is its own; the program's names are read-only inside\)",
        "'{name}' 在 {f} 里赋值之前就被使用了"
        "(函数里赋值的名字属于函数自己;程序的名字在函数里只能读)",
    ),
    (
        r"'(?P<name>.*)' names a function in this program; choose another name for this value",
        "'{name}' 是这个程序里一个函数的名字;请给这个值换一个名字",
    ),
    (
        r"'(?P<name>.*)' is a name inside a function; it does not exist outside it",
        "'{name}' 是函数内部的名字;在函数外面不存在",
    ),
    # --- backward, x.grad, print, item (parse_functions.py, run_shown.py) --------------------
    (
        r"backward\(\) is a statement of its own: L\.backward\(\)",
        "backward() 要单独写成一条语句:L.backward()",
    ),
    (
        r"backward\(\) has no keyword '(?P<kw>.*)'; it takes gradient=v",
        "backward() 没有关键字参数 '{kw}';它只接受 gradient=v",
    ),
    (
        r"backward takes one seed: L\.backward\(gradient=v\)",
        "backward 只接受一个初始梯度:L.backward(gradient=v)",
    ),
    ("the seed is given twice", "初始梯度给了两次"),
    (
        r"backward\(gradient=v\) needs v of (?P<name>.+)'s shape (?P<s1>\(.*?\)), but v has "
        r"shape (?P<s2>\(.*\))",
        "backward(gradient=v) 需要 v 的形状与 {name} 相同,即 {s1},但 v 的形状是 {s2}",
    ),
    (
        r"(?P<name>.+)\.backward\(\) needs (?P=name) to be one number, but its shape is "
        r"(?P<shape>\(.*?\)) \(PyTorch: (?P<quote>grad can be implicitly created only for scalar "
        r"outputs)\); use (?P=name)\.sum\(\)\.backward\(\) or (?P=name)\.backward\(gradient=v\)",
        "{name}.backward() 需要 {name} 是一个数,但它的形状是 {shape}(PyTorch:{quote});"
        "请用 {name}.sum().backward() 或 {name}.backward(gradient=v)",
    ),
    (
        r"(?P<name>.+) depends on no parameter, so backward\(\) has nothing to find \(PyTorch: "
        r"(?P<quote>element 0 of tensors does not require grad)\)",
        "{name} 不依赖任何参数,所以 backward() 没有梯度可求(PyTorch:{quote})",
    ),
    (
        r"x\.grad can only be printed \(print\(x\.grad\)\): the gradients are found after the "
        r"program has run; to compute with one, use grad\(L, x\)",
        "x.grad 只能被打印(print(x.grad)):梯度要等程序运行完才求出;要用它来计算,请用 grad(L, x)",
    ),
    ("print takes values and strings only", "print 只接受值和字符串"),
    (r"\.(?P<m>\w+)\(\) takes no arguments", ".{m}() 不接受参数"),
    (
        r"item\(\) needs a tensor of one element, but this one has shape (?P<shape>\(.*?\)) "
        r"\(PyTorch: (?P<quote>a Tensor with (?P<n>\d+) elements cannot be converted to "
        r"Scalar)\)",
        "item() 需要只有一个元素的张量,但这个的形状是 {shape}(PyTorch:{quote})",
    ),
    (r"item\(\) needs a tensor, not (?P<t_what>.+)", "item() 需要一个张量,不能是{t_what}"),
    (
        r"… \(the printed output is cut at (?P<n>[\d,]+) characters, (?P<s>max_print_chars)\)",
        "…(打印的输出在 {n} 个字符处截断,{s})",
    ),
    # --- NumPy's generators, PyTorch's defaults and constructors (random_spelling.py,
    # spelling_more.py) ------------------------------------------------------------------
    (r"(?P<draw>\w+)'s (?P<param>\w+) is a number", "{draw} 的 {param} 必须是一个数"),
    (
        r"'(?P<name>\w+)' is NumPy's random generator, not a value: draw from it, as in "
        r"(?P<call>\S+)",
        "'{name}' 是 NumPy 的随机数生成器,不是一个值:请从它抽样,例如 {call}",
    ),
    (
        r"name the generator: rng = np\.random\.default_rng\(0\)",
        "请给生成器起个名字:rng = np.random.default_rng(0)",
    ),
    (
        r"default_rng takes one seed, a whole number: np\.random\.default_rng\(0\) \(gradtrace's "
        r"numbers are the same on every run\)",
        "default_rng 接受一个种子,一个整数:np.random.default_rng(0)"
        "(gradtrace 每次运行得到的数都一样)",
    ),
    (
        r"one random generator per program: draw from (?P<name>\w+), or seed it again under the "
        "same name",
        "每个程序只能有一个随机数生成器:请从 {name} 抽样,或用同一个名字重新设定种子",
    ),
    (
        r"make the generator on its own line, then draw from it: (?P<code>.+)",
        "请在单独的一行创建生成器,再从它抽样:{code}",
    ),
    (
        r"(?P<path>\w+\.\w+) is not supported; the draws that work are: (?P<listed>.+)",
        "不支持 {path};可用的抽样有:{listed}",
    ),
    (
        r"(?P<f>\w+) takes (?P<names>\w+(?:, \w+)*); (?P<kw>\w+) is given twice",
        "{f} 接受 {names};{kw} 给了两次",
    ),
    (
        r"(?P<f>\w+) takes (?P<names>\w+(?:, \w+)*); (?P<kw>\w+) is not one of them",
        "{f} 接受 {names};{kw} 不是其中之一",
    ),
    (
        r"(?P<f>\w+) takes (?P<names>\w+(?:, \w+)*), in order or by name",
        "{f} 接受 {names},按顺序或按名字给出",
    ),
    (r"(?P<f>\w+) takes (?P<names>\w+(?:, \w+)+)", "{f} 接受 {names}"),
    (r"(?P<kw>\w+) is given twice", "{kw} 给了两次"),
    (
        r"gradtrace computes in float64: torch\.set_default_dtype\(torch\.float64\) is the only "
        "default it accepts",
        "gradtrace 用 float64 计算:只接受 torch.set_default_dtype(torch.float64) 这一个默认类型",
    ),
    (
        r"torch\.Tensor\(n\) makes n uninitialised numbers; write torch\.Tensor\(\[n\]\) or "
        r"torch\.tensor\(n\) for a tensor holding n",
        "torch.Tensor(n) 会产生 n 个未初始化的数;要得到存放 n 的张量,"
        "请写 torch.Tensor([n]) 或 torch.tensor(n)",
    ),
    (
        r"a whole number is needed here, not a fraction: (?P<expr>.+) is (?P<value>\S+)",
        "这里需要整数,不能是小数:{expr} 是 {value}",
    ),
    (r"(?P<expr>.+) does not give a finite number", "{expr} 给出的不是有限数"),
    (
        r"tensor\(…\) takes numbers, a list of them, or one NumPy draw or constructor as it is "
        r"\((?P<examples>.+)\); not a computed value",
        "tensor(…) 接受数、数的列表,或原样的一个 NumPy 抽样或构造函数({examples});"
        "不能是计算出来的值",
    ),
    ("an empty list of labels", "标签列表是空的"),
    (
        r"a value can have at most (?P<n>\d+) dimensions \(NumPy broadcasts no more\); this list "
        "nests deeper",
        "一个值最多有 {n} 个维度(NumPy 不能广播更多);这个列表嵌套得更深",
    ),
    # describe(v) of engine/language/runtime.py: fragments of the messages above, last so that
    # a whole message is matched first
    (r"the function (?P<name>\S+)", "函数 {name}"),
    (r"the number (?P<n>\S+)", "数 {n}"),
    ("True or False", "True 或 False"),
    ("not a value", "不是值的东西"),
)
