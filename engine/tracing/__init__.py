"""The trace: what backward() did, step by step, recorded and made JSON."""
