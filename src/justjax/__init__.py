"""justjax: JAX's compilation pipeline, rebuilt in Python.

`import justjax as jax` and `import justjax.numpy as jnp` run programs written for JAX.
"""
from justjax._src.config import (
    check_tracer_leaks as check_tracer_leaks,
    checking_leaks as checking_leaks,
    config as config,
    debug_infs as debug_infs,
    debug_key_reuse as debug_key_reuse,
    debug_nans as debug_nans,
    default_matmul_precision as default_matmul_precision,
    default_device as default_device,
    default_prng_impl as default_prng_impl,
    disable_jit as disable_jit,
    enable_checks as enable_checks,
    enable_x64 as enable_x64,
    explain_cache_misses as explain_cache_misses,
    legacy_prng_key as legacy_prng_key,
    log_compiles as log_compiles,
    no_execution as no_execution,
    no_tracing as no_tracing,
    numpy_dtype_promotion as numpy_dtype_promotion,
    numpy_rank_promotion as numpy_rank_promotion,
    threefry_partitionable as threefry_partitionable,
    transfer_guard as transfer_guard,
    transfer_guard_device_to_device as transfer_guard_device_to_device,
    transfer_guard_device_to_host as transfer_guard_device_to_host,
    transfer_guard_host_to_device as transfer_guard_host_to_device,
)
from justjax._src.core.core import Tracer as _Tracer
from justjax._src.runtime.array import Array as Array
from justjax._src.numpy import array_methods as _array_methods

_array_methods.install(Array)
_array_methods.install(_Tracer)
_array_methods.install_tracer_iteration(_Tracer)

from justjax._src.api import (
    ShapeDtypeStruct as ShapeDtypeStruct,
    block_until_ready as block_until_ready,
    clear_caches as clear_caches,
    copy_to_host_async as copy_to_host_async,
    effects_barrier as effects_barrier,
    default_backend as default_backend,
    device_count as device_count,
    device_get as device_get,
    device_put as device_put,
    devices as devices,
    eval_shape as eval_shape,
    local_device_count as local_device_count,
    local_devices as local_devices,
    make_jaxpr as make_jaxpr,
    process_count as process_count,
    process_index as process_index,
    vmap as vmap,
)
from justjax._src.runtime.devices import Device as Device
from justjax._src.runtime.global_arrays import make_array_from_callback as make_array_from_callback
from justjax._src.runtime.global_arrays import (
    make_array_from_process_local_data as make_array_from_process_local_data)
from justjax._src.runtime.global_arrays import (
    make_array_from_single_device_arrays as make_array_from_single_device_arrays)
from justjax._src.runtime.mesh import make_mesh as make_mesh
from justjax._src.runtime.mesh import set_mesh as set_mesh
from justjax._src.runtime.partition_spec import P as P
from justjax._src.runtime.sharding import NamedSharding as NamedSharding
from justjax._src.lax.sharding_constraint import reshard as reshard
from justjax._src.compilation.jit import jit as jit
from justjax._src.transformations.pmap import pmap as pmap
from justjax._src.transformations.shard_map_api import shard_map as shard_map
from justjax._src.explain.report import explain as explain
from justjax._src.transformations.custom_derivatives import custom_jvp as custom_jvp
from justjax._src.transformations.custom_derivatives import custom_vjp as custom_vjp
from justjax._src.transformations.checkpoint import checkpoint as checkpoint
from justjax._src.transformations.checkpoint import checkpoint_policies as checkpoint_policies
from justjax._src.transformations.checkpoint import remat as remat
from justjax._src.transformations.autodiff import (
    closure_convert as closure_convert,
    custom_gradient as custom_gradient,
    grad as grad,
    hessian as hessian,
    jacfwd as jacfwd,
    jacobian as jacobian,
    jacrev as jacrev,
    jvp as jvp,
    linear_transpose as linear_transpose,
    linearize as linearize,
    value_and_grad as value_and_grad,
    vjp as vjp,
)
from justjax._src.debug.callbacks import pure_callback as pure_callback
from justjax._src.core.core import ensure_compile_time_eval as ensure_compile_time_eval
from justjax._src.core.core import typeof as typeof
from justjax._src.core.dtypes import float0 as float0
from justjax._src.source_info_util import named_call as named_call
from justjax._src.source_info_util import named_scope as named_scope
from justjax import debug as debug
from justjax import dlpack as dlpack
from justjax import distributed as distributed
from justjax import errors as errors
from justjax import experimental as experimental
from justjax import lax as lax
from justjax import nn as nn
from justjax import numpy as numpy
from justjax import random as random
from justjax import scipy as scipy
from justjax import sharding as sharding
from justjax import tree_util as tree_util
from justjax import tree as tree
from justjax import dtypes as dtypes
from justjax import ad_checkpoint as ad_checkpoint
from justjax import test_util as test_util
from justjax import api_util as api_util
from justjax import core as core
from justjax import custom_derivatives as custom_derivatives
from justjax import custom_batching as custom_batching
from justjax import dlpack as dlpack
from justjax import interpreters as interpreters
from justjax import stages as stages
from justjax import lib as lib
from justjax import monitoring as monitoring
from justjax import typing as typing
from justjax import version as version
from justjax._src.environment import (
    host_count as host_count,
    host_id as host_id,
    host_ids as host_ids,
    live_arrays as live_arrays,
    print_environment_info as print_environment_info,
    process_indices as process_indices,
)
from justjax._src.jax_alias import install_as_jax as install_as_jax
from justjax._src.util import lazy_submodules as _lazy_submodules

# Imported when first used (`jax.image.resize`, `jax.export.export`): rarely needed, and
# `import jax` need not pay for them.
__getattr__, __dir__, _lazy_names = _lazy_submodules(__name__, ["export", "image"])

__version__ = "0.1.0"
