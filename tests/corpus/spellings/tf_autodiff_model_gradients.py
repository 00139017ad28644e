# source: TensorFlow guide, "Introduction to gradients and automatic differentiation"
# url: https://www.tensorflow.org/guide/autodiff
# section: "Computing gradients" (w drawn by tf.random.normal there; written out here)
# prints: (3, 2), (3, 2); dl_dw = [[22, 28], [44, 56], [66, 84]] for this w
import tensorflow as tf

w = tf.Variable([[1., 2.], [3., 4.], [5., 6.]], name='w')
b = tf.Variable(tf.zeros(2, dtype=tf.float32), name='b')
x = [[1., 2., 3.]]

with tf.GradientTape(persistent=True) as tape:
  y = x @ w + b
  loss = tf.reduce_mean(y**2)

[dl_dw, dl_db] = tape.gradient(loss, [w, b])

print(w.shape)
print(dl_dw.shape)
