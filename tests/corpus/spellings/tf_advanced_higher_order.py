# source: TensorFlow guide, "Advanced automatic differentiation"
# url: https://www.tensorflow.org/guide/advanced_autodiff
# section: "Higher-order gradients"
# prints: dy_dx: 3.0, d2y_dx2: 6.0
import tensorflow as tf

x = tf.Variable(1.0)  # Create a Tensorflow variable initialized to 1.0

with tf.GradientTape() as t2:
  with tf.GradientTape() as t1:
    y = x * x * x

  # Compute the gradient inside the outer `t2` context manager
  # which means the gradient computation is differentiable as well.
  dy_dx = t1.gradient(y, x)
d2y_dx2 = t2.gradient(dy_dx, x)

print('dy_dx:', dy_dx.numpy())  # 3 * x**2 => 3.0
print('d2y_dx2:', d2y_dx2.numpy())  # 6 * x => 6.0
