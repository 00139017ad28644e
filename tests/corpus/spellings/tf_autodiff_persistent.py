# source: TensorFlow guide, "Introduction to gradients and automatic differentiation"
# url: https://www.tensorflow.org/guide/autodiff
# section: "Intermediate results" (a persistent tape)
# prints: [  4. 108.], [2. 6.]
import tensorflow as tf

x = tf.constant([1, 3.0])
with tf.GradientTape(persistent=True) as tape:
  tape.watch(x)
  y = x * x
  z = y * y

print(tape.gradient(z, x).numpy())  # [4.0, 108.0] (4 * x**3 at x = [1.0, 3.0])
print(tape.gradient(y, x).numpy())  # [2.0, 6.0] (2 * x at x = [1.0, 3.0])
