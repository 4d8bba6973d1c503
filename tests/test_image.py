"""jax.image: resize and scale_and_translate against values recorded from JAX 0.10.2 (a
3x4 image `arange(12) ** 1.5`), plus properties: identity resizes, nearest picks pixels,
area halving averages blocks, jit and grad."""
from __future__ import annotations

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax.test_util import check_grads

IMAGE = np.arange(12.0, dtype=np.float32).reshape(3, 4) ** 1.5

RECORDED = {
    ('linear', (5, 7)): [[0.0, 0.3571000099182129, 0.928600013256073, 1.914199948310852, 2.9976000785827637, 4.350500106811523, 5.196199893951416], [3.200000047683716, 3.8685998916625977, 4.938399791717529, 6.323999881744385, 7.786499977111816, 9.472200393676758, 10.525799751281738], [8.0, 9.1358003616333, 10.953200340270996, 12.938599586486816, 14.970000267028809, 17.154800415039062, 18.520299911499023], [16.776500701904297, 18.167800903320312, 20.39389991760254, 22.762300491333008, 25.170000076293945, 27.7101993560791, 29.297800064086914], [22.627399444580078, 24.18910026550293, 26.687700271606445, 29.311399459838867, 31.969900131225586, 34.747100830078125, 36.4828987121582]],
    ('linear', (2, 2)): [[4.3902997970581055, 8.176199913024902], [19.986400604248047, 26.590700149536133]],
    ('cubic', (5, 7)): [[-0.6700000166893005, -0.4163999855518341, 0.14159999787807465, 0.9933000206947327, 2.0871999263763428, 3.573499917984009, 4.369699954986572], [2.0153000354766846, 2.577399969100952, 3.712100028991699, 4.97790002822876, 6.4344000816345215, 8.300399780273438, 9.289899826049805], [7.747700214385986, 8.826399803161621, 10.928299903869629, 12.898500442504883, 14.977999687194824, 17.49970054626465, 18.82360076904297], [17.533700942993164, 18.914499282836914, 21.591299057006836, 24.030500411987305, 26.556400299072266, 29.565900802612305, 31.141000747680664], [23.377399444580078, 24.899599075317383, 27.847400665283203, 30.51729965209961, 33.2682991027832, 36.5265998840332, 38.23030090332031]],
    ('cubic', (2, 2)): [[3.231600046157837, 7.470300197601318], [20.20479965209961, 28.060699462890625]],
    ('lanczos3', (5, 7)): [[-0.41999998688697815, -0.25049999356269836, 0.3287999927997589, 1.052899956703186, 2.2992000579833984, 3.803499937057495, 4.543799877166748], [1.0233999490737915, 1.4570000171661377, 2.5660998821258545, 3.69350004196167, 5.235899925231934, 7.080399990081787, 7.967800140380859], [7.756199836730957, 8.713199615478516, 10.887700080871582, 12.846799850463867, 15.038900375366211, 17.626100540161133, 18.837799072265625], [18.31170082092285, 19.596099853515625, 22.462600708007812, 24.995899200439453, 27.697399139404297, 30.861799240112305, 32.330101013183594], [23.59939956665039, 24.950899124145508, 27.971799850463867, 30.649200439453125, 33.50579833984375, 36.84400177001953, 38.39139938354492]],
    ('lanczos3', (2, 2)): [[2.580399990081787, 6.961400032043457], [20.340900421142578, 28.73189926147461]],
    ('area', (5, 7)): [[0.0, 0.25, 1.0, 1.914199948310852, 2.828399896621704, 4.6041998863220215, 5.196199893951416], [2.6666998863220215, 3.098400115966797, 4.393400192260742, 5.589000225067139, 6.784599781036377, 8.924300193786621, 9.637499809265137], [8.0, 8.795100212097168, 11.180299758911133, 12.938599586486816, 14.696900367736816, 17.56439971923828, 18.520299911499023], [17.75160026550293, 18.745399475097656, 21.7268009185791, 23.85379981994629, 25.98080062866211, 29.36669921875, 30.49530029296875], [22.627399444580078, 23.720600128173828, 27.0, 29.311399459838867, 31.622800827026367, 35.267799377441406, 36.4828987121582]],
    ('area', (2, 2)): [[3.530100107192993, 8.211099624633789], [19.739200592041016, 28.238100051879883]],
    ('cubic-pytorch-noaa', (2, 3)): [[1.4688999652862549, 3.7230000495910645, 7.239200115203857], [20.11750030517578, 25.942899703979492, 32.28739929199219]],
    ('scale_and_translate', (4, 5)): [[0.33329999446868896, 1.3047000169754028, 2.828399896621704, 4.801499843597412, 0.0], [2.9514000415802, 4.44320011138916, 6.388999938964844, 8.72599983215332, 0.0], [8.769200325012207, 11.417699813842773, 14.301300048828125, 17.44700050354004, 0.0], [18.5757999420166, 21.902299880981445, 25.41659927368164, 29.149900436401367, 0.0]],
}


@pytest.mark.parametrize("key", [k for k in RECORDED if k[0] in ("linear", "cubic", "lanczos3",
                                                                  "area")])
def test_resize_matches_jax(key):
    method, shape = key
    np.testing.assert_allclose(jax.image.resize(IMAGE, shape, method), RECORDED[key],
                               rtol=1e-4, atol=1e-4)


def test_cubic_pytorch_and_scale_and_translate_match_jax():
    np.testing.assert_allclose(jax.image.resize(IMAGE, (2, 3), "cubic-pytorch", antialias=False),
                               RECORDED[("cubic-pytorch-noaa", (2, 3))], rtol=1e-4, atol=1e-4)
    got = jax.image.scale_and_translate(IMAGE, (4, 5), (0, 1), jnp.array([1.5, 1.2]),
                                        jnp.array([0.3, -0.5]), "linear")
    np.testing.assert_allclose(got, RECORDED[("scale_and_translate", (4, 5))], rtol=1e-4,
                               atol=1e-4)


def test_resize_properties():
    for method in ["linear", "cubic", "lanczos5", "area", "nearest"]:
        np.testing.assert_allclose(jax.image.resize(IMAGE, IMAGE.shape, method), IMAGE)
    blocks = IMAGE[:2, :4].reshape(1, 2, 2, 2).mean(axis=(1, 3))
    np.testing.assert_allclose(jax.image.resize(IMAGE[:2], (1, 2), "area"), blocks, rtol=1e-6)
    nearest = jax.image.resize(jnp.arange(6).reshape(2, 3), (4, 5), "nearest")
    assert nearest.dtype == jnp.int32
    np.testing.assert_array_equal(nearest, np.arange(6).reshape(2, 3)[[0, 0, 1, 1]][:, [0, 0, 1, 2, 2]])
    batch = np.stack([IMAGE, 2 * IMAGE])[..., None]
    resized = jax.jit(lambda x: jax.image.resize(x, (2, 5, 7, 1), "linear"))(batch)
    np.testing.assert_allclose(resized[1, :, :, 0], 2 * np.asarray(RECORDED[("linear", (5, 7))]),
                               rtol=1e-4, atol=1e-3)


def test_gradients():
    # Resizing is linear in the image: finite differences in float32 need values near 1.
    check_grads(lambda x: jax.image.resize(x, (5, 7), "lanczos3"), (IMAGE / IMAGE.max(),),
                order=2, modes=["fwd", "rev"], atol=1e-2, rtol=1e-2, eps=1e-2)
    check_grads(lambda s: jax.image.scale_and_translate(IMAGE, (4, 5), (0, 1), s, jnp.zeros(2),
                                                        "linear"),
                (jnp.array([1.5, 1.2]),), order=1, modes=["rev"], atol=5e-2, rtol=5e-2)


def test_errors():
    with pytest.raises(ValueError, match="shape must have length equal"):
        jax.image.resize(IMAGE, (2,), "linear")
    with pytest.raises(ValueError, match='Unknown resize method "bogus"'):
        jax.image.resize(IMAGE, (2, 2), "bogus")
    with pytest.raises(ValueError, match="Nearest neighbor resampling is not currently"):
        jax.image.scale_and_translate(IMAGE, (2, 2), (0,), jnp.ones(1), jnp.ones(1), "nearest")
    assert jax.image.ResizeMethod.from_string("bicubic") is jax.image.ResizeMethod.CUBIC
