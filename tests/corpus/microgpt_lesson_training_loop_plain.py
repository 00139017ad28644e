# source: Alexis Bouchez, hypercode, "microgpt" course, lesson 16 of 17, "Training Loop"
# url: https://hypercode.alexisbouchez.com/microgpt/lessons/training-loop
# section: "Gradient Descent Update" (sgd_step) and "Example: Learning a Single Scalar", with
#   each `Value(…)` written as the number it wraps (the language's own leaves)
# prints: nothing; w goes from 0 to 1 (w − 1 is multiplied by 0.1 at each of the 20 steps)
def sgd_step(params, lr):
    for p in params:
        p.data -= lr * p.grad
        p.grad = 0

w = 0.0
for step in range(20):
    pred = w * 3.0
    loss = (pred - 3.0) ** 2
    loss.backward()
    sgd_step([w], lr=0.05)
