# source: TensorFlow guide, "Advanced automatic differentiation"
# url: https://www.tensorflow.org/guide/advanced_autodiff
# section: "Controlling gradient recording" (stop_gradient)
# prints: dz/dx: tf.Tensor(4.0, shape=(), dtype=float32), dz/dy: None
import tensorflow as tf

x = tf.Variable(2.0)
y = tf.Variable(3.0)

with tf.GradientTape() as t:
  y_sq = y**2
  z = x**2 + tf.stop_gradient(y_sq)

grad = t.gradient(z, {'x': x, 'y': y})

print('dz/dx:', grad['x'])  # 2*x => 4
print('dz/dy:', grad['y'])
