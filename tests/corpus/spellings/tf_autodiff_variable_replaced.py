# source: TensorFlow guide, "Introduction to gradients and automatic differentiation"
# url: https://www.tensorflow.org/guide/autodiff
# section: "Cases where gradient returns None" (a variable replaced with a tensor)
# prints: ResourceVariable : tf.Tensor(1.0, shape=(), dtype=float32), EagerTensor : None
import tensorflow as tf

x = tf.Variable(2.0)

for epoch in range(2):
  with tf.GradientTape() as tape:
    y = x+1

  print(type(x).__name__, ":", tape.gradient(y, x))
  x = x + 1   # This should be `x.assign_add(1)`
