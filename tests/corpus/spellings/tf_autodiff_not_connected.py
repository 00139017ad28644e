# source: TensorFlow guide, "Introduction to gradients and automatic differentiation"
# url: https://www.tensorflow.org/guide/autodiff
# section: "Cases where gradient returns None" (the target is not connected to the source)
# prints: None
import tensorflow as tf

x = tf.Variable(2.)
y = tf.Variable(3.)

with tf.GradientTape() as tape:
  z = y * y
dy_dx = tape.gradient(z, x)
print(dy_dx)
