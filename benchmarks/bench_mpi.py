"""Collectives between processes (issue #26): a psum of float32 buffers from 4 KiB to 64 MiB
across 2 processes (1 device each), justjax's jitted `shard_map` psum against raw mpi4py's
`Allreduce` on the same buffers, measured side by side in the same processes, interleaved
size by size over several rounds (the median ratio and its band over the rounds); then the
data-parallel training step of `examples/multiprocess_train.py` on 1, 2 and 4 processes.

Run: `.venv/bin/python benchmarks/bench_mpi.py [--rounds 3] [--no-train]` (it starts itself
under the venv's `mpiexec -n 2`). The machine's cores bound the speed-up of the training
step: with 2 cores, 4 processes share them.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import subprocess
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
MPIEXEC = pathlib.Path(sys.executable).parent / "mpiexec"
SIZES = [4 << 10, 64 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20]
UNDER_MPI = "PMI_RANK" in os.environ


def _repeats(nbytes: int) -> int:
    return max(5, min(200, (256 << 20) // (nbytes * 8)))


def _median_seconds(call, repeats: int, barrier) -> float:
    samples = []
    for _ in range(repeats):
        barrier()  # both processes start each sample together
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return float(np.median(samples))


def psum_worker(rounds: int) -> None:
    import justjax as jax
    from justjax.sharding import Mesh, NamedSharding, PartitionSpec as P
    from mpi4py import MPI

    jax.config.update("jax_num_cpu_devices", 1)
    jax.distributed.initialize()
    comm = MPI.COMM_WORLD
    me = comm.Get_rank()
    mesh = Mesh(np.array(jax.devices()), ("x",))
    sharding = NamedSharding(mesh, P("x"))
    psum = jax.jit(jax.shard_map(lambda v: jax.lax.psum(v, "x"), mesh=mesh, in_specs=P("x"),
                                 out_specs=P("x")))
    table: dict[int, list[tuple[float, float]]] = {n: [] for n in SIZES}
    for _ in range(rounds):
        for nbytes in SIZES:
            count = nbytes // 4
            local = np.random.default_rng(me).standard_normal(count).astype(np.float32)
            out = np.empty_like(local)
            x = jax.make_array_from_process_local_data(sharding, local)
            expected = np.empty_like(local)
            comm.Allreduce(local, expected, op=MPI.SUM)
            got = np.asarray(psum(x).addressable_data(0))
            np.testing.assert_allclose(got, expected, rtol=1e-6)
            repeats = _repeats(nbytes)
            raw = _median_seconds(lambda: comm.Allreduce(local, out, op=MPI.SUM), repeats,
                                  comm.Barrier)
            ours = _median_seconds(lambda: psum(x).block_until_ready(), repeats, comm.Barrier)
            table[nbytes].append((ours, raw))
    if me == 0:
        print(f"psum across 2 processes (1 device each), median of each size's samples; "
              f"ratio: median over {rounds} rounds [band]")
        print("| f32 buffer | justjax | mpi4py Allreduce | justjax / mpi4py |")
        print("| --- | --- | --- | --- |")
        for nbytes, runs in table.items():
            ratios = [o / r for o, r in runs]
            ours = np.median([o for o, _ in runs])
            raw = np.median([r for _, r in runs])
            print(f"| {_size(nbytes)} | {_time(ours)} | {_time(raw)} | "
                  f"{np.median(ratios):.2f}× [{min(ratios):.2f}–{max(ratios):.2f}] |")
    jax.distributed.shutdown()


def _size(nbytes: int) -> str:
    return f"{nbytes >> 20} MiB" if nbytes >= 1 << 20 else f"{nbytes >> 10} KiB"


def _time(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.1f} µs"


def train_steps(epochs: int) -> None:
    print("\nData-parallel step of examples/multiprocess_train.py (batch 64 split over the "
          "processes, 1 device each)")
    print("| processes | ms per step |")
    print("| --- | --- |")
    example = str(ROOT / "examples" / "multiprocess_train.py")
    for processes in (1, 2, 4):
        command = [sys.executable, example, "--epochs", str(epochs)]
        if processes > 1:
            command = [str(MPIEXEC), "-n", str(processes), *command]
        done = subprocess.run(command, capture_output=True, text=True, check=True,
                              timeout=600)
        per_step = re.search(r"\(([\d.]+) ms per step\)", done.stdout)
        print(f"| {processes} | {per_step.group(1) if per_step else '?'} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--no-train", action="store_true")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        psum_worker(options.rounds)
        return
    subprocess.run([str(MPIEXEC), "-n", "2", sys.executable, __file__, "--worker",
                    "--rounds", str(options.rounds)], check=True, timeout=1800)
    if not options.no_train:
        train_steps(options.epochs)


if __name__ == "__main__":
    main()
