# source: Alexis Bouchez, hypercode, "microgpt" course, lesson 16 of 17, "Training Loop"
# url: https://hypercode.alexisbouchez.com/microgpt/lessons/training-loop
# section: "Gradient Descent Update" (sgd_step) and "Example: Learning a Single Scalar"
#   (micrograd's Value: a number with .data and .grad, the course's own class)
# prints: nothing; w goes from 0 to 1 (w − 1 is multiplied by 0.1 at each of the 20 steps)
def sgd_step(params, lr):
    for p in params:
        p.data -= lr * p.grad
        p.grad = 0

w = Value(0.0)
for step in range(20):
    pred = w * Value(3.0)
    loss = (pred - Value(3.0)) ** 2
    loss.backward()
    sgd_step([w], lr=0.05)
