"""ingot: a C++20 model-export stack, from Python (docs/python.md).

    import ingot
    model = ingot.from_pretrained("assets/demo-lm")
    ep = ingot.export(model, kwargs={"input_ids": ids},
                      dynamic_shapes={"input_ids": {1: ingot.Dim("seq", min=1, max=256)}})
    print(ep)
    logits = ep.module()(input_ids=ids).logits
"""

from . import _ingot
from ._export import Dim, ExportedProgram, Module, Outputs, ValueRange, export, load, save
from ._generation import GenerationOutput, Generator, generate
from ._models import PretrainedModel, Tokenizer, from_pretrained
from ._tensors import to_numpy, to_tensor as as_tensor
from . import exporters

__version__ = _ingot.__version__
ExportError = _ingot.ExportError
Tensor = _ingot._Tensor

__all__ = [
    "Dim", "ExportError", "ExportedProgram", "GenerationOutput", "Generator", "Module", "Outputs",
    "PretrainedModel", "Tensor", "Tokenizer", "ValueRange", "as_tensor", "export", "exporters",
    "from_pretrained", "generate", "load", "save", "to_numpy", "__version__",
]
