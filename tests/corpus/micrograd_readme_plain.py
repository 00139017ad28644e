# source: Andrej Karpathy, micrograd, README "Example usage", with `Value(…)` written as the
#   numbers it wraps (the language's leaves) and without the prints
# url: https://github.com/karpathy/micrograd
# section: "Example usage"
# prints: 24.7041 (g), 138.8338 (dg/da), 645.5773 (dg/db)
a = -4.0
b = 2.0
c = a + b
d = a * b + b**3
c += c + 1
c += 1 + c + (-a)
d += d * 2 + (b + a).relu()
d += 3 * d + (b - a).relu()
e = c - d
f = e**2
g = f / 2.0
g += 10.0 / f
