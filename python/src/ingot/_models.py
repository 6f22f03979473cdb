"""Hugging Face models (ingot.from_pretrained) and the tokenizer."""

from __future__ import annotations

import os
from typing import Optional

from . import _ingot
from ._export import Outputs
from ._tensors import tensors_in, tensors_out

Tokenizer = _ingot.Tokenizer


class PretrainedModel:
    """A model loaded from a Hugging Face folder (config.json + safetensors; weights mapped
    without copies when stored in the compute dtype). model(**inputs) runs the eager
    forward; ingot.export(model, ...) traces it."""

    def __init__(self, model: "_ingot._Model"):
        self._model = model

    @property
    def architecture(self) -> str:
        return self._model.architecture

    @property
    def dtype(self) -> str:
        return self._model.dtype

    @property
    def input_names(self):
        return list(self._model.input_names)

    @property
    def folder(self) -> str:
        return self._model.folder

    def __call__(self, **inputs) -> Outputs:
        return Outputs(tensors_out(self._model.forward(tensors_in(inputs))))

    def __repr__(self) -> str:
        return f"PretrainedModel({self.architecture}, dtype={self.dtype}, folder={self.folder!r})"


def from_pretrained(folder, dtype: Optional[str] = None) -> PretrainedModel:
    """AutoModel.from_pretrained for a local folder; dtype "float32" (default) or "bfloat16"."""
    return PretrainedModel(_ingot.from_pretrained(os.fspath(folder), dtype))
