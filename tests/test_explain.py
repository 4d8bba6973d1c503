"""The pipeline explorer (`_src/explain/`): every stage of the seed examples, the fusion
graph as SVG, the HTML report rendered in headless Chromium, and the command line."""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

import justjax as jax
from justjax._src.explain import cli as explain_cli
from justjax._src.hlo.passes import optimize

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from examples import seeds  # noqa: E402

RNG = np.random.default_rng(0)
X = RNG.standard_normal(1000).astype(np.float32)
PREDICT_ARGS = [RNG.standard_normal(s).astype(np.float32) * 0.1
                for s in ((784, 256), (256,), (256, 10), (10,), (128, 784))]


@pytest.fixture(scope="module")
def predict():
    return jax.explain(seeds.predict, *PREDICT_ARGS)


def test_every_stage_of_x_times_two_plus_one():
    e = jax.explain(seeds.double_plus_one, X)
    assert str(e.jaxpr) == str(jax.make_jaxpr(seeds.double_plus_one)(X))
    assert "stablehlo.multiply" in e.stablehlo and "stablehlo.add" in e.stablehlo
    # The pipeline's passes in order; the fixed point's inner ones each time they ran.
    pipeline = optimize.default_passes()
    names = [p.name for p in e.passes]
    assert [n for n in names if not n.startswith("simplification: ")] == [
        p.name for p in pipeline if p.name != "simplification"]
    fixed_point = next(p for p in pipeline if p.name == "simplification")
    inner = [n for n in names if n.startswith("simplification: ")]
    assert inner == [f"simplification: {p.name} (round 1)" for p in fixed_point.passes]
    assert e.optimized_hlo == jax.jit(seeds.double_plus_one).lower(X).compile().as_text()
    (kernel,) = e.kernels
    assert kernel.opcode == "fusion" and kernel.kind == "loop fusion"
    assert kernel.flops == 2 * X.size and kernel.bytes == 2 * X.nbytes
    assert kernel.seconds is not None and kernel.seconds > 0
    assert "define" in kernel.llvm_ir and kernel.functions[0] in kernel.llvm_ir
    assert kernel.asm.startswith(kernel.functions[0] + ":") and "ret" in kernel.asm
    assert e.edges == [("Arg_0", kernel.name, "f32[1000]{0}", 4000),
                       (kernel.name, "result", "f32[1000]{0}", 4000)]
    text = str(e)
    for heading in ("-- jaxpr --", "-- StableHLO:", "-- passes --", "-- optimized HLO --",
                    "-- kernels: 1 (1 fusions) --", "flops/byte"):
        assert heading in text


def test_passes_record_what_they_changed():
    e = jax.explain(seeds.double_plus_one, X)
    fusion = next(p for p in e.passes if p.name == "fusion")
    assert fusion.changed and fusion.ops_after < fusion.ops_before
    assert "+" in fusion.diff and "hlo.fusion" in fusion.text
    unchanged = [p for p in e.passes if not p.changed]
    assert all(p.diff == "" for p in unchanged)


def test_kernels_of_the_mlp_and_their_buffers(predict):
    kinds = [k.kind for k in predict.kernels]
    assert kinds.count("dot (BLAS)") == 2 and len(predict.fusions) >= 3
    first_dot = next(k for k in predict.kernels if k.kind == "dot (BLAS)")
    assert set(first_dot.operands) == {"Arg_0", "Arg_4"}
    assert ("Arg_4", first_dot.name, "f32[128,784]{1,0}", 128 * 784 * 4) in predict.edges
    assert first_dot.flops == 2 * 128 * 784 * 256 and first_dot.intensity > 10
    assert all(k.seconds is not None and k.seconds > 0 for k in predict.kernels)


def test_fusion_graph_svg_names_every_kernel_and_buffer(predict):
    svg = predict.svg()
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    for k in predict.kernels:
        assert f'data-name="{k.name}"' in svg
    assert svg.count('class="buffer"') == len(predict.edges)
    assert "f32[128,784] 392.0 KiB" in svg


def test_html_report_is_self_contained(predict, tmp_path):
    path = tmp_path / "report.html"
    predict.save_html(str(path))
    page = path.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page
    assert "src=" not in page and "href=" not in page and "<script" not in page
    for heading in ("Fusion graph", "Kernels", "jaxpr", "StableHLO", "Optimizing passes",
                    "Optimized HLO", "LLVM IR (optimized)", "assembly"):
        assert heading in page


def test_reference_backend_has_no_machine_code():
    with jax.config.override("jax_platforms", "reference"):
        e = jax.explain(seeds.double_plus_one, X)
    assert e.backend == "reference" and e.kernels[0].seconds is None
    assert e.kernels[0].kind == "loop fusion"
    assert not e.kernels[0].llvm_ir and "no machine code" in e.notes[0]


def test_shape_dtype_structs_explain_without_running():
    e = jax.explain(seeds.double_plus_one, jax.ShapeDtypeStruct((8,), np.float32))
    assert e.seconds_per_call is None and e.kernels[0].seconds is None
    assert e.kernels[0].llvm_ir


# ---------------------------------------------------------------------------------------------
# The command line.

def test_parse_spec():
    assert explain_cli.parse_spec("f32[128,784]") == (np.dtype(np.float32), (128, 784))
    assert explain_cli.parse_spec("i32[]") == (np.dtype(np.int32), ())
    assert explain_cli.parse_spec("bf16[4]")[0].name == "bfloat16"
    # Without x64, as with jnp.asarray: 64-bit types become 32-bit ones.
    assert explain_cli.parse_spec("f64[2]")[0] == np.dtype(np.float32)
    for bad in ("f32", "f32[a]", "q7[2]"):
        with pytest.raises(ValueError, match="--arg"):
            explain_cli.parse_spec(bad)


def test_command_line_explains_a_function_and_writes_html(tmp_path, capsys):
    html = tmp_path / "chain.html"
    code = explain_cli.main(["explain", "examples.seeds:grad_chain", "--arg", "f32[4096]",
                             "--html", str(html)])
    out = capsys.readouterr().out
    assert code == 0 and "-- kernels:" in out and "multiply_add_fusion" in out
    assert html.exists() and "multiply_add_fusion" in html.read_text()


def test_command_line_errors(capsys):
    for argv, message in [(["explain", "examples.seeds"], "MODULE:FUNCTION"),
                          (["explain", "examples.seeds:nope", "--arg", "f32[2]"], "has no"),
                          (["explain", "examples.seeds:predict", "--arg", "f32[x]"],
                           "expected a dtype")]:
        with pytest.raises(SystemExit) as exit_info:
            explain_cli.main(argv)
        assert exit_info.value.code == 2
        assert message in capsys.readouterr().err


def test_python_dash_m_justjax_from_a_file_path(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "justjax", "explain", "examples/seeds.py:double_plus_one",
         "--arg", "f32[16]", "--no-time"], cwd=ROOT, capture_output=True, text=True,
        timeout=300)
    assert result.returncode == 0, result.stderr
    assert "-- kernels: 1 (1 fusions) --" in result.stdout


# ---------------------------------------------------------------------------------------------
# The report as a person sees it: rendered by headless Chromium.

def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def chromium():
    """Debian's Chromium, installed with apt-get when it is missing (as root); the test is
    skipped only where it cannot be installed."""
    found = _chromium()
    if found is None and shutil.which("apt-get") and os.geteuid() == 0:
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        for command in (["apt-get", "update", "-qq"],
                        ["apt-get", "install", "-y", "-qq", "chromium"]):
            subprocess.run(command, env=env, capture_output=True, timeout=900)
        found = _chromium()
    if found is None:
        pytest.skip("Chromium is not installed and cannot be installed here")
    return found


def _headless(chromium: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", *args], capture_output=True, text=True,
                          timeout=120)


def test_report_renders_its_fusion_graph_in_chromium(chromium, predict, tmp_path):
    page = tmp_path / "predict.html"
    predict.save_html(str(page))
    dom = _headless(chromium, "--dump-dom", page.as_uri()).stdout
    svg = dom[dom.index("<svg"):dom.index("</svg>")]
    for k in predict.kernels:
        assert f">{k.name}<" in svg
    shot = tmp_path / "predict.png"
    _headless(chromium, f"--screenshot={shot}", "--window-size=1200,1400", page.as_uri())
    import matplotlib.image
    pixels = (matplotlib.image.imread(str(shot))[..., :3] * 255).round().astype(int)
    colours = {tuple(p) for p in pixels.reshape(-1, 3)[::7]}
    # The boxes are drawn: a loop fusion's fill and a BLAS dot's.
    assert (0xdb, 0xea, 0xfe) in colours and (0xff, 0xed, 0xd5) in colours


def test_a_program_holding_a_pmap_is_explained_untimed_per_kernel():
    with jax.config.override("jax_num_cpu_devices", 4):
        fun = jax.pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i")
        e = jax.explain(fun, np.ones((4, 2), np.float32))
    assert "collective, run by the reference backend" in [k.kind for k in e.kernels]
    assert e.seconds_per_call is not None and all(k.seconds is None for k in e.kernels)
    assert "SPMD" in e.notes[0]
