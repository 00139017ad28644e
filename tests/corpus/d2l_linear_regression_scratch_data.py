# source: Dive into Deep Learning (d2l.ai, v0.17), 3.2 "Linear Regression Implementation from
#   Scratch" (chapter_linear-networks/linear-regression-scratch.md, the PyTorch tab)
# url: https://classic.d2l.ai/chapter_linear-networks/linear-regression-scratch.html
# section: 3.2.1 to 3.2.7 with the data written out: 20 examples, the first that
#   synthetic_data(true_w, true_b, 1000) draws after torch.manual_seed(0), to 4 decimals, and
#   w's torch.normal(0, 0.01, (2, 1)) draw after them; data_iter reads its minibatches in
#   order into a list (no random.shuffle, no yield); d2l.matmul, d2l.reshape(y, s) and
#   d2l.tensor written as torch.matmul, y.reshape(s) and torch.tensor, as d2l's PyTorch
#   pages show them; the scatter plot left out
# prints: features[0] and labels[0], the first minibatch, "epoch 1, loss 15.687058" …, and
#   the errors in estimating w and b (what torch prints for these numbers)
import torch

true_w = torch.tensor([2, -3.4])
true_b = 4.2
features = torch.tensor([[-1.1258, -1.1524], [-0.2506, -0.4339], [0.8487, 0.6920],
                         [-0.3160, -2.1152], [0.3223, -1.2633], [0.3500, 0.3081],
                         [0.1198, 1.2377], [1.1168, -0.2473], [-1.3527, -1.6959],
                         [0.5667, 0.7935], [0.5988, -1.5551], [-0.3414, 1.8530],
                         [-0.2159, -0.7425], [0.5627, 0.2596], [-0.1740, -0.6787],
                         [0.9383, 0.4889], [1.2032, 0.0845], [-1.2001, -0.0048],
                         [-0.5181, -0.3067], [-1.5810, 1.7066]])
labels = torch.tensor([[5.8684], [5.1695], [3.5389], [10.7542], [9.1286], [3.8491], [0.2207],
                       [7.2734], [7.2599], [2.6422], [10.6766], [-2.7829], [6.2854], [4.4446],
                       [6.1660], [4.4207], [6.3166], [1.8390], [4.1878], [-4.7651]])

print('features:', features[0],'\nlabel:', labels[0])

def data_iter(batch_size, features, labels):
    num_examples = len(features)
    indices = list(range(num_examples))
    batches = []
    for i in range(0, num_examples, batch_size):
        batch_indices = torch.tensor(
            indices[i: min(i + batch_size, num_examples)])
        batches.append((features[batch_indices], labels[batch_indices]))
    return batches

batch_size = 10

for X, y in data_iter(batch_size, features, labels):
    print(X, '\n', y)
    break

w = torch.tensor([[0.0019], [-0.0022]], requires_grad=True)
b = torch.zeros(1, requires_grad=True)

def linreg(X, w, b):  #@save
    """The linear regression model."""
    return torch.matmul(X, w) + b

def squared_loss(y_hat, y):  #@save
    """Squared loss."""
    return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2

def sgd(params, lr, batch_size):  #@save
    """Minibatch stochastic gradient descent."""
    with torch.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()

lr = 0.03
num_epochs = 3
net = linreg
loss = squared_loss

for epoch in range(num_epochs):
    for X, y in data_iter(batch_size, features, labels):
        l = loss(net(X, w, b), y)  # Minibatch loss in `X` and `y`
        # Compute gradient on `l` with respect to [`w`, `b`]
        l.sum().backward()
        sgd([w, b], lr, batch_size)  # Update parameters using their gradient
    with torch.no_grad():
        train_l = loss(net(features, w, b), labels)
        print(f'epoch {epoch + 1}, loss {float(train_l.mean()):f}')

print(f'error in estimating w: {true_w - w.reshape(true_w.shape)}')
print(f'error in estimating b: {true_b - b}')
