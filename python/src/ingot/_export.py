"""torch.export's names over ingot's export core: Dim, export, ExportedProgram, the
program's module(), save and load."""

from __future__ import annotations

import json
import math
from typing import Any, Dict, Mapping, Optional, Sequence

from . import _ingot
from ._tensors import tensors_in, to_numpy, to_tensor


class Dim:
    """A dynamic dimension: Dim("seq", min=1, max=2048). Two uses of one name are one
    symbol (the sizes must be equal). Dim.AUTO lets export infer the dim (dynamic,
    specialised or related); Dim.STATIC keeps the example size."""

    AUTO: "Dim"
    STATIC: "Dim"

    def __init__(self, name: str, *, min: int = 0, max: Optional[int] = None):
        if not isinstance(name, str) or not name:
            raise ValueError(f"[ingot.Dim] the name must be a non-empty string, got {name!r}")
        if max is not None and max < min:
            raise ValueError(f"[ingot.Dim] '{name}': max {max} is below min {min}")
        self.name, self.min, self.max = name, min, max
        self._mode = "named"

    @classmethod
    def _special(cls, mode: str) -> "Dim":
        d = cls.__new__(cls)
        d.name, d.min, d.max, d._mode = None, 0, None, mode
        return d

    def _json(self):
        if self._mode != "named":
            return self._mode
        j = {"name": self.name, "min": self.min}
        if self.max is not None:
            j["max"] = self.max
        return j

    def __repr__(self) -> str:
        if self._mode != "named":
            return f"Dim.{self._mode.upper()}"
        top = "" if self.max is None else f", max={self.max}"
        return f'Dim("{self.name}", min={self.min}{top})'


Dim.AUTO = Dim._special("auto")
Dim.STATIC = Dim._special("static")


def _dims_json(spec, where: str):
    """One input's spec: {dim: Dim} or a sequence with one entry per dim (None = static)."""
    if spec is None:
        return None
    items = spec.items() if isinstance(spec, Mapping) else enumerate(spec)
    out = {}
    for d, dim in items:
        if dim is None:
            continue
        if not isinstance(dim, Dim):
            raise ValueError(
                f"[ingot.export] dynamic_shapes{where}[{d!r}] must be a Dim, Dim.AUTO, Dim.STATIC "
                f"or None, got {dim!r}")
        out[str(int(d))] = dim._json()
    return out


def dynamic_shapes_json(dynamic_shapes, input_names: Sequence[str]) -> str:
    """The spec as the JSON the C++ DynamicShapes::from_json reads (a dict by input name);
    a tuple / list spec follows the model's input order."""
    if dynamic_shapes is None:
        return ""
    if not isinstance(dynamic_shapes, Mapping):
        dynamic_shapes = dict(zip(input_names, dynamic_shapes))
    out = {}
    for name, spec in dynamic_shapes.items():
        j = _dims_json(spec, f"[{name!r}]")
        if j is not None:
            out[name] = j
    return json.dumps(out)


class ValueRange:
    """A symbol's permitted values [lower, upper] (math.inf for an open end)."""

    def __init__(self, lower, upper, backed: bool = True):
        self.lower, self.upper, self.backed = lower, upper, backed

    def __eq__(self, other) -> bool:
        return isinstance(other, ValueRange) and (self.lower, self.upper) == (other.lower, other.upper)

    def __repr__(self) -> str:
        up = "int_oo" if self.upper == math.inf else self.upper
        return f"VR[{self.lower}, {up}]"


class Outputs(dict):
    """A program's user outputs by name; also by attribute (out.logits) like transformers'
    ModelOutput, and by position (out[0])."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, key):
        if isinstance(key, int):
            return list(self.values())[key]
        return dict.__getitem__(self, key)


class Module:
    """An exported program made callable (torch's ep.module()): mod(**inputs) or
    mod(*inputs) in the program's input order. Buffers it mutates persist in it; mutated
    user inputs are written in place. Integer inputs of another width are converted (a
    copy); everything else is passed without a copy."""

    def __init__(self, program: "ExportedProgram"):
        self._program = program
        self._mod = _ingot._ProgramModule(program._ep)
        self._names = list(program._ep.user_input_names)
        self._dtypes = list(program._ep.user_input_dtypes)
        self._outputs = list(program._ep.user_output_names)

    def __call__(self, *args, **kwargs) -> Outputs:
        if len(args) > len(self._names):
            raise ValueError(f"[ingot.Module] {len(args)} positional inputs for {len(self._names)} "
                             f"({', '.join(self._names)})")
        given = dict(zip(self._names, args))
        for name, value in kwargs.items():
            if name not in self._names:
                raise ValueError(f"[ingot.Module] the program takes no input named '{name}' "
                                 f"(inputs: {', '.join(self._names)})")
            if name in given:
                raise ValueError(f"[ingot.Module] input '{name}' given twice")
            given[name] = value
        flat = []
        for name, want in zip(self._names, self._dtypes):
            if name not in given:
                raise ValueError(f"[ingot.Module] missing input '{name}' (inputs: {', '.join(self._names)})")
            flat.append(_cast_int(to_tensor(given[name]), want))
        outs = self._mod.run(flat)
        return Outputs(zip(self._outputs, (to_numpy(t) for t in outs)))

    @property
    def num_plans(self) -> int:
        return self._mod.num_plans

    @property
    def num_planned_runs(self) -> int:
        return self._mod.num_planned_runs

    @property
    def unplannable_reason(self) -> str:
        return self._mod.unplannable_reason

    def buffer(self, name: str):
        return to_numpy(self._mod.buffer(name))


def _cast_int(t, want: str):
    ints = ("int8", "int16", "int32", "int64", "uint8")
    if t.dtype != want and t.dtype in ints and want in ints:
        import numpy as np

        return to_tensor(to_numpy(t).astype(want))
    return t


class ExportedProgram:
    """What export produces (torch.export.ExportedProgram): .graph, .graph_signature,
    .range_constraints, .state_dict (NumPy views of the weights, no copies), .module()."""

    def __init__(self, ep: "_ingot._ExportedProgram"):
        self._ep = ep

    @property
    def graph(self):
        return self._ep.graph

    @property
    def graph_signature(self):
        return self._ep.signature

    signature = graph_signature

    @property
    def range_constraints(self) -> Dict[str, ValueRange]:
        return {k: ValueRange(*v) for k, v in self._ep.range_constraints.items()}

    @property
    def state_dict(self) -> Dict[str, Any]:
        return {k: to_numpy(t) for k, t in self._ep.state.items()}

    @property
    def constants(self) -> Dict[str, Any]:
        return {k: to_numpy(t) for k, t in self._ep.constants.items()}

    @property
    def example_inputs(self):
        return tuple(to_numpy(t) for t in self._ep.example_inputs)

    @property
    def input_names(self):
        return list(self._ep.user_input_names)

    @property
    def output_names(self):
        return list(self._ep.user_output_names)

    @property
    def guards(self):
        return list(self._ep.guards)

    @property
    def ingot_version(self) -> str:
        return self._ep.ingot_version

    def module(self) -> Module:
        return Module(self)

    def verify(self) -> None:
        self._ep.verify()

    def __str__(self) -> str:
        return self._ep.print()

    __repr__ = __str__


def export(model, args: Sequence = (), kwargs: Optional[Mapping] = None, *, dynamic_shapes=None,
           dynamic: bool = False, prefer_deferred_runtime_asserts_over_guards: bool = False
           ) -> ExportedProgram:
    """torch.export.export for a Hugging Face model: traces model.forward on the example
    inputs (args in model.input_names order, kwargs by name) into an ExportedProgram.

    dynamic_shapes: {"input_ids": {0: Dim("batch"), 1: Dim("seq", min=1, max=2048)}} (or
    a tuple / list in input order; a per-input tuple with one entry per dim also works).
    A guard the spec does not imply raises ExportError naming it, its line and the fix."""
    names = list(model.input_names)
    if len(args) > len(names):
        raise ValueError(f"[ingot.export] {len(args)} positional inputs; {model.architecture} takes "
                         f"{', '.join(names)}")
    inputs = dict(zip(names, args))
    for k, v in (kwargs or {}).items():
        if k in inputs:
            raise ValueError(f"[ingot.export] input '{k}' given twice")
        inputs[k] = v
    spec = dynamic_shapes_json(dynamic_shapes, names)
    ep = _ingot.export(model._model, tensors_in(inputs), spec, dynamic,
                       prefer_deferred_runtime_asserts_over_guards)
    return ExportedProgram(ep)


def save(program: ExportedProgram, path) -> None:
    """Writes an .ingot archive (torch.export.save)."""
    _ingot.save(program._ep, str(path))


def load(path) -> ExportedProgram:
    """Reads an .ingot archive (torch.export.load); the weights are mapped, not copied."""
    return ExportedProgram(_ingot.load(str(path)))
