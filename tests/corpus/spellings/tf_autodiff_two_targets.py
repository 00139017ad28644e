# source: TensorFlow guide, "Introduction to gradients and automatic differentiation"
# url: https://www.tensorflow.org/guide/autodiff
# section: "Gradients of non-scalar targets" (two targets of one persistent tape)
# prints: 4.0, -0.25
import tensorflow as tf

x = tf.Variable(2.0)
with tf.GradientTape(persistent=True) as tape:
  y0 = x**2
  y1 = 1 / x

print(tape.gradient(y0, x).numpy())
print(tape.gradient(y1, x).numpy())
