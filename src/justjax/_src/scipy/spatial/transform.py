"""`jax.scipy.spatial.transform`: rotations in 3-D (`Rotation`) and their interpolation
(`Slerp`), as JAX 0.10.2 has them.

A `Rotation` holds unit quaternions in SciPy's scalar-last order (x, y, z, w): shape (4,)
for one rotation, (N, 4) for N. Both classes are named tuples, so they are pytrees and pass
through jit and vmap. The kernels below act on one quaternion (or matrix, or vector) and
are mapped over leading axes by `jnp.vectorize`, with the formulas SciPy uses.
"""
from __future__ import annotations

import functools
import re
from typing import Any, NamedTuple, Sequence

import numpy as np

from justjax._src import config
from justjax._src.numpy import (array_creation, joining, linalg, numeric, rearranging,
                                reductions, selection, shape_ops, sorting, tensor, ufuncs,
                                vectorize)
from justjax._src.random import distributions

__all__ = ["Rotation", "Slerp"]


def _axes_of(seq: str, fixed_length: bool) -> tuple[Any, bool]:
    """The axis indices (x=0, y=1, z=2) of an Euler sequence, and whether it is intrinsic
    (upper case, rotating axes) rather than extrinsic (lower case, fixed axes).

    Raises:
      ValueError: for a sequence of the wrong length, mixed case, other letters, or an
        axis repeated consecutively.
    """
    if fixed_length and len(seq) != 3:
        raise ValueError(f"Expected 3 axes, got {seq}.")
    if not fixed_length and not 1 <= len(seq) <= 3:
        raise ValueError("Expected axis specification to be a non-empty string of upto 3 "
                         f"characters, got {seq}")
    intrinsic = re.match(r"^[XYZ]{1,3}$", seq) is not None
    extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
    if not (intrinsic or extrinsic):
        raise ValueError("Expected axes from `seq` to be from ['x', 'y', 'z'] or "
                         f"['X', 'Y', 'Z'], got {seq}")
    if any(first == second for first, second in zip(seq, seq[1:])):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")
    return array_creation.array(["xyz".index(axis) for axis in seq.lower()]), intrinsic


class Rotation(NamedTuple):
    """Rotations in 3 dimensions.

    JAX's `jax.scipy.spatial.transform.Rotation` (SciPy's `Rotation`): build one with a
    `from_*` class method, convert with `as_*`, compose with `*`.

    Attributes:
      quat: the unit quaternions (x, y, z, w), shape (4,) or (N, 4).
    """
    quat: Any

    @classmethod
    def concatenate(cls, rotations: Sequence[Rotation]) -> Rotation:
        """The rotations of a sequence of (multiple-rotation) `Rotation`s, in order."""
        return cls(joining.concatenate([rotation.quat for rotation in rotations]))

    @classmethod
    def from_euler(cls, seq: str, angles: Any, degrees: bool = False) -> Rotation:
        """Rotations from Euler angles.

        Args:
          seq: 1 to 3 axes, "xyz"-style (extrinsic) or "XYZ"-style (intrinsic).
          angles: the angles, last axis of length len(seq) (a scalar for one axis).
          degrees: whether the angles are in degrees.
        """
        axes, intrinsic = _axes_of(seq, fixed_length=False)
        return cls(_quat_from_euler(shape_ops.atleast_1d(angles), axes, intrinsic, degrees))

    @classmethod
    def from_matrix(cls, matrix: Any) -> Rotation:
        """Rotations from rotation matrices, shape (3, 3) or (N, 3, 3)."""
        return cls(_quat_from_matrix(matrix))

    @classmethod
    def from_mrp(cls, mrp: Any) -> Rotation:
        """Rotations from Modified Rodrigues Parameters, shape (3,) or (N, 3)."""
        return cls(_quat_from_mrp(mrp))

    @classmethod
    def from_quat(cls, quat: Any) -> Rotation:
        """Rotations from quaternions (x, y, z, w), which are normalized."""
        return cls(_normalized(quat))

    @classmethod
    def from_rotvec(cls, rotvec: Any, degrees: bool = False) -> Rotation:
        """Rotations from rotation vectors (axis times angle), shape (3,) or (N, 3)."""
        return cls(_quat_from_rotvec(rotvec, degrees))

    @classmethod
    def identity(cls, num: int | None = None, dtype: Any = float) -> Rotation:
        """The identity rotation; `num` of them when `num` is given (as SciPy's)."""
        quat = array_creation.array([0., 0., 0., 1.], dtype=dtype)
        if num is not None:
            quat = shape_ops.broadcast_to(quat, (num, 4))
        return cls(quat)

    @classmethod
    def random(cls, random_key: Any, num: int | None = None) -> Rotation:
        """Rotations drawn uniformly (as SciPy's: normalized Gaussian quaternions).

        JAX 0.10.2 raises NotImplementedError here; this follows SciPy's method.

        Args:
          random_key: a PRNG key.
          num: how many; None for one rotation.
        """
        shape = (4,) if num is None else (num, 4)
        return cls.from_quat(distributions.normal(random_key, shape))

    def __getitem__(self, indexer: Any) -> Rotation:
        """The rotation(s) at `indexer` of a multiple rotation."""
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self) -> int:
        """The number of rotations of a multiple rotation."""
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __mul__(self, other: Rotation) -> Rotation:  # type: ignore[override]
        """The composition: `other` applied first, then `self`."""
        return Rotation.from_quat(_compose(self.quat, other.quat))

    def apply(self, vectors: Any, inverse: bool = False) -> Any:
        """The rotated vectors (by the inverse rotation when `inverse`)."""
        return _rotate(self.as_matrix(), vectors, inverse)

    def as_euler(self, seq: str, degrees: bool = False) -> Any:
        """Euler angles of the rotation(s) for a 3-axis sequence (see `from_euler`)."""
        axes, intrinsic = _axes_of(seq, fixed_length=True)
        with config.numpy_rank_promotion("allow"):
            return _euler_from_quat(self.quat, axes, not intrinsic, degrees)

    def as_matrix(self) -> Any:
        """The rotation matrices, shape (3, 3) or (N, 3, 3)."""
        return _matrix_from_quat(self.quat)

    def as_mrp(self) -> Any:
        """Modified Rodrigues Parameters (of magnitude at most 1)."""
        return _mrp_from_quat(self.quat)

    def as_rotvec(self, degrees: bool = False) -> Any:
        """Rotation vectors: the axis scaled by the angle (in [0, pi])."""
        return _rotvec_from_quat(self.quat, degrees)

    def as_quat(self, canonical: bool = False, scalar_first: bool = False) -> Any:
        """The quaternions; `canonical` picks the sign with w > 0 (ties broken by x, y, z);
        `scalar_first` orders them (w, x, y, z)."""
        quat = _canonical(self.quat) if canonical else self.quat
        return rearranging.roll(quat, shift=1, axis=-1) if scalar_first else quat

    def inv(self) -> Rotation:
        """The inverse rotation(s)."""
        return Rotation(_conjugate(self.quat))

    def magnitude(self) -> Any:
        """The rotation angle(s), in [0, pi]."""
        return _magnitude(self.quat)

    def mean(self, weights: Any = None) -> Rotation:
        """The (weighted) mean rotation: the quaternion maximizing the weighted sum of
        squared dot products (Markley et al., 2007), an eigenvector of sum w q q^T.

        Raises:
          ValueError: for weights that are not 1-D or not one per rotation.
        """
        if weights is None:
            w = array_creation.ones(self.quat.shape[0], dtype=self.quat.dtype)
        else:
            w = array_creation.asarray(weights, dtype=self.quat.dtype)
        if w.ndim != 1:
            raise ValueError(f"Expected `weights` to be 1 dimensional, got shape {w.shape}.")
        if w.shape[0] != len(self):
            raise ValueError("Expected `weights` to have number of values equal to number of "
                             f"rotations, got {w.shape[0]} values and {len(self)} rotations.")
        outer = tensor.dot(w[np.newaxis, :] * self.quat.T, self.quat)
        _, vectors = linalg.eigh(outer)
        return Rotation(vectors[:, -1])

    @property
    def single(self) -> bool:
        """Whether this is one rotation (not a sequence of them)."""
        return self.quat.ndim == 1


class Slerp(NamedTuple):
    """Spherical linear interpolation of rotations.

    JAX's `jax.scipy.spatial.transform.Slerp`: build with `Slerp.init(times, rotations)`
    and call with times; between key times the rotation turns at constant angular speed.

    Attributes:
      times: the key times (strictly increasing, not checked).
      timedelta: their differences.
      rotations: the key rotations but the last.
      rotvecs: the rotation vectors from each key rotation to the next.
    """
    times: Any
    timedelta: Any
    rotations: Rotation
    rotvecs: Any

    @classmethod
    def init(cls, times: Any, rotations: Rotation) -> Slerp:
        """The interpolator of key `rotations` at key `times`.

        Raises:
          TypeError: when `rotations` is not a `Rotation`.
          ValueError: for fewer than 2 rotations, times not 1-D, or counts that differ.
        """
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = array_creation.asarray(times, dtype=rotations.quat.dtype)
        if times.ndim != 1:
            raise ValueError("Expected times to be specified in a 1 dimensional array, got "
                             f"{times.ndim} dimensions.")
        if times.shape[0] != len(rotations):
            raise ValueError("Expected number of rotations to be equal to number of "
                             f"timestamps given, got {len(rotations)} rotations and "
                             f"{times.shape[0]} timestamps.")
        starts = Rotation(rotations.as_quat()[:-1])
        ends = Rotation(rotations.as_quat()[1:])
        return cls(times=times, timedelta=numeric.diff(times), rotations=starts,
                   rotvecs=(starts.inv() * ends).as_rotvec())

    def __call__(self, times: Any) -> Rotation:
        """The interpolated rotation(s) at `times` (a scalar gives a single rotation).

        Raises:
          ValueError: for times of more than one dimension.
        """
        at = array_creation.asarray(times, dtype=self.times.dtype)
        if at.ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        single = at.ndim == 0
        at = shape_ops.atleast_1d(at)
        # The key interval of each time (times before the first use the first interval).
        ind = ufuncs.maximum(sorting.searchsorted(self.times, at) - 1, 0)
        alpha = (at - self.times[ind]) / self.timedelta[ind]
        result = self.rotations[ind] * Rotation.from_rotvec(self.rotvecs[ind] * alpha[:, None])
        return result[0] if single else result


# ---------------------------------------------------------------------------------------
# Kernels on one quaternion (x, y, z, w), mapped over leading axes by `vectorize`.

def _vectorized(signature: str) -> Any:
    return functools.partial(vectorize.vectorize, signature=signature)


@_vectorized("(n)->()")
def _norm(vector: Any) -> Any:
    return ufuncs.sqrt(tensor.dot(vector, vector))


@_vectorized("(n)->(n)")
def _normalized(quat: Any) -> Any:
    return quat / _norm(quat)


@_vectorized("(n)->(n)")
def _conjugate(quat: Any) -> Any:
    return quat * array_creation.array([-1, -1, -1, 1], dtype=quat.dtype)


@_vectorized("(n),(n)->(n)")
def _compose(p: Any, q: Any) -> Any:
    """The Hamilton product p q (q applied first)."""
    cross = tensor.cross(p[:3], q[:3])
    return array_creation.array([p[3] * q[0] + q[3] * p[0] + cross[0],
                                 p[3] * q[1] + q[3] * p[1] + cross[1],
                                 p[3] * q[2] + q[3] * p[2] + cross[2],
                                 p[3] * q[3] - p[0] * q[0] - p[1] * q[1] - p[2] * q[2]])


@_vectorized("(n)->(n)")
def _canonical(quat: Any) -> Any:
    """The sign of `quat` whose first nonzero of (w, x, y, z) is positive."""
    negative = quat < 0
    zero = quat == 0
    flip = (negative[3] | (zero[3] & negative[0]) | (zero[3] & zero[0] & negative[1])
            | (zero[3] & zero[0] & zero[1] & negative[2]))
    return selection.where(flip, -quat, quat)


@_vectorized("(n)->()")
def _magnitude(quat: Any) -> Any:
    return 2. * ufuncs.arctan2(_norm(quat[:3]), ufuncs.abs(quat[3]))


@_vectorized("(m,m),(m),()->(m)")
def _rotate(matrix: Any, vector: Any, inverse: Any) -> Any:
    return selection.where(inverse, matrix.T, matrix) @ vector


@_vectorized("(m)->(n,n)")
def _matrix_from_quat(quat: Any) -> Any:
    x, y, z, w = quat[0], quat[1], quat[2], quat[3]
    xx, yy, zz, ww = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    return array_creation.array([[+ xx - yy - zz + ww, 2 * (xy - zw), 2 * (xz + yw)],
                                 [2 * (xy + zw), - xx + yy - zz + ww, 2 * (yz - xw)],
                                 [2 * (xz - yw), 2 * (yz + xw), - xx - yy + zz + ww]])


@_vectorized("(m,m)->(n)")
def _quat_from_matrix(matrix: Any) -> Any:
    """Shepperd's method: from the largest of the diagonal and the trace (for stability)."""
    trace = matrix[0, 0] + matrix[1, 1] + matrix[2, 2]
    decision = array_creation.array([matrix[0, 0], matrix[1, 1], matrix[2, 2], trace],
                                    dtype=matrix.dtype)
    choice = reductions.argmax(decision)
    # A diagonal element is largest: i is its axis (j, k the next two, cyclically).
    i = choice
    j = (i + 1) % 3
    k = (j + 1) % 3
    from_diagonal = array_creation.empty(4, dtype=matrix.dtype)
    from_diagonal = from_diagonal.at[i].set(1 - decision[3] + 2 * matrix[i, i])
    from_diagonal = from_diagonal.at[j].set(matrix[j, i] + matrix[i, j])
    from_diagonal = from_diagonal.at[k].set(matrix[k, i] + matrix[i, k])
    from_diagonal = from_diagonal.at[3].set(matrix[k, j] - matrix[j, k])
    from_trace = array_creation.empty(4, dtype=matrix.dtype)
    from_trace = from_trace.at[0].set(matrix[2, 1] - matrix[1, 2])
    from_trace = from_trace.at[1].set(matrix[0, 2] - matrix[2, 0])
    from_trace = from_trace.at[2].set(matrix[1, 0] - matrix[0, 1])
    from_trace = from_trace.at[3].set(1 + decision[3])
    return _normalized(selection.where(choice != 3, from_diagonal, from_trace))


@_vectorized("(m)->(n)")
def _quat_from_mrp(mrp: Any) -> Any:
    squared_plus_1 = tensor.dot(mrp, mrp) + 1
    return joining.hstack([2 * mrp[:3], (2 - squared_plus_1)]) / squared_plus_1


@_vectorized("(m)->(n)")
def _mrp_from_quat(quat: Any) -> Any:
    sign = selection.where(quat[3] < 0, -1., 1.)
    return sign * quat[:3] / (1. + sign * quat[3])


@_vectorized("(m),()->(n)")
def _quat_from_rotvec(rotvec: Any, degrees: Any) -> Any:
    rotvec = selection.where(degrees, ufuncs.deg2rad(rotvec), rotvec)
    angle = _norm(rotvec)
    angle2 = angle * angle
    # sin(angle / 2) / angle, by its Taylor series near 0.
    small_scale = 0.5 - angle2 / 48 + angle2 * angle2 / 3840
    large_scale = ufuncs.sin(angle / 2) / angle
    scale = selection.where(angle <= 1e-3, small_scale, large_scale)
    return joining.hstack([scale * rotvec, ufuncs.cos(angle / 2)])


@_vectorized("(m),()->(n)")
def _rotvec_from_quat(quat: Any, degrees: Any) -> Any:
    quat = selection.where(quat[3] < 0, -quat, quat)  # w >= 0, so the angle is in [0, pi]
    angle = 2. * ufuncs.arctan2(_norm(quat[:3]), quat[3])
    angle2 = angle * angle
    # angle / sin(angle / 2), by its Taylor series near 0.
    small_scale = 2 + angle2 / 12 + 7 * angle2 * angle2 / 2880
    large_scale = angle / ufuncs.sin(angle / 2)
    scale = selection.where(angle <= 1e-3, small_scale, large_scale)
    scale = selection.where(degrees, ufuncs.rad2deg(scale), scale)
    return scale * array_creation.array(quat[:3])


@_vectorized("(),()->(n)")
def _elementary_quat(axis: Any, angle: Any) -> Any:
    """The rotation by `angle` about coordinate axis `axis`."""
    quat = array_creation.zeros(4, dtype=angle.dtype)
    quat = quat.at[3].set(ufuncs.cos(angle / 2.))
    return quat.at[axis].set(ufuncs.sin(angle / 2.))


@_vectorized("(m),(m),(),()->(n)")
def _quat_from_euler(angles: Any, axes: Any, intrinsic: Any, degrees: Any) -> Any:
    angles = selection.where(degrees, ufuncs.deg2rad(angles), angles)
    result = _elementary_quat(axes[0], angles[0])
    for index in range(1, len(axes)):
        quat = _elementary_quat(axes[index], angles[index])
        # Intrinsic: each rotation about the rotated axes (composed on the right).
        result = selection.where(intrinsic, _compose(result, quat), _compose(quat, result))
    return result


@_vectorized("(m),(l),(),()->(n)")
def _euler_from_quat(quat: Any, axes: Any, extrinsic: Any, degrees: Any) -> Any:
    """Euler angles by the direct method of Bernardes & Viollet (2022), as SciPy's."""
    first = selection.where(extrinsic, 0, 2)
    third = selection.where(extrinsic, 2, 0)
    axes = selection.where(extrinsic, axes, axes[::-1])
    i, j, k = axes[0], axes[1], axes[2]
    symmetric = i == k  # a proper Euler sequence (like zxz), not Tait-Bryan
    k = selection.where(symmetric, 3 - i - j, k)
    sign = array_creation.array((i - j) * (j - k) * (k - i) // 2, dtype=quat.dtype)
    eps = 1e-7
    a = selection.where(symmetric, quat[3], quat[3] - quat[j])
    b = selection.where(symmetric, quat[i], quat[i] + quat[k] * sign)
    c = selection.where(symmetric, quat[j], quat[j] + quat[3])
    d = selection.where(symmetric, quat[k] * sign, quat[k] * sign - quat[i])
    angles = array_creation.empty(3, dtype=quat.dtype)
    angles = angles.at[1].set(2 * ufuncs.arctan2(ufuncs.hypot(c, d), ufuncs.hypot(a, b)))
    # Case 1 (second angle 0) and 2 (pi) are gimbal lock: the third angle is set to 0.
    case = selection.where(ufuncs.abs(angles[1] - np.pi) <= eps, 2, 0)
    case = selection.where(ufuncs.abs(angles[1]) <= eps, 1, case)
    half_sum = ufuncs.arctan2(b, a)
    half_diff = ufuncs.arctan2(d, c)
    locked = selection.where(case == 1, 2 * half_sum,
                             2 * half_diff * selection.where(extrinsic, -1, 1))
    angles = angles.at[0].set(locked)
    angles = angles.at[first].set(selection.where(case == 0, half_sum - half_diff,
                                                  angles[first]))
    angles = angles.at[third].set(selection.where(case == 0, half_sum + half_diff,
                                                  angles[third]))
    angles = angles.at[third].set(selection.where(symmetric, angles[third],
                                                  angles[third] * sign))
    angles = angles.at[1].set(selection.where(symmetric, angles[1], angles[1] - np.pi / 2))
    angles = (angles + np.pi) % (2 * np.pi) - np.pi
    return selection.where(degrees, ufuncs.rad2deg(angles), angles)
