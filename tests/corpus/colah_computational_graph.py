# source: Christopher Olah, "Calculus on Computational Graphs: Backpropagation" (2015)
# url: https://colah.github.io/posts/2015-08-Backprop/
# section: "Computational Graphs" and "Derivatives on Computational Graphs": e = (a+b)*(b+1)
# prints: (in the figures) at a = 2, b = 1: c = 3, d = 2, e = 6; de/da = 2, de/db = 5
a = 2
b = 1
c = a + b
d = b + 1
e = c * d
