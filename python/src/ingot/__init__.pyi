# Type stubs of the ingot package (the public API; docs/python.md).
from os import PathLike
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import exporters as exporters

__version__: str

ArrayLike = Any  # a NumPy array, anything with __dlpack__ (a torch tensor), or an ingot Tensor
Path = Union[str, PathLike[str]]

class ExportError(ValueError): ...

class Tensor:
    dtype: str
    shape: List[int]
    strides: List[int]
    data_ptr: int
    writable: bool
    is_mapped: bool
    @staticmethod
    def from_buffer(obj: Any, dtype: Optional[str] = ...) -> Tensor: ...

def as_tensor(x: ArrayLike, dtype: Optional[str] = ...) -> Tensor: ...
def to_numpy(t: Tensor) -> np.ndarray: ...

class Dim:
    AUTO: Dim
    STATIC: Dim
    name: Optional[str]
    min: int
    max: Optional[int]
    def __init__(self, name: str, *, min: int = ..., max: Optional[int] = ...) -> None: ...

class ValueRange:
    lower: Union[int, float]
    upper: Union[int, float]
    backed: bool
    def __init__(self, lower: Union[int, float], upper: Union[int, float], backed: bool = ...) -> None: ...

class InputSpec:
    kind: str  # USER_INPUT, PARAMETER, BUFFER, CONSTANT_TENSOR
    name: str
    target: str
    persistent: bool

class OutputSpec:
    kind: str  # USER_OUTPUT, BUFFER_MUTATION, USER_INPUT_MUTATION
    name: str
    target: str

class GraphSignature:
    input_specs: List[InputSpec]
    output_specs: List[OutputSpec]

class Graph:
    nodes: List[Dict[str, Any]]  # {"target", "inputs", "outputs", "source"}
    def __len__(self) -> int: ...

class Outputs(Dict[str, np.ndarray]):
    def __getattr__(self, name: str) -> np.ndarray: ...
    def __getitem__(self, key: Union[str, int]) -> np.ndarray: ...

class Module:
    num_plans: int
    num_planned_runs: int
    unplannable_reason: str
    def __call__(self, *args: ArrayLike, **kwargs: ArrayLike) -> Outputs: ...
    def buffer(self, name: str) -> np.ndarray: ...

class ExportedProgram:
    graph: Graph
    graph_signature: GraphSignature
    signature: GraphSignature
    range_constraints: Dict[str, ValueRange]
    state_dict: Dict[str, np.ndarray]
    constants: Dict[str, np.ndarray]
    example_inputs: Tuple[np.ndarray, ...]
    input_names: List[str]
    output_names: List[str]
    guards: List[str]
    ingot_version: str
    def module(self) -> Module: ...
    def verify(self) -> None: ...

class PretrainedModel:
    architecture: str
    dtype: str
    input_names: List[str]
    folder: str
    def __call__(self, **inputs: ArrayLike) -> Outputs: ...

def from_pretrained(folder: Path, dtype: Optional[str] = ...) -> PretrainedModel: ...
def export(model: PretrainedModel, args: Sequence[ArrayLike] = ..., kwargs: Optional[Mapping[str, ArrayLike]] = ...,
           *, dynamic_shapes: Union[None, Mapping[str, Any], Sequence[Any]] = ..., dynamic: bool = ...,
           prefer_deferred_runtime_asserts_over_guards: bool = ...) -> ExportedProgram: ...
def save(program: ExportedProgram, path: Path) -> None: ...
def load(path: Path) -> ExportedProgram: ...

class Tokenizer:
    @staticmethod
    def from_file(path: str) -> Tokenizer: ...
    @staticmethod
    def from_pretrained(folder: str) -> Tokenizer: ...
    def encode(self, text: str, add_special_tokens: bool = ...) -> List[int]: ...
    def decode(self, ids: Sequence[int], skip_special_tokens: bool = ...) -> str: ...
    def token_to_id(self, token: str) -> Optional[int]: ...

class GenerationOutput(Dict[str, Any]):
    prompt_ids: List[int]
    generated_ids: List[int]
    text: Optional[str]
    stop_reason: str
    prompt_tokens: int
    new_tokens: int
    time_to_first_token_s: float
    prefill_tokens_per_s: float
    decode_tokens_per_s: float

class Generator:
    tokenizer: Optional[Tokenizer]
    max_cache_len: int
    def __init__(self, source: Union[Path, exporters.GenerationComponents], max_cache_len: Optional[int] = ...) -> None: ...
    def generate(self, prompt: Union[str, Sequence[int], np.ndarray], *, max_new_tokens: Optional[int] = ...,
                 streamer: Optional[Callable[[int, str], None]] = ..., do_sample: Optional[bool] = ...,
                 temperature: Optional[float] = ..., top_k: Optional[int] = ..., top_p: Optional[float] = ...,
                 min_p: Optional[float] = ..., repetition_penalty: Optional[float] = ..., seed: Optional[int] = ...,
                 stop_tokens: Optional[Sequence[int]] = ..., ignore_eos: bool = ...) -> GenerationOutput: ...

def generate(source: Union[str, Path], prompt: Optional[str] = ..., *, chat: Optional[str] = ...,
             system: Optional[str] = ..., messages: Optional[Sequence[Dict[str, Any]]] = ...,
             images: Optional[Sequence[Union[str, Path]]] = ..., audio: Optional[Union[str, Path]] = ...,
             inputs: Optional[Dict[str, Union[str, Path, np.ndarray]]] = ...,
             streamer: Optional[Callable[[str], None]] = ..., max_new_tokens: Optional[int] = ...,
             max_cache_len: Optional[int] = ..., temperature: Optional[float] = ...,
             top_k: Optional[int] = ..., top_p: Optional[float] = ..., min_p: Optional[float] = ...,
             repetition_penalty: Optional[float] = ..., seed: Optional[int] = ...,
             greedy: bool = ..., ignore_eos: bool = ..., dtype: str = ...) -> GenerationOutput: ...
