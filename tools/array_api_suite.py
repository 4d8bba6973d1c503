"""Runs the array API standard's test suite on `jax.numpy` and on `justjax.numpy`, and compares.

The suite (data-apis/array-api-tests, with its `array-api` spec submodule checked out) is not
part of this repository: pass the folder it lives in. Each side runs pytest in its own
interpreter with the same settings (`ARRAY_API_TESTS_VERSION`, `JAX_ENABLE_X64=1`,
`--max-examples`, `--derandomize` so both draw the same examples), and pytest-json-report
records every test's outcome. Both interpreters need the suite's requirements (`hypothesis`,
`ndindex`, `pytest-json-report`); `--extra-path` puts a folder of them on the justjax side's
path without installing into its venv.

Usage:
  python tools/array_api_suite.py /work/scratch/array-api-tests \\
      --jax-python /work/jaxvenv/bin/python --justjax-python /work/main/.venv/bin/python \\
      --extra-path /work/scratch/aat-deps --out /tmp/aat
  ... --sides justjax --jax-report /tmp/aat/jax.json   (reuse a real-JAX run)
  ... --tests array_api_tests/test_signatures.py -k atan2   (a subset)

Prints pass/fail/skip counts for both sides, the tests failing (or not run) on justjax only
with the first line of each failure, and the tests passing on justjax only.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import pathlib
import subprocess
import sys

_SRC = pathlib.Path(__file__).resolve().parent.parent / "src"
_MODULES = {"jax": "jax.numpy", "justjax": "justjax.numpy"}


def run_side(side: str, python: str, args: argparse.Namespace) -> pathlib.Path:
    """Runs the suite with one namespace and returns the path of its JSON report.

    Args:
      side: "jax" or "justjax".
      python: the interpreter to run pytest with.
      args: the command line (suite path, tests, settings, output folder).

    Returns:
      The pytest-json-report file written.
    """
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = out / f"{side}.json"
    env = dict(os.environ)
    env.update(ARRAY_API_TESTS_MODULE=_MODULES[side], JAX_ENABLE_X64="1",
               ARRAY_API_TESTS_VERSION=args.version, JAX_PLATFORMS="cpu")
    if side == "justjax":
        path = [str(_SRC)] + ([args.extra_path] if args.extra_path else [])
        env["PYTHONPATH"] = os.pathsep.join(path + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    else:
        env.pop("PYTHONPATH", None)
    cmd = [python, "-m", "pytest", *args.tests, "-q", "-p", "no:cacheprovider",
           f"--max-examples={args.max_examples}", "--derandomize", "--disable-deadline",
           "--json-report", f"--json-report-file={report}", "--json-report-omit", "log",
           "streams", "collectors", "keywords"]
    if args.k:
        cmd += ["-k", args.k]
    with open(out / f"{side}.log", "w") as log:
        subprocess.run(cmd, cwd=args.suite, env=env, stdout=log, stderr=subprocess.STDOUT,
                       check=False)
    return report


def outcomes(report: pathlib.Path) -> dict[str, tuple[str, str]]:
    """Reads a JSON report into {test id: (outcome, first line of the failure or skip)}."""
    data = json.loads(report.read_text())
    result = {}
    for test in data.get("tests", []):
        why = ""
        for stage in ("setup", "call", "teardown"):
            info = test.get(stage) or {}
            crash = info.get("crash") or {}
            if info.get("outcome") in ("failed", "skipped") and (crash or info.get("longrepr")):
                why = crash.get("message") or str(info.get("longrepr"))
                break
        result[test["nodeid"]] = (test["outcome"], why.strip().splitlines()[0] if why else "")
    return result


def summarize(name: str, res: dict[str, tuple[str, str]]) -> str:
    """One line of counts per outcome."""
    counts = collections.Counter(outcome for outcome, _ in res.values())
    parts = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    return f"{name:8s} {len(res)} tests: {parts}"


def compare(jax_res: dict, jj_res: dict) -> None:
    """Prints the counts and the tests whose outcomes differ."""
    print(summarize("jax", jax_res))
    print(summarize("justjax", jj_res))
    only_jj_bad = [t for t, (o, _) in sorted(jax_res.items())
                   if o == "passed" and jj_res.get(t, ("missing", ""))[0] != "passed"]
    print(f"\npassing on jax, not on justjax: {len(only_jj_bad)}")
    for t in only_jj_bad:
        outcome, why = jj_res.get(t, ("not collected", ""))
        print(f"  [{outcome}] {t}\n      {why[:200]}")
    only_jj_good = [t for t, (o, _) in sorted(jj_res.items())
                    if o == "passed" and jax_res.get(t, ("missing", ""))[0] != "passed"]
    print(f"\npassing on justjax, not on jax: {len(only_jj_good)}")
    for t in only_jj_good:
        print(f"  {t}  (jax: {jax_res.get(t, ('not collected', ''))[0]})")


def main() -> None:
    """Parses the command line, runs the requested sides and compares them."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suite", help="folder of data-apis/array-api-tests (with array-api/)")
    parser.add_argument("--tests", nargs="*", default=["array_api_tests"],
                        help="test files or ids, relative to the suite")
    parser.add_argument("-k", default="", help="pytest -k expression")
    parser.add_argument("--max-examples", type=int, default=10)
    parser.add_argument("--version", default="2024.12", help="ARRAY_API_TESTS_VERSION")
    parser.add_argument("--jax-python", default="/work/jaxvenv/bin/python")
    parser.add_argument("--justjax-python", default=sys.executable)
    parser.add_argument("--extra-path", default="",
                        help="folder with the suite's requirements for the justjax side")
    parser.add_argument("--out", default="/tmp/array_api_suite")
    parser.add_argument("--sides", nargs="*", default=["jax", "justjax"])
    parser.add_argument("--jax-report", default="", help="reuse this real-JAX JSON report")
    args = parser.parse_args()
    reports = {}
    if args.jax_report:
        reports["jax"] = pathlib.Path(args.jax_report)
    for side in args.sides:
        if side in reports:
            continue
        python = args.jax_python if side == "jax" else args.justjax_python
        reports[side] = run_side(side, python, args)
    results = {side: outcomes(path) for side, path in reports.items()}
    if "jax" in results and "justjax" in results:
        compare(results["jax"], results["justjax"])
    else:
        for side, res in results.items():
            print(summarize(side, res))


if __name__ == "__main__":
    main()
