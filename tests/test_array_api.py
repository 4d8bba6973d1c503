"""justjax.numpy as an array API standard (2024.12) namespace: the inspection API, DLPack
exchange, the signatures the standard (and JAX) give, and complex special values.

Expected values are JAX 0.10.2's (recorded with /work/jaxvenv, JAX_ENABLE_X64=1) where JAX
follows the standard; the standard's own test suite is run by `tools/array_api_suite.py`.
"""
from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import justjax
import justjax.numpy as jnp
from justjax._src.errors import JaxRuntimeError
from justjax._src.runtime.dlpack import DLDeviceType
from tests.harness import lower_to_module, run_on_backend, x64_mode

# ---------------------------------------------------------------------------------------------
# The inspection API.


def test_array_api_version_and_namespace() -> None:
    x = jnp.arange(3.0)
    assert jnp.__array_api_version__ == "2024.12"
    assert x.__array_namespace__() is jnp
    assert x.__array_namespace__(api_version="2024.12") is jnp
    with pytest.raises(ValueError, match=r"api_version='2023.12' is not available; available "
                                         r"versions are: \['2024.12'\]"):
        x.__array_namespace__(api_version="2023.12")


def test_namespace_info_capabilities_and_devices() -> None:
    info = jnp.__array_namespace_info__()
    assert info.capabilities() == {"boolean indexing": False, "data-dependent shapes": False,
                                   "max dimensions": 64}
    assert info.default_device() is None
    assert info.devices() == [None, *justjax.devices()]


@pytest.mark.parametrize("x64", [False, True])
def test_namespace_info_dtypes(x64: bool) -> None:
    bits = 64 if x64 else 32
    with x64_mode(x64):
        info = jnp.__array_namespace_info__()
        assert info.default_dtypes() == info.default_dtypes(device=justjax.devices()[0]) == {
            "real floating": np.dtype(f"float{bits}"),
            "complex floating": np.dtype(f"complex{2 * bits}"),
            "integral": np.dtype(f"int{bits}"), "indexing": np.dtype(f"int{bits}")}
        ints = {"int8", "int16", "int32", "uint8", "uint16", "uint32"}
        floats, complexes = {"float32"}, {"complex64"}
        if x64:
            ints |= {"int64", "uint64"}
            floats, complexes = floats | {"float64"}, complexes | {"complex128"}
        assert set(info.dtypes()) == ints | floats | complexes | {"bool"}
        assert set(info.dtypes(kind="integral")) == ints
        assert set(info.dtypes(kind="signed integer")) == {n for n in ints if n[0] == "i"}
        assert set(info.dtypes(kind=("real floating", "bool"))) == floats | {"bool"}
        assert info.dtypes(kind="complex floating") == {n: np.dtype(n) for n in complexes}
        with pytest.raises(KeyError):
            info.dtypes(kind="floating")


def test_device_and_to_device() -> None:
    x = jnp.arange(3.0)
    device = justjax.devices()[0]
    assert x.device == device and not x.committed
    y = x.to_device(device)
    assert y.committed and y.device == device
    np.testing.assert_array_equal(y, x)
    with pytest.raises(NotImplementedError, match="stream argument of array.to_device"):
        x.to_device(device, stream=1)
    with pytest.raises(ValueError, match="only accepts"):
        x.to_device("cpu")
    # Traced values pass through, as jax.device_put does here.
    assert justjax.jit(lambda v: v.to_device(device) * 2)(x).tolist() == [0.0, 2.0, 4.0]


def test_creation_functions_place_on_device() -> None:
    device = justjax.devices()[0]
    sharding = justjax.sharding.SingleDeviceSharding(device)
    made = [jnp.zeros(3, device=device), jnp.ones(3, device=device),
            jnp.empty(3, device=device), jnp.full(3, 2.0, device=device),
            jnp.zeros_like(jnp.ones(2), device=device), jnp.ones_like(jnp.ones(2), device=device),
            jnp.empty_like(jnp.ones(2), device=device),
            jnp.full_like(jnp.ones(2), 5, device=device), jnp.arange(4, device=device),
            jnp.linspace(0, 1, 3, device=device), jnp.eye(2, device=device),
            jnp.asarray([1, 2], device=device), jnp.array([1, 2], device=device)]
    for x in made:
        assert x.committed and x.device == device
    assert not jnp.zeros(3).committed
    # As JAX 0.10.2: out_sharding takes a NamedSharding or PartitionSpec only.
    with pytest.raises(TypeError, match="`out_sharding` argument of jnp.zeros only supports"):
        jnp.zeros(3, out_sharding=sharding)
    values, step = jnp.linspace(0, 1, 3, retstep=True, device=device)
    assert values.committed and float(step) == 0.5
    with pytest.raises(ValueError, match="Only one of `device` or `out_sharding` can be set"):
        jnp.zeros(3, device=device, out_sharding=sharding)


def test_array_positional_arguments_are_deprecated() -> None:
    with pytest.warns(DeprecationWarning, match="copy, order, and ndmin arguments"):
        x = jnp.array([1, 2], None, True, "K", 2)
    assert x.shape == (1, 2)
    with pytest.raises(TypeError, match="got multiple values for argument 'ndmin'"):
        jnp.array([1], None, True, "K", 2, ndmin=3)


# ---------------------------------------------------------------------------------------------
# DLPack.


def _pointer(x: object) -> int:
    return x.unsafe_buffer_pointer() if hasattr(x, "unsafe_buffer_pointer") else x.ctypes.data


@pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                   "uint32", "uint64", "float16", "float32", "float64",
                                   "complex64", "complex128"])
def test_dlpack_round_trip_with_numpy(dtype: str) -> None:
    with x64_mode(True):
        value = (np.arange(6) % 3).reshape(2, 3).astype(dtype)
        x = jnp.asarray(value)
        host = np.from_dlpack(x)
        assert host.dtype == value.dtype and not host.flags.writeable
        assert _pointer(host) == _pointer(x)  # NumPy reads the Array's own memory
        np.testing.assert_array_equal(host, value)
        back = jnp.from_dlpack(host)
        assert _pointer(back) == _pointer(x)
        assert back.dtype == value.dtype and back.committed and not back.weak_type


def _aligned_numpy(values: list[float], alignment: int = 64) -> np.ndarray:
    raw = np.zeros(len(values) * 4 + alignment, dtype=np.uint8)
    start = -raw.ctypes.data % alignment
    out = raw[start:start + len(values) * 4].view(np.float32)
    out[:] = values
    return out


def test_from_dlpack_shares_aligned_and_copies_unaligned_memory() -> None:
    # As JAX on CPU: a 64-byte aligned buffer is shared, any other is copied (and refused
    # with copy=False).
    producer = _aligned_numpy([0.0, 1.0, 2.0, 3.0])
    x = jnp.from_dlpack(producer)
    assert _pointer(x) == _pointer(producer)
    producer[0] = 9.0
    assert x.tolist() == [9.0, 1.0, 2.0, 3.0]
    copied = jnp.from_dlpack(producer, copy=True)
    assert _pointer(copied) != _pointer(producer)
    unaligned = _aligned_numpy([0.0, 1.0, 2.0, 3.0, 4.0])[1:]
    y = jnp.from_dlpack(unaligned)
    unaligned[0] = 7.0
    assert y.tolist() == [1.0, 2.0, 3.0, 4.0]
    with pytest.raises(ValueError, match="not aligned to 64 bytes"):
        jnp.from_dlpack(unaligned, copy=False)


def test_from_dlpack_copies_what_it_must() -> None:
    strided = np.arange(8.0)[::2]
    np.testing.assert_array_equal(jnp.from_dlpack(strided), strided)
    with pytest.raises(ValueError, match="requires a copy"):
        jnp.from_dlpack(strided, copy=False)
    with x64_mode(False):
        # Without x64 a float64 tensor becomes float32, as JAX canonicalizes it.
        assert jnp.from_dlpack(np.arange(3.0)).dtype == np.float32
    assert jnp.from_dlpack(np.zeros((2, 0))).shape == (2, 0)
    assert float(jnp.from_dlpack(np.array(1.5))) == 1.5


def test_from_dlpack_device() -> None:
    device = justjax.devices()[0]
    x = jnp.from_dlpack(np.ones(2), device=device)
    assert x.device == device and x.committed
    x = jnp.from_dlpack(np.ones(2), device=justjax.sharding.SingleDeviceSharding(device))
    assert x.device == device


def test_dunder_dlpack_options() -> None:
    x = jnp.arange(3.0)
    assert x.__dlpack_device__() == (DLDeviceType.kDLCPU, 0)
    assert isinstance(x.__dlpack_device__()[0], DLDeviceType)
    for max_version in (None, (0, 5), (0, 8)):
        assert "dltensor" in repr(x.__dlpack__(max_version=max_version))
    # A consumer of DLPack >= 1.0 gets a versioned capsule that says "read-only".
    assert "dltensor_versioned" in repr(x.__dlpack__(max_version=(1, 0)))
    with pytest.raises(BufferError, match=r"JAX does not support any version below \(0, 5\)"):
        x.__dlpack__(max_version=(0, 4))
    with pytest.raises(JaxRuntimeError, match="only implemented for GPU"):
        x.__dlpack__(stream=1)
    with pytest.raises(BufferError, match="unsupported device type"):
        x.__dlpack__(dl_device=(7, 0))
    with pytest.raises(RuntimeError, match="Unknown backend cuda"):
        x.__dlpack__(dl_device=(2, 0))
    copy = np.from_dlpack(x, copy=True)
    assert _pointer(copy) != _pointer(x)
    np.testing.assert_array_equal(copy, x)
    x.__dlpack__(dl_device=(1, 0), copy=False)  # the array's own device: no copy needed


@pytest.mark.parametrize("dtype,code", [("bfloat16", 4), ("float8_e4m3fn", 10),
                                        ("float8_e5m2", 12), ("float32", 2), ("uint8", 1)])
def test_dlpack_narrow_floats_carry_dlpacks_type_codes(dtype: str, code: int) -> None:
    """bfloat16 and float8 arrays cross with DLPack's type codes for them (dlpack.h's
    kDLBfloat = 4, kDLFloat8_e4m3fn = 10, kDLFloat8_e5m2 = 12; kDLFloat = 2 and kDLUInt = 1
    as NumPy writes them, which checks where the code is read)."""
    from justjax._src.runtime.dlpack import _type_code
    x = jnp.arange(4, dtype=getattr(jnp, dtype))
    for max_version in (None, (1, 0)):
        assert _type_code(x.__dlpack__(max_version=max_version)).value == code
    back = jnp.from_dlpack(x)
    assert back.dtype == x.dtype and _pointer(back) == _pointer(x)
    np.testing.assert_array_equal(np.asarray(back, np.float32), [0, 1, 2, 3])
    copied = jnp.from_dlpack(x, copy=True)
    assert copied.dtype == x.dtype and _pointer(copied) != _pointer(x)


def test_jax_dlpack_module() -> None:
    assert justjax.dlpack.is_supported_dtype(jnp.bfloat16)
    assert not justjax.dlpack.is_supported_dtype(jnp.float8_e4m3fn)
    with pytest.raises(TypeError, match="Expected a string or dtype-like object"):
        justjax.dlpack.is_supported_dtype(None)
    np.testing.assert_array_equal(justjax.dlpack.from_dlpack(np.arange(3)), [0, 1, 2])


def test_dlpack_of_a_traced_value_is_an_error() -> None:
    def f(v):
        v.__dlpack__()
        return v
    with pytest.raises(justjax.errors.ConcretizationTypeError,
                       match=r"The __dlpack__\(\) method was called on traced array with shape "
                             r"float32\[2\]"):
        justjax.jit(f)(jnp.ones(2))


# ---------------------------------------------------------------------------------------------
# Signatures: inspect.signature of JAX 0.10.2's functions (annotations left out).

JAX_SIGNATURES = {
    "arange": "(start, stop=None, step=None, dtype=None, *, device=None, out_sharding=None)",
    "asarray": "(a, dtype=None, order=None, *, copy=None, device=None, out_sharding=None)",
    "array": "(object, dtype=None, *args, copy=True, order='K', ndmin=0, device=None, "
             "out_sharding=None)",
    "empty": "(shape, dtype=None, *, device=None, out_sharding=None)",
    "empty_like": "(prototype, dtype=None, shape=None, *, device=None)",
    "eye": "(N, M=None, k=0, dtype=None, *, device=None)",
    "full": "(shape, fill_value, dtype=None, *, device=None, out_sharding=None)",
    "full_like": "(a, fill_value, dtype=None, shape=None, *, device=None, out_sharding=None)",
    "linspace": "(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, "
                "device=None)",
    "ones": "(shape, dtype=None, *, device=None, out_sharding=None)",
    "ones_like": "(a, dtype=None, shape=None, *, device=None, out_sharding=None)",
    "zeros": "(shape, dtype=None, *, device=None, out_sharding=None)",
    "zeros_like": "(a, dtype=None, shape=None, *, device=None, out_sharding=None)",
    "atan2": "(x1, x2, /)",
    "isdtype": "(dtype, kind)",
    "from_dlpack": "(x, /, *, device=None, copy=None)",
    "acos": "(x, /)",
    "acosh": "(x, /)",
    "asin": "(x, /)",
    "asinh": "(x, /)",
    "atan": "(x, /)",
    "atanh": "(x, /)",
    "bitwise_left_shift": "(x, y, /)",
    "bitwise_right_shift": "(x1, x2, /)",
    "bitwise_invert": "(x, /)",
    "concat": "(arrays, /, *, axis=0)",
    "permute_dims": "(a, /, axes)",
    "pow": "(x1, x2, /)",
    "divide": "(x1, x2, /)",
    "abs": "(x, /)",
    "conj": "(x, /)",
    "degrees": "(x, /)",
    "radians": "(x, /)",
    "mod": "(x1, x2, /)",
    "Array.__array_namespace__": "(self, *, api_version=None)",
    "Array.to_device": "(self, device, *, stream=None)",
    "Array.__dlpack__": "(self, *, stream=None, max_version=None, dl_device=None, copy=None)",
    "Array.__dlpack_device__": "(self)",
    "result_type": "(*args)",
    "linalg.tensordot": "(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None, "
                        "out_sharding=None)",
    "dtypes.result_type": "(*args, return_weak_type_flag=False)",
    "dlpack.from_dlpack": "(external_array, device=None, copy=None)",
    "dlpack.is_supported_dtype": "(dtype)",
}


def _plain_signature(fun: object) -> str:
    sig = inspect.signature(fun)
    params = [p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()]
    return str(sig.replace(parameters=params, return_annotation=inspect.Signature.empty))


def _lookup(name: str) -> object:
    if name.startswith("Array."):
        return getattr(justjax.Array, name.split(".", 1)[1])
    if name.startswith("dlpack."):
        return getattr(justjax.dlpack, name.split(".", 1)[1])
    if name.startswith("dtypes."):
        return getattr(justjax.dtypes, name.split(".", 1)[1])
    if name.startswith("linalg."):
        return getattr(jnp.linalg, name.split(".", 1)[1])
    return getattr(jnp, name)


@pytest.mark.parametrize("name", sorted(JAX_SIGNATURES))
def test_signature_is_jaxs(name: str) -> None:
    assert _plain_signature(_lookup(name)) == JAX_SIGNATURES[name]


def test_isdtype_takes_dtype_by_keyword() -> None:
    assert jnp.isdtype(dtype=jnp.int32, kind="integral")
    assert justjax.dtypes.result_type(1.0, jnp.int32, return_weak_type_flag=True) == (
        np.dtype("float32"), True)
    assert jnp.atan2(jnp.float32(1), jnp.float32(1)) == pytest.approx(math.pi / 4)


# ---------------------------------------------------------------------------------------------
# Complex special values: the standard's (which JAX gives), on both backends, eager and jit.

PI = math.pi
INF, NAN = math.inf, math.nan
# (function, input, expected); None for a part whose sign the standard leaves open.
SPECIAL_VALUES = [
    ("acos", (INF, INF), (PI / 4, -INF)),
    ("acos", (-INF, INF), (3 * PI / 4, -INF)),
    ("acos", (NAN, INF), (NAN, -INF)),
    ("acos", (INF, NAN), (NAN, None)),
    ("acos", (INF, 1.0), (0.0, -INF)),
    ("acos", (-INF, 1.0), (PI, -INF)),
    ("acos", (1.0, INF), (PI / 2, -INF)),
    ("acosh", (INF, INF), (INF, PI / 4)),
    ("acosh", (-INF, INF), (INF, 3 * PI / 4)),
    ("acosh", (NAN, INF), (INF, NAN)),
    ("acosh", (INF, NAN), (INF, NAN)),
    ("acosh", (0.0, 0.0), (0.0, PI / 2)),
    ("asin", (INF, INF), (PI / 4, INF)),
    ("asinh", (1.0, INF), (INF, PI / 2)),
    ("asinh", (NAN, INF), (None, NAN)),
    ("asinh", (INF, INF), (INF, PI / 4)),
    ("asinh", (INF, 1.0), (INF, 0.0)),
    ("atan", (INF, INF), (PI / 2, 0.0)),
    ("atanh", (INF, INF), (0.0, PI / 2)),
    ("atanh", (INF, 1.0), (0.0, PI / 2)),
    ("atanh", (NAN, INF), (None, PI / 2)),
    ("atanh", (1.0, 0.0), (INF, 0.0)),
    ("expm1", (INF, 0.0), (INF, 0.0)),
    ("expm1", (NAN, 0.0), (NAN, 0.0)),
    ("expm1", (0.0, 0.0), (0.0, 0.0)),
    ("expm1", (-0.0, 0.0), (0.0, 0.0)),
    ("expm1", (-INF, 2.0), (-1.0, 0.0)),
    ("expm1", (INF, INF), (None, NAN)),
    ("expm1", (1.0, INF), (NAN, NAN)),
]


def _same(got: float, want: float | None) -> bool:
    if want is None:
        return True
    if math.isnan(want):
        return math.isnan(got)
    if math.isinf(want) or want == 0:
        return got == want and math.copysign(1, got) == math.copysign(1, want)
    return math.isclose(got, want, rel_tol=1e-6)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name,z,want", SPECIAL_VALUES,
                         ids=[f"{n}{z}" for n, z, _ in SPECIAL_VALUES])
def test_complex_special_values(name: str, z: tuple, want: tuple, dtype: type) -> None:
    with x64_mode(True):
        x = jnp.asarray(np.array([complex(*z)], dtype))
        fun = getattr(jnp, name)
        results = {"eager": np.asarray(fun(x))[0], "jit": np.asarray(justjax.jit(fun)(x))[0]}
        module = lower_to_module(fun, x)
        for backend in ("reference", "llvm"):
            results[backend] = run_on_backend(backend, module, np.asarray(x))[0][0]
    for where, got in results.items():
        assert _same(got.real, want[0]) and _same(got.imag, want[1]), (where, got, want)


_PARTS = [0.0, -0.0, 0.5, -2.0, 1e30, INF, -INF, NAN]
_GRID = np.array([complex(a, b) for a in _PARTS for b in _PARTS])


def _bits(x: np.ndarray) -> list:
    """Values compared exactly, signs of zeros included, every nan alike."""
    return [tuple("nan" if math.isnan(p) else (p, math.copysign(1, p))
                  for p in (float(v.real), float(v.imag))) for v in x]


@pytest.mark.parametrize("name", ["arccos", "arccosh", "arcsin", "arcsinh", "arctan",
                                  "arctanh", "expm1"])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_backends_agree_on_complex_special_values(name: str, dtype: type) -> None:
    """The llvm backend gives the reference backend's (C99's) values at every combination of
    zeros, infinities and nans; the inverse functions as NumPy (glibc) does."""
    with x64_mode(True):
        x = np.asarray(_GRID, dtype)
        module = lower_to_module(getattr(jnp, name), x)
        reference = run_on_backend("reference", module, x)[0]
        native = run_on_backend("llvm", module, x)[0]
    special = ~np.isfinite(x) | (x == 0)
    assert _bits(native[special]) == _bits(reference[special])
    if name != "expm1":  # NumPy's expm1 makes nans where C99 keeps the zero imaginary part
        with np.errstate(all="ignore"):
            numpy_values = getattr(np, name)(x)
        assert _bits(reference[special]) == _bits(numpy_values[special])
