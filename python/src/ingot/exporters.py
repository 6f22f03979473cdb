"""transformers.exporters' names over ingot's exporter framework.

    config = AutoExportConfig.from_dict({"export_format": "onnx", "dynamic": True})
    exporter = AutoExporter.from_config(config)          # an OnnxExporter
    artifact = exporter.export(model, inputs, config=config)
    artifact.save("model.onnx")
    components = NativeExporter().export_for_generation(model, max_cache_len=256)
    components.save("gen-dir")                            # then ingot.Generator("gen-dir")

Configs hold the C++ config; their fields are read and set as attributes (the keys of
the config JSON, docs/exporters.md). Unknown keys and bad values raise ValueError
naming them, as the C++ reader does.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Mapping, Optional

from . import _ingot
from ._export import ExportedProgram, dynamic_shapes_json
from ._tensors import tensors_in


class ExportConfig:
    """Base of the configs: NativeExportConfig, OnnxConfig, OpenVINOConfig, ExecutorchConfig."""

    export_format = "native"

    def __init__(self, **fields):
        fields = dict(fields)
        if "dynamic_shapes" in fields and not isinstance(fields["dynamic_shapes"], (str, type(None))):
            spec = dynamic_shapes_json(fields["dynamic_shapes"], [])
            fields["dynamic_shapes"] = json.loads(spec) if spec else None
        fields.setdefault("export_format", type(self).export_format)
        object.__setattr__(self, "_c", _ingot._Config.from_json(json.dumps(fields), type(self).__name__))

    @classmethod
    def _wrap(cls, c) -> "ExportConfig":
        sub = _CONFIG_CLASSES.get(c.export_format, ExportConfig)
        obj = sub.__new__(sub)
        object.__setattr__(obj, "_c", c)
        return obj

    def to_dict(self) -> Dict[str, Any]:
        return json.loads(self._c.to_json())

    def __getattr__(self, name):
        d = json.loads(object.__getattribute__(self, "_c").to_json())
        if name in d:
            return d[name]
        raise AttributeError(f"{type(self).__name__} has no field '{name}' (fields: {', '.join(d)})")

    def __setattr__(self, name, value):
        d = self.to_dict()
        d[name] = value
        object.__setattr__(self, "_c", _ingot._Config.from_json(json.dumps(d), type(self).__name__))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._c.to_json()})"


class NativeExportConfig(ExportConfig):
    export_format = "native"


class OnnxConfig(ExportConfig):
    export_format = "onnx"


class OpenVINOConfig(ExportConfig):
    export_format = "openvino"


class ExecutorchConfig(ExportConfig):
    export_format = "executorch"


_CONFIG_CLASSES = {c.export_format: c for c in
                   (NativeExportConfig, OnnxConfig, OpenVINOConfig, ExecutorchConfig)}


class AutoExportConfig:
    """Picks the config class from "export_format" (native, onnx, openvino, executorch)."""

    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> ExportConfig:
        return ExportConfig._wrap(_ingot._Config.from_json(json.dumps(dict(d)), "AutoExportConfig.from_dict"))

    @staticmethod
    def from_json(text: str) -> ExportConfig:
        return ExportConfig._wrap(_ingot._Config.from_json(text, "AutoExportConfig.from_json"))


class ExportArtifact:
    """An exporter's output: .format, .program (the ExportedProgram it was lowered from),
    .notes (patches and fixes that took effect), .save(path)."""

    def __init__(self, a, owner=None):
        self._a, self._owner = a, owner

    @property
    def format(self) -> str:
        return self._a.format

    @property
    def file_extension(self) -> str:
        return self._a.file_extension

    @property
    def program(self) -> ExportedProgram:
        return ExportedProgram(self._a.program)

    @property
    def notes(self):
        return list(self._a.notes)

    def save(self, path) -> None:
        self._a.save(str(path))

    def __repr__(self) -> str:
        return f"ExportArtifact(format={self.format!r}, notes={self.notes})"


class GenerationComponents(dict):
    """export_for_generation's result: {"prefill": artifact, "decode": artifact} (or just
    "decode"); .save(dir) writes a generation directory that ingot.Generator(dir) and
    `ingot generate DIR` load."""

    def __init__(self, c):
        super().__init__((name, ExportArtifact(c.get(name), c)) for name in c.names())
        self._c = c

    @property
    def max_cache_len(self) -> int:
        return self._c.max_cache_len

    def save(self, dir) -> None:
        self._c.save(str(dir))


class Exporter:
    """One backend's pipeline of named stages (docs/exporters.md)."""

    format = "native"

    def __init__(self, _e=None):
        self._e = _e if _e is not None else _ingot._Exporter.from_format(type(self).format)

    @property
    def backend(self) -> str:
        return self._e.backend

    def _config(self, config: Optional[ExportConfig], fields) -> ExportConfig:
        if config is None:
            return _CONFIG_CLASSES.get(self.backend, ExportConfig)(export_format=self.backend, **fields)
        if fields:
            d = config.to_dict()
            d.update(fields)
            return AutoExportConfig.from_dict(d)
        return config

    def export(self, model, inputs: Optional[Mapping] = None, *, config: Optional[ExportConfig] = None,
               **fields) -> ExportArtifact:
        """Traces model.forward on `inputs` ({"input_ids": ...}; default: the config's example
        inputs) through the stages and lowers it. Extra keyword arguments set config fields."""
        cfg = self._config(config, fields)
        return ExportArtifact(self._e.export(model._model, tensors_in(inputs or {}), cfg._c))

    def export_for_generation(self, model, config: Optional[ExportConfig] = None, *,
                              max_cache_len: int = 256, batch: int = 1,
                              multi_token_decode: bool = False, dynamic_cache_len: bool = False
                              ) -> GenerationComponents:
        """The generation components of a decoder: "prefill" + "decode" (or one multi-token
        "decode"), each (input_ids, StaticCache) -> logits with the cache written in place."""
        cfg = self._config(config, {})
        return GenerationComponents(self._e.export_for_generation(
            model._model, cfg._c, max_cache_len, batch, multi_token_decode, dynamic_cache_len))

    def lower(self, program: ExportedProgram, config: Optional[ExportConfig] = None) -> ExportArtifact:
        """Lowers an already-traced program (e.g. ingot.load's) through the stages after the trace."""
        return ExportArtifact(self._e.lower(program._ep, self._config(config, {})._c))


class NativeExporter(Exporter):
    format = "native"


class OnnxExporter(Exporter):
    format = "onnx"


class OpenVINOExporter(Exporter):
    format = "openvino"


class ExecutorchExporter(Exporter):
    format = "executorch"


_EXPORTER_CLASSES = {c.format: c for c in (NativeExporter, OnnxExporter, OpenVINOExporter, ExecutorchExporter)}


class AutoExporter:
    """Picks the exporter for a config's export_format."""

    @staticmethod
    def from_config(config: ExportConfig) -> Exporter:
        e = _ingot._Exporter.from_config(config._c)
        return _EXPORTER_CLASSES.get(e.backend, Exporter)(e)

    @staticmethod
    def from_format(format: str) -> Exporter:
        e = _ingot._Exporter.from_format(format)
        return _EXPORTER_CLASSES.get(e.backend, Exporter)(e)


def registered_formats():
    return list(_ingot.registered_formats())


def export_for_generation(model, config: Optional[ExportConfig] = None, **options) -> GenerationComponents:
    """AutoExporter.from_config(config).export_for_generation(model, config, **options)
    (the native exporter without a config)."""
    exporter = AutoExporter.from_config(config) if config is not None else NativeExporter()
    return exporter.export_for_generation(model, config, **options)
