# source: TensorFlow guide, "Introduction to gradients and automatic differentiation"
# url: https://www.tensorflow.org/guide/autodiff
# section: "Gradients of non-scalar targets" (a vector target: the gradient of its sum)
# prints: 7.0
import tensorflow as tf

x = tf.Variable(2.)

with tf.GradientTape() as tape:
  y = x * [3., 4.]

print(tape.gradient(y, x).numpy())
