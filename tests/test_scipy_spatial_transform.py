"""justjax.scipy.spatial.transform: Rotation and Slerp against SciPy's, JAX's recorded values
(its docstring examples, gimbal lock, canonical quaternions), pytrees through jit and vmap,
gradients, errors."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation as SciPyRotation
from scipy.spatial.transform import Slerp as SciPySlerp

import justjax as jax
import justjax.numpy as jnp
from justjax.scipy.spatial.transform import Rotation, Slerp

QUATS = np.array([[0.1, 0.2, 0.3, 0.9], [-0.5, 0.4, 0.2, -0.3], [0., 0., 0.7, 0.7],
                  [1., 0., 0., 0.], [0., 0., 0., -1.]], np.float32)
VECTORS = np.array([[1., 2., 3.], [0., 1., 0.], [-1., 0.5, 2.], [3., 0., -1.], [0., 0., 1.]],
                   np.float32)


@pytest.fixture
def rotations() -> tuple[Rotation, SciPyRotation]:
    return Rotation.from_quat(jnp.array(QUATS)), SciPyRotation.from_quat(QUATS)


def _same_rotations(ours: Rotation, theirs: SciPyRotation, atol: float = 1e-5) -> None:
    np.testing.assert_allclose(ours.as_matrix(), theirs.as_matrix(), atol=atol)


def test_conversions_match_scipy(rotations) -> None:
    ours, theirs = rotations
    np.testing.assert_allclose(ours.as_quat(), theirs.as_quat(), atol=1e-6)
    np.testing.assert_allclose(ours.as_matrix(), theirs.as_matrix(), atol=1e-6)
    np.testing.assert_allclose(ours.as_rotvec(), theirs.as_rotvec(), atol=1e-5)
    np.testing.assert_allclose(ours.as_rotvec(degrees=True), theirs.as_rotvec(degrees=True),
                               atol=1e-3)
    np.testing.assert_allclose(ours.as_mrp(), theirs.as_mrp(), atol=1e-6)
    np.testing.assert_allclose(ours.magnitude(), theirs.magnitude(), atol=1e-6)
    np.testing.assert_allclose(ours.as_quat(canonical=True), theirs.as_quat(canonical=True),
                               atol=1e-6)
    np.testing.assert_allclose(ours.as_quat(scalar_first=True),
                               theirs.as_quat(scalar_first=True), atol=1e-6)


@pytest.mark.parametrize("seq", ["xyz", "ZXY", "zxz", "XYX", "yzy", "zyx"])
def test_euler_matches_scipy(seq: str, rotations) -> None:
    ours, theirs = rotations
    # Not at gimbal lock (the last three rotations are, for some sequences): there the
    # split of the angle between the first and third axes differs.
    np.testing.assert_allclose(ours[:2].as_euler(seq), theirs[:2].as_euler(seq), atol=2e-5)
    np.testing.assert_allclose(ours[:2].as_euler(seq, degrees=True),
                               theirs[:2].as_euler(seq, degrees=True), atol=2e-3)
    angles = np.array([[10., 20., 30.], [-50., 80., 170.]], np.float32)
    _same_rotations(Rotation.from_euler(seq, jnp.array(angles), degrees=True),
                    SciPyRotation.from_euler(seq, angles, degrees=True))


def test_constructors_match_scipy(rotations) -> None:
    ours, theirs = rotations
    _same_rotations(Rotation.from_matrix(jnp.array(theirs.as_matrix())), theirs)
    _same_rotations(Rotation.from_rotvec(jnp.array(theirs.as_rotvec())), theirs)
    _same_rotations(Rotation.from_mrp(jnp.array(theirs.as_mrp())), theirs)
    rotvecs = np.array([[90., 0., 0.], [0., 45., 45.]], np.float32)
    _same_rotations(Rotation.from_rotvec(jnp.array(rotvecs), degrees=True),
                    SciPyRotation.from_rotvec(rotvecs, degrees=True))
    small = np.array([1e-4, 0., 2e-4], np.float32)  # the Taylor branch
    np.testing.assert_allclose(Rotation.from_rotvec(jnp.array(small)).as_quat(),
                               SciPyRotation.from_rotvec(small).as_quat(), atol=1e-7)
    _same_rotations(Rotation.from_matrix(jnp.diag(jnp.array([1., -1., -1.]))),
                    SciPyRotation.from_matrix(np.diag([1., -1., -1.])))
    _same_rotations(Rotation.from_euler("z", 90, degrees=True),
                    SciPyRotation.from_euler("z", 90, degrees=True))
    _same_rotations(Rotation.from_euler("xy", jnp.array([0.3, 0.5])),
                    SciPyRotation.from_euler("xy", [0.3, 0.5]))


def test_operations_match_scipy(rotations) -> None:
    ours, theirs = rotations
    _same_rotations(ours * ours[::-1], theirs * theirs[::-1])
    _same_rotations(ours[0] * ours, theirs[0] * theirs)
    _same_rotations(ours.inv(), theirs.inv())
    np.testing.assert_allclose(ours.apply(jnp.array(VECTORS[0])), theirs.apply(VECTORS[0]),
                               atol=1e-5)
    np.testing.assert_allclose(ours.apply(jnp.array(VECTORS), inverse=True),
                               theirs.apply(VECTORS, inverse=True), atol=1e-5)
    np.testing.assert_allclose(ours[1].apply(jnp.array(VECTORS)), theirs[1].apply(VECTORS),
                               atol=1e-5)
    _same_rotations(ours.mean(), theirs.mean(), atol=1e-4)
    weights = np.array([1., 2., 0.5, 0.1, 3.], np.float32)
    _same_rotations(ours.mean(jnp.array(weights)), theirs.mean(weights), atol=1e-4)
    _same_rotations(Rotation.concatenate([ours, ours[:2]]),
                    SciPyRotation.concatenate([theirs, theirs[:2]]))
    assert len(ours) == 5 and not ours.single and ours[0].single


def test_jax_values() -> None:
    """Recorded from JAX 0.10.2: its docstring examples, gimbal lock (the third angle 0),
    and the identity."""
    r = Rotation.from_euler("z", 90, degrees=True)
    np.testing.assert_allclose(r.as_rotvec(), [0., 0., 1.5707964], atol=1e-7)
    np.testing.assert_allclose(r.as_matrix(), [[0., -0.99999994, 0.], [0.99999994, 0., 0.],
                                               [0., 0., 0.99999994]], atol=1e-7)
    np.testing.assert_allclose((r * Rotation.from_euler("x", 90, degrees=True)).as_matrix(),
                               [[0., 0., 1.], [1., 0., 0.], [0., 1., 0.]], atol=1e-6)
    locked = Rotation.from_euler("xyz", jnp.array([0.3, np.pi / 2, 0.2])).as_euler("xyz")
    np.testing.assert_allclose(locked, [0.1, 1.5708, 0.0], atol=1e-4)
    locked = Rotation.from_euler("zxz", jnp.array([0.3, 0., 0.2])).as_euler("zxz")
    np.testing.assert_allclose(locked, [0.5, 0.0, 0.0], atol=1e-6)
    identity = Rotation.identity()
    assert identity.quat.dtype == jnp.float32 and identity.quat.tolist() == [0., 0., 0., 1.]
    assert Rotation.identity(3).quat.shape == (3, 4)


def test_slerp() -> None:
    """JAX's docstring example (recorded from JAX 0.10.2), and SciPy's Slerp."""
    angles = np.array([[90, 0, 0], [0, 45, 0], [0, 0, -30]])
    keys = Rotation.from_euler("zxy", jnp.array(angles), degrees=True)
    slerp = Slerp.init([0, 1, 2], keys)
    times = [0, 0.5, 1, 1.5, 2]
    np.testing.assert_allclose(slerp(times).as_euler("zxy"),
                               [[1.5707963e+00, 0.0, 0.0],
                                [8.5309029e-01, 3.8711953e-01, 1.7768645e-01],
                                [-2.3841858e-07, 7.8539824e-01, 0.0],
                                [-5.6668043e-02, 3.9213133e-01, -2.8347540e-01],
                                [0.0, 0.0, -5.2359891e-01]], atol=1e-5)
    theirs = SciPySlerp([0, 1, 2], SciPyRotation.from_euler("zxy", angles, degrees=True))
    query = np.array([0.1, 0.7, 1.2, 1.99])
    _same_rotations(slerp(jnp.array(query)), theirs(query))
    single = slerp(0.25)
    assert single.single
    _same_rotations(single, theirs(0.25))


def test_pytrees_jit_vmap_grad() -> None:
    """Both classes are named tuples of arrays, so they go through jit and vmap (recorded
    from JAX 0.10.2 where noted)."""
    r = Rotation.from_quat(jnp.array(QUATS))
    leaves, treedef = jax.tree_util.tree_flatten(r)
    assert len(leaves) == 1 and jax.tree_util.tree_unflatten(treedef, leaves) == r
    got = jax.jit(lambda r: (r * r).as_matrix())(r)
    np.testing.assert_allclose(got, (SciPyRotation.from_quat(QUATS) ** 2).as_matrix(),
                               atol=1e-5)
    got = jax.vmap(lambda q: Rotation.from_quat(q).as_euler("xyz"))(jnp.array(QUATS[:3]))
    np.testing.assert_allclose(got, SciPyRotation.from_quat(QUATS[:3]).as_euler("xyz"),
                               atol=2e-5)
    got = jax.vmap(lambda r, v: r.apply(v), in_axes=(Rotation(0), None))(r, jnp.ones(3))
    np.testing.assert_allclose(got, SciPyRotation.from_quat(QUATS).apply(np.ones(3)),
                               atol=1e-5)
    keys = Rotation.from_euler("zxy", jnp.array([[90., 0, 0], [0, 45, 0], [0, 0, -30]]),
                               degrees=True)
    slerp = Slerp.init(jnp.array([0., 1., 2.]), keys)
    assert len(jax.tree_util.tree_leaves(slerp)) == 4
    got = jax.jit(lambda s, t: s(t).as_quat())(slerp, jnp.array([0.3, 1.7]))
    np.testing.assert_allclose(got, [[0.1288, 0.0, 0.52829, 0.83924],
                                     [0.11872, -0.18462, 0.0, 0.97561]], atol=1e-4)
    # d/dv of the y component of R(v) (1, 0, 0): recorded from JAX 0.10.2.
    grad = jax.grad(lambda v: Rotation.from_rotvec(v).apply(jnp.array([1., 0., 0.]))[1])(
        jnp.array([0.1, 0.2, 0.3]))
    np.testing.assert_allclose(grad, [0.08881, 0.02937, 0.94675], atol=1e-4)


def test_random() -> None:
    """JAX 0.10.2 raises NotImplementedError; justjax draws as SciPy does (normalized
    Gaussian quaternions): unit quaternions, reproducible per key."""
    one = Rotation.random(jax.random.key(0))
    assert one.single
    many = Rotation.random(jax.random.key(1), 2000)
    np.testing.assert_allclose(jnp.linalg.norm(many.quat, axis=-1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(Rotation.random(jax.random.key(1), 2000).quat, many.quat)
    # Uniform rotations: the mean of the rotation matrices is near 0.
    np.testing.assert_allclose(many.as_matrix().mean(axis=0), np.zeros((3, 3)), atol=0.06)


ERRORS = [  # recorded from JAX 0.10.2
    (lambda r: Rotation.from_euler("xyzx", jnp.zeros(4)), ValueError,
     "Expected axis specification to be a non-empty string of upto 3 characters, got xyzx"),
    (lambda r: Rotation.from_euler("", jnp.zeros(3)), ValueError,
     "Expected axis specification to be a non-empty string of upto 3 characters, got "),
    (lambda r: Rotation.from_euler("xYz", jnp.zeros(3)), ValueError,
     "Expected axes from `seq` to be from ['x', 'y', 'z'] or ['X', 'Y', 'Z'], got xYz"),
    (lambda r: Rotation.from_euler("xxz", jnp.zeros(3)), ValueError,
     "Expected consecutive axes to be different, got xxz"),
    (lambda r: r.as_euler("xy"), ValueError, "Expected 3 axes, got xy."),
    (lambda r: r.as_euler("xax"), ValueError,
     "Expected axes from `seq` to be from ['x', 'y', 'z'] or ['X', 'Y', 'Z'], got xax"),
    (lambda r: r.as_euler("xxy"), ValueError, "Expected consecutive axes to be different, got xxy"),
    (lambda r: r.mean(jnp.ones((5, 1))), ValueError,
     "Expected `weights` to be 1 dimensional, got shape (5, 1)."),
    (lambda r: r.mean(jnp.ones(3)), ValueError,
     "Expected `weights` to have number of values equal to number of rotations, got 3 values "
     "and 5 rotations."),
    (lambda r: len(r[0]), TypeError, "Single rotation has no len()."),
    (lambda r: r[0][0], TypeError, "Single rotation is not subscriptable."),
    (lambda r: Slerp.init([0, 1], r.quat), TypeError, "`rotations` must be a `Rotation` instance."),
    (lambda r: Slerp.init([0], r[:1]), ValueError,
     "`rotations` must be a sequence of at least 2 rotations."),
    (lambda r: Slerp.init([0, 1], r[0]), ValueError,
     "`rotations` must be a sequence of at least 2 rotations."),
    (lambda r: Slerp.init([0, 1], r[:3]), ValueError,
     "Expected number of rotations to be equal to number of timestamps given, got 3 rotations "
     "and 2 timestamps."),
    (lambda r: Slerp.init([[0, 1, 2]], r[:3]), ValueError,
     "Expected times to be specified in a 1 dimensional array, got 2 dimensions."),
    (lambda r: Slerp.init([0, 1, 2], r[:3])(jnp.zeros((2, 2))), ValueError,
     "`times` must be at most 1-dimensional."),
]


@pytest.mark.parametrize("call,error,message", ERRORS)
def test_errors_are_jax(call, error: type, message: str) -> None:
    with pytest.raises(error) as info:
        call(Rotation.from_quat(jnp.array(QUATS)))
    assert str(info.value) == message
