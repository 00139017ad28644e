# source: CS231n (Stanford), "Putting it together: Minimal Neural Network Case Study"
# url: https://cs231n.github.io/neural-networks-case-study/
# section: "Computing the Loss" (the softmax classifier's loss, as the notes write it)
# prints: the notes print the loss of random data (about 1.0986 at the start); here the data
#   are 3 points, 2 features, 3 classes, written out, and the numbers are PyTorch's:
#   loss = 1.38215, with W's and b's gradients checked in tests/test_corpus.py
import numpy as np
X = [[1.0, 2.0], [-1.0, 0.5], [0.3, -0.7]]
y = [0, 2, 1]
W = [[0.1, -0.2, 0.3], [0.05, 0.4, -0.1]]
b = [[0.0, 0.1, -0.1]]
reg = 1e-3
# compute class scores for a linear classifier
scores = np.dot(X, W) + b
num_examples = X.shape[0]
# get unnormalized probabilities
exp_scores = np.exp(scores)
# normalize them for each example
probs = exp_scores / np.sum(exp_scores, axis=1, keepdims=True)
correct_logprobs = -np.log(probs[range(num_examples),y])
# compute the loss: average cross-entropy loss and regularization
data_loss = np.sum(correct_logprobs)/num_examples
reg_loss = 0.5*reg*np.sum(W*W)
loss = data_loss + reg_loss
