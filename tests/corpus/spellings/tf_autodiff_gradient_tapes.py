# source: TensorFlow guide, "Introduction to gradients and automatic differentiation"
# url: https://www.tensorflow.org/guide/autodiff
# section: "Gradient tapes" (the first example)
# prints: 6.0
import tensorflow as tf

x = tf.Variable(3.0)

with tf.GradientTape() as tape:
  y = x**2

# dy = 2x * dx
dy_dx = tape.gradient(y, x)
print(dy_dx.numpy())
