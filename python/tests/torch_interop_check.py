"""Run by test_torch_interop.py with the reference venv's Python (torch), with the ingot
package of the test venv on sys.path: torch tensors in and out of ingot without copies."""

import sys

import numpy as np
import torch

import ingot

# In: a torch tensor is wrapped through DLPack, sharing its memory.
t = torch.arange(12, dtype=torch.int64).reshape(3, 4)
it = ingot.as_tensor(t)
assert it.data_ptr == t.data_ptr(), "int64 torch tensor was copied"
# Out: torch.from_dlpack of the NumPy view shares the same memory.
back = torch.from_dlpack(ingot.to_numpy(it))
assert back.data_ptr() == t.data_ptr() and torch.equal(back, t)
# bfloat16: the same bits, no copy.
b = torch.tensor([1.0, -2.5, 3.0], dtype=torch.bfloat16)
ib = ingot.as_tensor(b)
assert ib.dtype == "bfloat16" and ib.data_ptr == b.data_ptr(), "bf16 torch tensor was copied"
bits = ingot.to_numpy(ib).view(np.uint16)
assert np.array_equal(bits, b.view(torch.int16).numpy().view(np.uint16))
# A program run on torch inputs equals the run on NumPy inputs.
model = ingot.from_pretrained(sys.argv[1])
ids = torch.tensor([[3, 1, 4, 1, 5]], dtype=torch.int64)
ep = ingot.export(model, kwargs={"input_ids": ids})
out = torch.from_dlpack(ep.module()(input_ids=ids).logits)
ref = ep.module()(input_ids=ids.numpy()).logits
assert np.array_equal(out.numpy(), ref)
print("torch interop OK")
