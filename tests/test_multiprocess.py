"""Several processes running one program over MPI (`jax.distributed`): global programs give
the results of one process over the same devices, and failures between processes are
reported within a bounded time. The programs are scripts launched with the venv's
`mpiexec` (from the `mpich` package), 2 processes of 2 devices and 4 processes of 1."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import time

import numpy as np
import pytest

HERE = pathlib.Path(__file__).parent / "multiprocess"
MPIEXEC = pathlib.Path(sys.executable).parent / "mpiexec"
# A run is a few seconds; a hang is what this bounds.
LIMIT = 240


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PMI_", "PMIX_", "OMPI_", "HYDRA_", "MPI_"))}
    env["PYTHONPATH"] = str(HERE.parent.parent)
    env.pop("XLA_FLAGS", None)
    env.pop("JAX_NUM_CPU_DEVICES", None)
    return env


def _run(args: list[str], processes: int | None) -> subprocess.CompletedProcess:
    command = [sys.executable, *args]
    if processes is not None:
        command = [str(MPIEXEC), "-n", str(processes), *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=LIMIT,
                          env=_environment(), cwd=str(HERE))


@pytest.fixture(scope="module")
def one_process(tmp_path_factory):
    out = tmp_path_factory.mktemp("one") / "results.npz"
    done = _run([str(HERE / "programs.py"), str(out), "4"], None)
    assert done.returncode == 0, done.stderr[-3000:]
    return np.load(out)


# Where the order of a floating-point sum is the processes' (their partial sums added by
# MPI's Allreduce), the last bits may differ from one process's run; elsewhere they agree
# bit for bit.
REORDERED_SUMS = {"dp_losses", "dp_w1", "dp_w2", "coll_psum", "coll_psum_scatter",
                  "coll_psum_scatter_columns"}


@pytest.mark.parametrize("processes, local_devices", [(2, 2), (4, 1)])
def test_global_programs_agree_with_one_process(one_process, tmp_path, processes,
                                                local_devices):
    out = tmp_path / "results.npz"
    done = _run([str(HERE / "programs.py"), str(out), "4", str(local_devices)], processes)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    several = np.load(out)
    assert sorted(several.files) == sorted(one_process.files)
    for name in one_process.files:
        if name == "broadcast":
            continue
        want, got = one_process[name], several[name]
        if name in REORDERED_SUMS or name.startswith("fuzz_"):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=name)
        else:
            np.testing.assert_array_equal(got, want, err_msg=name)
    # Process 0's value reached every process (and process 0 wrote what it got).
    np.testing.assert_array_equal(several["broadcast"], np.arange(3))
    np.testing.assert_array_equal(one_process["broadcast"], np.arange(3))
    # A process's only device's all-reduces call MPI from the compiled program; two devices
    # of a process meet in the rendezvous first (the reference backend's kernel).
    native = int(done.stdout.split("NATIVE_ALLREDUCES ")[1].split()[0])
    assert (native > 0) if local_devices == 1 else (native == 0), native


def _fault(mode: str, folder: pathlib.Path) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    done = _run([str(HERE / "faults.py"), mode, str(folder / "report")], 2)
    return done, time.monotonic() - start


def _reports(folder: pathlib.Path) -> list[str]:
    """Every process's reports, process 0's first."""
    return [line for path in sorted(folder.glob("report.*"))
            for line in path.read_text().splitlines()]


@pytest.mark.parametrize("mode, message", [
    ("twice", "RuntimeError: distributed.initialize should only be called once."),
    ("shutdown", "RuntimeError: jax.distributed.initialize() must be called before any JAX "
                 "calls that might initialise the XLA backend."),
    ("after_devices", "RuntimeError: jax.distributed.initialize() must be called before any "
                      "JAX calls that might initialise the XLA backend."),
    ("mismatch", "DistributedError: process {p} of 2 runs a program split over the processes' "
                 "devices, but other processes run a different program at the same point"),
    ("bad_shards", "ValueError: Expected shard shape (2,) doesn't match the single device "
                   "array shape (3,). Shape of Array is float32[8] with sharding"),
    ("bad_dtypes", "ValueError: Input buffers to `Array` must have matching dtypes. Got int32, "
                   "expected float32"),
    ("put_differs", "AssertionError: <class 'numpy.ndarray'> passed to device_put is not "
                    "the same on each process. Make sure you are passing the same value of "
                    "<class 'numpy.ndarray'> on each process.. Expected: [  0.   1.   2.   3. "
                    "100. 101. 102. 103.]; got: "),
    ("closure", "RuntimeError: Closing over jax.Array that spans non-addressable (non "
                "process local) devices is not allowed. Please pass such arrays as arguments "
                "to the function. Got jax.Array: float32[4]"),
    ("mpi_error_native", "DistributedError: an all-reduce over processes [0, 1] failed in "
                         "MPI: Invalid MPI_Op"),
    ("mixed_mesh", "ValueError: When passing host local inputs to pjit, devices connected to "
                   "a single host must form a contiguous subcube of the global device mesh"),
])
def test_bad_input_is_reported_in_every_process(mode, message, tmp_path):
    done, _ = _fault(mode, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    reports = _reports(tmp_path)
    assert len(reports) == 2, done.stdout + done.stderr[-2000:]
    for p, report in enumerate(reports):
        assert report.startswith("REPORTED " + message.format(p=p)), report


def test_a_failing_process_aborts_the_others(tmp_path):
    # Process 1 raises before the collective process 0 waits at: its uncaught exception
    # aborts the MPI job, so process 0 does not wait for the collective timeout (300 s).
    done, seconds = _fault("raises", tmp_path)
    assert done.returncode != 0
    assert "process 1 fails on purpose" in done.stderr
    assert "justjax: process 1 failed; aborting the other 1 process(es)" in done.stderr
    assert seconds < 60


def test_a_killed_process_ends_the_job(tmp_path):
    # The MPI launcher ends the whole job when one of its processes dies (MPICH's Hydra).
    done, seconds = _fault("dies", tmp_path)
    assert done.returncode != 0
    assert seconds < 60


def test_a_process_that_leaves_is_reported_after_the_collective_timeout(tmp_path):
    # Process 1 returns without starting the program: process 0 raises after the 3 s
    # timeout the mode sets, and again at shutdown, which then aborts the job.
    done, seconds = _fault("exits", tmp_path)
    (report,) = _reports(tmp_path)
    assert report.startswith("REPORTED DistributedError: a program split over the processes' "
                             "devices on process 0 of 2 waited more than 3.0 s for the other "
                             "processes")
    assert done.returncode != 0
    assert seconds < 60


@pytest.mark.parametrize("mode, collective", [
    ("stuck", "an all-reduce"),
    # One device per process: the compiled program waits in MPI_Allreduce itself.
    ("stuck_native", "an all-reduce over processes [0, 1]")])
def test_a_collective_that_outlasts_the_timeout_aborts_the_job(tmp_path, mode, collective):
    # Process 1 is stuck in a host callback of the program both started, process 0 waits in
    # the blocking all-reduce after it: the watchdog aborts the job after the 2 s timeout.
    done, seconds = _fault(mode, tmp_path)
    assert done.returncode != 0
    assert (f"justjax: on process 0 of 2, {collective} waited more than 2.0 s for the other "
            "processes") in done.stderr, done.stderr[-3000:]
    assert "aborting the MPI job" in done.stderr
    assert seconds < 60


def test_several_processes_outside_an_mpi_launcher_is_an_error():
    code = ("import justjax as jax\n"
            "try:\n"
            "    jax.distributed.initialize('127.0.0.1:1234', num_processes=2, process_id=0)\n"
            "except RuntimeError as e:\n"
            "    print('REPORTED', e)\n"
            "try:\n"
            "    jax.distributed.initialize()\n"
            "except ValueError as e:\n"
            "    print('REPORTED', e)\n"
            "print(jax.process_count(), jax.process_index(), jax.distributed.is_initialized())\n")
    done = _run(["-c", code], None)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("REPORTED jax.distributed.initialize: 2 processes were asked "
                               "for, but this process was not started by an MPI launcher")
    assert lines[1] == "REPORTED coordinator_address should be defined."
    assert lines[2] == "1 0 False"


def test_the_multiprocess_example_trains_as_one_process(tmp_path):
    # examples/multiprocess_train.py: the loss curve of data-parallel training over 2
    # processes equals the one-process run's (to the rounding of the gradient sum's order).
    example = str(HERE.parent.parent / "examples" / "multiprocess_train.py")
    curves = []
    for processes in (None, 2):
        out = tmp_path / f"losses-{processes}.json"
        done = _run([example, "--epochs", "2", "--losses", str(out)], processes)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "epoch 2: loss" in done.stdout
        curves.append(json.loads(out.read_text()))
    alone, together = curves
    assert len(alone) == 2 and alone[1] < alone[0]
    np.testing.assert_allclose(together, alone, rtol=1e-5)


def test_explicit_arguments_under_mpiexec_must_match_the_job(tmp_path):
    # Each process writes its own file: the launcher may interleave their output lines.
    code = ("import justjax as jax, os, sys\n"
            "rank = int(os.environ['PMI_RANK'])\n"
            "jax.distributed.initialize('127.0.0.1:1234', num_processes=2, process_id=rank)\n"
            "with open(f'{sys.argv[1]}.{rank}', 'w') as out:\n"
            "    print(jax.process_index(), jax.process_count(), jax.local_device_count(),\n"
            "          [d.process_index for d in jax.devices()],\n"
            "          jax.local_devices(process_index=1),\n"
            "          jax.devices()[-1].local_hardware_id, file=out)\n")
    done = _run(["-c", code, str(tmp_path / "out")], 2)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [(tmp_path / f"out.{rank}").read_text().strip() for rank in (0, 1)]
    assert lines == ["0 2 1 [0, 1] [CpuDevice(id=2048)] None",
                     "1 2 1 [0, 1] [CpuDevice(id=2048)] 0"]
