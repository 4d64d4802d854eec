"""Type stub of the gclaunch package (the _gclaunch C extension)."""
from os import PathLike
from typing import Any, Iterable, NamedTuple, Protocol, Sequence, Union

__version__: str
version_number: int
dlpack_c_api: int  # 1 unless GCL_DLPACK_C_API=0 was set at import (the DLPack C exchange API is used)

class _DLPack(Protocol):
    def __dlpack__(self, *, stream: Any = ..., max_version: Any = ...) -> Any: ...

class _CudaStream(Protocol):
    def __cuda_stream__(self) -> tuple[int, int]: ...

_Buffer = Union[bytes, bytearray, memoryview]
_Key = Union[int, str]
_Dims = Union[int, tuple[int], tuple[int, int], tuple[int, int, int]]
_Path = Union[str, PathLike[str]]

class Error(Exception):
    """A call of the C library failed: .status ('GCL_ERROR_TENSOR'), .code, .cuda_error; str(e)
    is the library's message."""
    status: str
    code: int
    cuda_error: int

class RangeError(Error, OverflowError):
    """An int out of the range of the field's C type (status GCL_ERROR_INVALID_ARGUMENT)."""

class TensorError(Error):
    """A tensor or tensor map refused (status GCL_ERROR_TENSOR) before any driver call; the
    message names the tensor, the DLPack dimension or option, the value and the limit."""

class Param(NamedTuple):
    index: int
    name: str | None
    offset: int
    size: int
    align: int
    kind: str
    # attributes beyond the tuple: dtype, count, elem_kind, const, grid_constant
    @property
    def dtype(self) -> str | None: ...
    @property
    def count(self) -> int: ...
    @property
    def elem_kind(self) -> str: ...
    @property
    def const(self) -> bool: ...
    @property
    def grid_constant(self) -> bool: ...

class Field(NamedTuple):
    path: str
    param: int
    offset: int
    size: int
    align: int
    kind: str
    @property
    def dtype(self) -> str | None: ...
    @property
    def count(self) -> int: ...
    @property
    def elem_kind(self) -> str: ...
    @property
    def const(self) -> bool: ...

class Layout:
    """The device-exact parameter layout of a signature on architecture sm (CPU only)."""
    def __init__(self, signature: str, sm: int) -> None: ...
    @property
    def size(self) -> int: ...
    @property
    def params(self) -> list[Param]: ...
    @property
    def sm(self) -> int: ...
    @property
    def signature(self) -> str | None: ...
    def field(self, path_or_index: _Key) -> Field: ...
    def leaves(self) -> list[Field]: ...
    def __len__(self) -> int: ...

class TensorMap:
    """A TMA descriptor to encode from a __dlpack__ tensor when assigned into Args; box and
    element_strides in the tensor's dimension order."""
    def __init__(self, tensor: _DLPack, box: Union[int, Sequence[int]], *, swizzle: int = 0,
                 store: bool = False, oob_nan: bool = False, l2: int = 0,
                 element_strides: Sequence[int] | None = None, interleave: int = 0) -> None: ...
    @property
    def tensor(self) -> _DLPack: ...
    @property
    def box(self) -> tuple[int, ...]: ...
    @property
    def store(self) -> bool: ...
    def describe(self) -> dict[str, Any]: ...

_Value = Union[int, float, bool, _Buffer, _DLPack, TensorMap, Sequence[TensorMap], Sequence[Union[int, float]]]

class Args:
    """A parameter buffer: args[path_or_index] = value."""
    def __init__(self, layout: Layout) -> None: ...
    @property
    def layout(self) -> Layout: ...
    def __setitem__(self, key: _Key, value: _Value) -> None: ...
    def is_set(self, path_or_index: _Key) -> bool: ...
    def buffer(self) -> bytes: ...
    def refresh(self, path: _Key, tensormaps: Union[TensorMap, Sequence[TensorMap]]) -> None: ...
    def repoint(self, path: _Key, addresses: Union[int, _DLPack, Sequence[Union[int, _DLPack]]]) -> None: ...
    def clone(self) -> Args: ...

class Kernel:
    @property
    def layout(self) -> Layout: ...
    @property
    def name(self) -> str: ...
    @property
    def handle(self) -> int: ...
    @property
    def context(self) -> Context: ...
    def args(self) -> Args: ...
    def launch(self, grid: _Dims, block: _Dims, args_or_values: Union[Args, Sequence[_Value]], *,
               shared: int = 0, stream: Union[None, int, _CudaStream] = None,
               cluster: _Dims | None = None, cooperative: bool = False) -> None: ...

class Module:
    @property
    def log(self) -> str: ...
    @property
    def context(self) -> Context: ...
    def kernel(self, name: str, signature: str | None = None) -> Kernel: ...

class Context:
    def __init__(self, device: int = 0) -> None: ...
    @property
    def device(self) -> int: ...
    @property
    def sm(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def handle(self) -> int: ...
    def load(self, path_or_bytes: Union[_Path, _Buffer]) -> Module: ...
    def compile(self, source: str, name: str = "kernel.cu", options: Iterable[str] = ()) -> Module: ...
    def synchronize(self) -> None: ...

def inspect(path_or_bytes: Union[_Path, _Buffer], arch: Union[int, str, None] = None) -> list[dict[str, Any]]: ...
def status_name(code: int) -> str: ...

GCL_OK: int
GCL_ERROR_INVALID_ARGUMENT: int
GCL_ERROR_OUT_OF_MEMORY: int
GCL_ERROR_PARSE: int
GCL_ERROR_LAYOUT_TOO_LARGE: int
GCL_ERROR_UNSET_ARGUMENT: int
GCL_ERROR_TYPE_MISMATCH: int
GCL_ERROR_TENSOR: int
GCL_ERROR_TENSOR_VERSION: int
GCL_ERROR_BAD_IMAGE: int
GCL_ERROR_NOT_FOUND: int
GCL_ERROR_SIGNATURE_MISMATCH: int
GCL_ERROR_NO_DRIVER: int
GCL_ERROR_STUB_DRIVER: int
GCL_ERROR_NO_DEVICE: int
GCL_ERROR_DRIVER_TOO_OLD: int
GCL_ERROR_DRIVER: int
GCL_ERROR_NO_NVRTC: int
GCL_ERROR_COMPILE: int
GCL_ERROR_INVALID_CONFIG: int
GCL_ERROR_IO: int
GCL_ERROR_KERNEL_FAULT: int
