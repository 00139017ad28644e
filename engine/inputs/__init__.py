"""What a request gives a program besides its text: the values of its free names.

valuespec    the `x=2,y=3` text of the form, the address and the CLI (a JSON object for tensors)
given        each free name's value or class labels, checked against the limits
"""
