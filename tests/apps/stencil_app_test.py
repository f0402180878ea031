#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
"""Runs funnel-stencil under real mpirun and checks what it computes (driver for ctest).

  [opts] equal -- RANKS ARGS... the field of RANKS ranks is bitwise the field of 1 rank (with
                            --row-align given: of 1 rank on its default rows; exit 77 for
                            --backend cuda without a GPU)
  order  -- ARGS...         heat3d error falls at second order in space (observed order in
                            [1.8, 2.2] for h -> h/2 at a fixed final time)
  bad-args                  each bad argument: non-zero exit, one clear line, no hang
  restart -- ARGS...        2 ranks write checkpoints, 3 ranks restart from the first one:
                            the final field is bitwise that of an uninterrupted run (with
                            --row-align given: only the writers take it, so the checkpoint
                            of padded rows restarts into the default rows)
  gpu -- ARGS...            cuda backend == host within tolerance; 2 and 4 ranks with IPC
                            halos on one GPU == 1 rank bitwise (exit 77 without a GPU)
  signal -- ARGS...         SIGUSR1 to mpirun: checkpoint + exit 75; restart from it is
                            bitwise equal to an uninterrupted run
  streamed -- [--gpu] RANKS ARGS...
                            --mode streamed on RANKS ranks (ARGS carry --steps-per-pass,
                            --chunks, ...) is bitwise the resident host field of 1 rank; with
                            --gpu the streamed run uses the cuda backend (exit 77 without GPU)
  trace -- RANKS ARGS...    --trace writes valid Chrome trace JSON: h2d/kernel/d2h spans of
                            every chunk of every pass on every rank, with bytes and chunk ids
  kokkos -- RANKS ARGS...   --kernel kokkos on RANKS ranks == the backend's own kernel (host or
                            cuda) on 1 rank: the field bitwise (same arithmetic per cell),
                            heat3d's error and jacobi2d's norm within 1e-5 relative (reductions
                            in another order); the plan names the Kokkos execution space (exit
                            77 for --backend cuda without a GPU)
  snapshots -- RANKS ARGS...
                            snapshots every 4 of 12 steps, written behind the steps
                            (--output-overlap on) and inline (off), read back with h5py: each
                            bitwise the field of a run stopped at its step (exit 77 without
                            h5py, or for --backend cuda without a GPU)
Common options: --app PATH --mpiexec PATH --np-flag FLAG [--preflags ...] [--workdir DIR]
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

from driver_support import gpu_visible, ranks_of
from proctree import end_tree, run_job  # noqa: E402 (driver_support puts tests/support on the path)

TIMEOUT = 120


def mpirun(ctx, ranks, args, check=True):
    cmd = [ctx.mpiexec, ctx.np_flag, str(ranks)] + ctx.preflags + [ctx.app] + args
    proc = run_job(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                   timeout=TIMEOUT, cwd=ctx.workdir)
    if check and proc.returncode != 0:
        sys.exit(f"FAILED ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
    return proc


def dump(ctx, ranks, args, name):
    path = os.path.join(ctx.workdir, name)
    if os.path.exists(path):
        os.remove(path)
    out = mpirun(ctx, ranks, args + ["--quiet", "--field-dump", path]).stdout
    with open(path, "rb") as f:
        data = f.read()
    if not data:
        sys.exit(f"FAILED: {name} is empty")
    return data, out


def without_option(args, *names):
    """args without each named option and the value after it."""
    kept = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a in names:
            skip = True
            continue
        kept.append(a)
    return kept


def cmd_equal(ctx, rest):
    ranks = int(rest[0])
    args = rest[1:]
    skip_without_gpu(args)
    # The reference always runs with one rank and MPI's own split, one step per launch and its
    # default rows: drop --dims, --steps-per-launch and --row-align for it.
    ref_args = without_option(args, "--dims", "--steps-per-launch", "--row-align")
    reference, ref_out = dump(ctx, 1, ref_args, "reference.bin")
    split, split_out = dump(ctx, ranks, args, f"split-{ranks}.bin")
    print(split_out)
    expect_plan(split_out, f"{ranks} ranks")
    if len(reference) != len(split):
        sys.exit(f"FAILED: {len(split)} bytes with {ranks} ranks, {len(reference)} with 1 rank")
    if reference != split:
        first = next(i for i in range(len(split)) if split[i] != reference[i])
        sys.exit(f"FAILED: fields differ from byte {first} on ({ranks} ranks vs 1 rank)")
    # The fields must not be trivially equal (e.g. all zero).
    if reference.count(0) == len(reference):
        sys.exit("FAILED: the field is all zero")
    print(f"OK: {len(split)} bytes equal bitwise between {ranks} ranks and 1 rank")


def expect_plan(out, who):
    """STENCIL_EXPECT_PLAN: text the plan `out` of a run must hold (e.g. that its rows are
    padded), so that a run equal to its reference also did what it was asked."""
    expect = os.environ.get("STENCIL_EXPECT_PLAN")
    if expect and expect not in out:
        sys.exit(f"FAILED: {who}: the plan does not say '{expect}'")


def summary(ctx, ranks, args, name):
    path = os.path.join(ctx.workdir, name)
    mpirun(ctx, ranks, args + ["--quiet", "--summary", path])
    with open(path) as f:
        return json.load(f)


def cmd_order(ctx, rest):
    ranks = int(rest[0])
    args = rest[1:]
    # h = 1/(N+1) halves from level to level; dt ~ h^2, so 4x the steps keeps the final time.
    levels = [(15, 40), (31, 160), (63, 640)]
    errors = []
    for n, steps in levels:
        s = summary(ctx, ranks, args + ["--n", f"{n},{n},{n}", "--steps", str(steps)],
                    f"order-{n}.json")
        errors.append(s["error"]["l2"])
        print(f"N={n} steps={steps} L2 error {s['error']['l2']:.6e} max {s['error']['max_abs']:.6e}")
    ok = True
    for coarse, fine in zip(errors, errors[1:]):
        order = math.log2(coarse / fine)
        print(f"observed order {order:.3f}")
        ok = ok and 1.8 <= order <= 2.2
    if not ok:
        sys.exit("FAILED: observed order outside [1.8, 2.2]")


BAD_ARGS = [
    (["--steps", "abc"], "--steps 'abc' is not valid"),
    (["--n", "0,4,4"], "--n '0,4,4' is not valid"),
    (["--problem", "heat2d"], "heat3d|jacobi2d"),
    (["--dtype", "half"], "float|double"),
    (["--backend", "gpu"], "--backend 'gpu' is not valid"),
    (["--frobnicate"], "unknown option '--frobnicate'"),
    (["--problem", "jacobi2d", "--dtype", "double"], "--dtype 'double'"),
    (["--backend", "host", "--kernel", "cuda"], "--kernel 'cuda'"),
    (["--backend", "host", "--n", "8,8,8", "--dims", "3,1,1"], "must equal"),
    (["--backend", "host", "--n", "8,1,1", "--dims", "1,2,1"], "only 1 cell"),
    (["--chunks", "3"], "--mode streamed"),
    (["--config", "/nonexistent/funnel.conf"], "--config '/nonexistent/funnel.conf'"),
    (["--mode", "streamed", "--chunks", "0"], "--chunks '0' is not valid"),
    (["--mode", "streamed", "--streams", "0"], "--streams '0' is not valid"),
    (["--mode", "streamed", "--steps-per-pass", "0"], "--steps-per-pass '0' is not valid"),
    (["--mode", "streamed", "--pool-limit", "12Q"], "--pool-limit '12Q' is not valid"),
    (["--mode", "streamed", "--problem", "jacobi2d"], "--mode 'streamed'"),
    (["--steps-per-pass", "2"], "--mode streamed"),
    (["--halo-depth", "0"], "--halo-depth '0' is not valid"),
    (["--halo-depth", "17"], "--halo-depth '17' is not valid"),
    (["--halo-depth", "deep"], "--halo-depth 'deep' is not valid"),
    (["--mode", "streamed", "--halo-depth", "2"], "--halo-depth 2 is not valid here"),
    (["--problem", "jacobi2d", "--halo-depth", "2"], "--halo-depth 2 is not valid here"),
    (["--backend", "host", "--n", "8,8,8", "--dims", "2,1,1", "--halo-depth", "5"],
     "--halo-depth 5: halo 5 is wider"),
    (["--row-align", "8"], "--row-align '8' is not valid"),
    (["--mode", "streamed", "--row-align", "16"], "--row-align 16: applies to --mode resident"),
    (["--steps-per-launch", "3"], "--steps-per-launch '3' is not valid"),
    (["--steps-per-launch", "two"], "--steps-per-launch 'two' is not valid"),
    (["--problem", "jacobi2d", "--steps-per-launch", "2"], "--steps-per-launch 2 is not valid here"),
    (["--mode", "streamed", "--steps-per-launch", "1"], "--steps-per-launch 1 is not valid here"),
    (["--steps-per-launch", "2", "--halo-depth", "3"],
     "--steps-per-launch 2 needs --halo-depth 2 or auto, not 3"),
    (["--backend", "host", "--n", "8,8,1", "--steps-per-launch", "2"],
     "needs a 3D grid (every --n extent >= 2), not --n 8,8,1"),
    (["--backend", "host", "--n", "3,8,8", "--dims", "2,1,1", "--steps-per-launch", "2"],
     "--steps-per-launch 2: splitting 3 cells along x over 2 ranks leaves boxes of 1 cell"),
    # k*h = 3 planes per chunk: 13 planes give at most 4 chunks.
    (["--backend", "host", "--n", "23,18,13", "--mode", "streamed", "--steps-per-pass", "3",
      "--chunks", "5"], "--mode streamed on rank"),
    # 2 x 3 slots of one plane each (8960 bytes) do not fit 20 KiB.
    (["--backend", "host", "--n", "23,18,13", "--mode", "streamed", "--pool-limit", "20K"],
     "--mode streamed on rank"),
]


def cmd_bad_args(ctx, rest):
    ranks = int(rest[0]) if rest else 2
    failures = []
    for args, fragment in BAD_ARGS:
        try:
            proc = mpirun(ctx, ranks, args + ["--steps", "1"] if "--steps" not in args else args,
                          check=False)
        except subprocess.TimeoutExpired:
            failures.append(f"{args}: hung (no exit within {TIMEOUT} s)")
            continue
        lines = [l for l in proc.stderr.splitlines() if l.startswith("funnel-stencil:")]
        print(f"{' '.join(args)} -> exit {proc.returncode}: {lines[:1]}")
        if proc.returncode == 0:
            failures.append(f"{args}: exit status 0")
        elif not any(fragment in l for l in lines):
            failures.append(f"{args}: no 'funnel-stencil:' line with '{fragment}' in:\n"
                            f"{proc.stderr}")
        elif "--" in fragment and len(lines) != 1:
            # Option errors are reported once, by one rank.
            failures.append(f"{args}: {len(lines)} error lines, expected 1:\n{proc.stderr}")
    if failures:
        sys.exit("FAILED:\n" + "\n".join(failures))


def skip_without_gpu(args):
    """Exit 77 (skipped) when args ask for the cuda backend and no GPU is visible."""
    if "cuda" in args and not gpu_visible():
        print("skipped: --backend cuda and no GPU visible")
        sys.exit(77)


def cmd_restart(ctx, rest):
    args = rest
    skip_without_gpu(args)
    ckpt = os.path.join(ctx.workdir, "ckpt")
    writers = mpirun(ctx, 2, args + ["--quiet", "--steps", "10", "--checkpoint-every", "5",
                                     "--checkpoint-dir", ckpt, "--keep", "3"])
    expect_plan(writers.stdout, "the 2 writers")
    first = os.path.join(ckpt, "ckpt-00000005")
    if not os.path.isdir(first):
        sys.exit(f"FAILED: no checkpoint {first}: {os.listdir(ckpt)}")
    # Files hold the interior only: the writers' --row-align does not reach the readers.
    args = without_option(args, "--row-align")
    uninterrupted, _ = dump(ctx, 1, args + ["--steps", "16"], "uninterrupted.bin")
    restarted, out = dump(ctx, 3, args + ["--steps", "16", "--restart", first,
                                          "--checkpoint-dir", os.path.join(ctx.workdir, "c2")],
                          "restarted.bin")
    if restarted != uninterrupted:
        sys.exit("FAILED: restarted field (3 ranks from a 2-rank checkpoint) differs")
    print("OK: 2 ranks -> checkpoint at step 5 -> 3 ranks to step 16 == 1 rank to step 16")


def cmd_signal(ctx, rest):
    import re
    import signal
    import time
    args = rest
    skip_without_gpu(args)
    ckpt = os.path.join(ctx.workdir, "ckpt")
    cmd = ([ctx.mpiexec, ctx.np_flag, "2"] + ctx.preflags + [ctx.app] + args +
           ["--quiet", "--steps", "100000000", "--checkpoint-dir", ckpt])
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ctx.workdir)
    # The plan is printed just before the first step.
    for line in proc.stdout:
        if line.startswith("  halo:"):
            break
    time.sleep(0.5)
    # To mpirun and to every process under it: some mpirun builds (seen with OpenMPI 4.1.6 on
    # the GPU machine) do not forward SIGUSR1 to the ranks. The app must stop once whichever
    # copy arrives first.
    ranks = ranks_of(proc.pid, ctx.app)
    print(f"SIGUSR1 to mpirun and to {len(ranks)} rank(s) below it")
    for pid in [proc.pid] + ranks:
        try:
            os.kill(pid, signal.SIGUSR1)
        except ProcessLookupError:
            pass
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        end_tree(proc)
        sys.exit("FAILED: no exit within the timeout after SIGUSR1")
    print(out, err)
    if proc.returncode != 75:
        sys.exit(f"FAILED: exit status {proc.returncode} after SIGUSR1, expected 75")
    match = re.search(r"stopped by a signal at step (\d+)", out)
    if not match:
        sys.exit("FAILED: no 'stopped by a signal at step N' line")
    step = int(match.group(1))
    target = step + 7
    uninterrupted, _ = dump(ctx, 1, args + ["--steps", str(target)], "uninterrupted.bin")
    restarted, _ = dump(ctx, 2, args + ["--steps", str(target), "--restart", ckpt,
                                        "--checkpoint-dir", os.path.join(ctx.workdir, "c2")],
                        "restarted.bin")
    if restarted != uninterrupted:
        sys.exit("FAILED: field restarted from the signal checkpoint differs")
    print(f"OK: SIGUSR1 at step {step} -> exit 75 -> restart to step {target} is bitwise equal")


STREAMED_ONLY = {"--mode": 1, "--steps-per-pass": 1, "--chunks": 1, "--streams": 1,
                 "--trace": 1, "--pool-limit": 1, "--dims": 1}


def without(args, drop):
    """args without the options in drop (name -> number of values)."""
    kept, skip = [], 0
    for a in args:
        if skip:
            skip -= 1
        elif a in drop:
            skip = drop[a]
        else:
            kept.append(a)
    return kept


def cmd_streamed(ctx, rest):
    """Streamed on RANKS ranks == resident on 1 rank, bitwise (same kernel, same cells)."""
    on_gpu = rest[0] == "--gpu"
    if on_gpu:
        rest = rest[1:]
        if not gpu_visible():
            print("skipped: no GPU visible")
            sys.exit(77)
    ranks = int(rest[0])
    args = rest[1:]
    # The streamed field is initialised on the host (it lives there), and the stencil updates
    # are bitwise equal across kernel implementations, so the reference is the resident host
    # field: on a GPU, the CUDA kernel on chunks must reproduce it bit for bit. (The resident
    # CUDA field starts from the device's sin(), a few ulp away.)
    reference, _ = dump(ctx, 1, ["--backend", "host"] + without(args, STREAMED_ONLY),
                        "resident.bin")
    backend = ["--backend", "cuda" if on_gpu else "host"]
    streamed, out = dump(ctx, ranks, backend + args + ["--mode", "streamed"],
                         f"streamed-{ranks}.bin")
    print(out)
    if "pipeline" not in out:
        sys.exit("FAILED: the streamed run printed no pipeline line")
    if len(reference) != len(streamed):
        sys.exit(f"FAILED: {len(streamed)} bytes streamed, {len(reference)} resident")
    if reference != streamed:
        first = next(i for i in range(len(streamed)) if streamed[i] != reference[i])
        sys.exit(f"FAILED: streamed ({ranks} ranks) differs from resident (1 rank) from byte "
                 f"{first}")
    if reference.count(0) == len(reference):
        sys.exit("FAILED: the field is all zero")
    print(f"OK: {len(streamed)} bytes, streamed on {ranks} ranks == resident on 1 rank")


def cmd_trace(ctx, rest):
    """--trace: one valid JSON document with every chunk's h2d, kernel and d2h on every rank."""
    ranks = int(rest[0])
    args = rest[1:]
    path = os.path.join(ctx.workdir, "trace.json")
    summary_path = os.path.join(ctx.workdir, "summary.json")
    mpirun(ctx, ranks, args + ["--mode", "streamed", "--quiet", "--trace", path,
                               "--summary", summary_path])
    with open(path) as f:
        trace = json.load(f)
    with open(summary_path) as f:
        pipeline = json.load(f)["pipeline"]
    chunks = int(args[args.index("--chunks") + 1])
    passes = pipeline["passes"]
    spans = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    failures = []
    for kind in ("h2d", "kernel", "d2h"):
        mine = [e for e in spans if e["name"] == kind]
        if len(mine) != ranks * passes * chunks:
            failures.append(f"{len(mine)} '{kind}' spans, expected {ranks} ranks x {passes} "
                            f"passes x {chunks} chunks")
        if {e["pid"] for e in mine} != set(range(ranks)):
            failures.append(f"'{kind}' spans of ranks {sorted({e['pid'] for e in mine})}")
        for e in mine:
            if e["dur"] < 0 or e["ts"] < 0 or not 0 <= e["args"].get("chunk", -1) < chunks:
                failures.append(f"bad span {e}")
                break
            if kind != "kernel" and e["args"].get("bytes", 0) <= 0:
                failures.append(f"'{kind}' span without bytes: {e}")
                break
    if not 0 < pipeline["efficiency"] <= 1.0 + 1e-9:
        failures.append(f"pipeline efficiency {pipeline['efficiency']} outside (0, 1]")
    if failures:
        sys.exit("FAILED:\n" + "\n".join(failures))
    print(f"OK: {len(spans)} spans from {ranks} ranks, {passes} passes of {chunks} chunks")


def cmd_kokkos(ctx, rest):
    """--kernel kokkos on RANKS ranks: the field of the backend's own kernel on 1 rank, bit for
    bit."""
    ranks = int(rest[0])
    args = rest[1:]
    skip_without_gpu(args)
    own = "cuda" if "cuda" in args else "host"
    # The reference: 1 rank with MPI's split, no Kokkos options.
    plain = [a for a in without(args, {"--dims": 1}) if not a.startswith("--kokkos-")]
    reference, _ = dump(ctx, 1, plain + ["--kernel", own], f"{own}.bin")
    ref_summary = summary(ctx, 1, plain + ["--kernel", own], f"{own}.json")
    field, out = dump(ctx, ranks, args + ["--kernel", "kokkos"], f"kokkos-{ranks}.bin")
    kokkos_summary = summary(ctx, ranks, args + ["--kernel", "kokkos"], "kokkos.json")
    print(out)
    failures = []
    if "kernel kokkos (Kokkos " not in out:
        failures.append("the plan does not name the Kokkos execution space")
    if kokkos_summary["kernel"] != "kokkos":
        failures.append(f"summary kernel {kokkos_summary['kernel']}")
    if field != reference:
        failures.append(f"the field of --kernel kokkos on {ranks} ranks differs from --kernel {own}")
    if reference.count(0) == len(reference):
        failures.append("the field is all zero")
    for key in ("final_norm", "error"):
        if key not in ref_summary:
            continue
        want = ref_summary[key] if key == "final_norm" else ref_summary[key]["l2"]
        got = kokkos_summary[key] if key == "final_norm" else kokkos_summary[key]["l2"]
        print(f"{key}: {own} {want!r}, kokkos {got!r}")
        if abs(got - want) > 1e-5 * abs(want):
            failures.append(f"{key} {got} vs {want}: more than 1e-5 relative apart")
    if failures:
        sys.exit("FAILED:\n" + "\n".join(failures))
    print(f"OK: --kernel kokkos on {ranks} rank(s) == --kernel {own} on 1 rank, {len(field)} bytes")


def read_values(data, dtype):
    import struct
    code = "f" if dtype == "float" else "d"
    return struct.unpack(f"{len(data) // struct.calcsize(code)}{code}", data)


def cmd_gpu(ctx, rest):
    """cuda backend == host within the kernels' tolerance; IPC halos (or the --halo given) on
    one GPU == 1 rank.

    2, 4 and 8 ranks share the GPU (time-sliced: no funnel-run here).
    """
    if not gpu_visible():
        print("skipped: no GPU visible")
        sys.exit(77)
    args = rest
    # One GPU for every rank, also on a node of several: these ranks are to share it.
    first = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0] or "0"
    os.environ["CUDA_VISIBLE_DEVICES"] = first
    dtype = "float" if "float" in args or "jacobi2d" in args or "-nx" in args else "double"
    # The stencil updates are bitwise equal across implementations; only the initial sin()
    # values of the two math libraries differ by a few ulp, and the explicit steps do not
    # amplify them (the update is a convex combination).
    tolerance = 1e-5 if dtype == "float" else 1e-12
    # The references take one step per launch: the split runs are compared with that.
    one = without_option(args, "--steps-per-launch")
    host, _ = dump(ctx, 1, one + ["--backend", "host"], "host.bin")
    cuda, out = dump(ctx, 1, one + ["--backend", "cuda"], "cuda.bin")
    print(out)
    if len(host) != len(cuda):
        sys.exit("FAILED: host and cuda fields differ in size")
    worst = max(abs(a - b) for a, b in zip(read_values(host, dtype), read_values(cuda, dtype)))
    print(f"max |cuda - host| = {worst:.3e} (tolerance {tolerance:.0e})")
    if worst > tolerance:
        sys.exit("FAILED: cuda backend differs from host beyond the tolerance")
    # IPC halos unless the case names its path (e.g. staged MPI).
    halo = [] if "--halo" in args else ["--halo", "ipc"]
    for ranks in (2, 4, 8):
        split, out = dump(ctx, ranks, args + ["--backend", "cuda"] + halo,
                          f"cuda-ipc-{ranks}.bin")
        print(out)
        # Without MPS these ranks are time-sliced, and --halo-overlap auto turns overlap off.
        if ", MPS no" in out and "--halo-overlap" not in args and \
                "time-sliced)" not in out:
            sys.exit(f"FAILED: {ranks} time-sliced ranks: the plan does not say that "
                     "--halo-overlap auto chose the exchange-then-update step")
        # STENCIL_EXPECT_PLAN / STENCIL_REFUSE_PLAN: text the split runs' plan must (not) hold,
        # e.g. that their graphs push the exchange from the update kernel.
        expect_plan(out, f"{ranks} ranks")
        refuse = os.environ.get("STENCIL_REFUSE_PLAN")
        if refuse and refuse in out:
            sys.exit(f"FAILED: {ranks} ranks: the plan says '{refuse}'")
        path = "IPC" if halo else "the given"
        if split != cuda:
            sys.exit(f"FAILED: {ranks} ranks with {path} halos on the GPU differ from 1 rank")
        print(f"OK: {ranks} ranks, {path} halos, bitwise equal to 1 rank on the GPU")


def snapshot_reader(ctx):
    """read(path, dataset) -> (step attribute, values as raw C-order bytes): h5py when the
    python has it, else --h5-reader (the HDF5 C library, no funnel code); exit 77 without both."""
    try:
        import h5py

        def read_h5py(path, dataset):
            with h5py.File(path, "r") as h5:
                return int(h5.attrs["step"]), h5[dataset][()].tobytes()
        return read_h5py
    except ImportError as missing:
        if not ctx.h5_reader:
            print(f"skipped: {missing} (install python3-h5py) and no --h5-reader")
            sys.exit(77)

    def read_tool(path, dataset):
        raw = os.path.join(ctx.workdir, "dataset.bin")
        out = subprocess.run([ctx.h5_reader, path, dataset, raw], check=True, text=True,
                             stdout=subprocess.PIPE).stdout
        with open(raw, "rb") as f:
            return int(out.split()[1]), f.read()
    return read_tool


def cmd_snapshots(ctx, rest):
    """Snapshots read back with h5py == the field dump of runs stopped at the snapshot steps.

    With --output-overlap on, the field of step S is downloaded and written while steps S+1...
    run: a snapshot holding any later step's values, or torn between two steps, differs.
    """
    read = snapshot_reader(ctx)
    ranks = int(rest[0])
    args = rest[1:]
    skip_without_gpu(args)
    every, steps = 4, 12
    heat = "jacobi2d" not in args and "-nx" not in args
    series, field = ("heat3d", "u") if heat else ("jacobi2d", "a")
    fallback_expected = "--pool-limit" in args and "cuda" in args
    written = {}
    for overlap in ("on", "off"):
        directory = os.path.join(ctx.workdir, f"out-{overlap}")
        summary_file = os.path.join(ctx.workdir, f"summary-{overlap}.json")
        proc = mpirun(ctx, ranks, args + ["--quiet", "--steps", str(steps), "--output-every",
                                          str(every), "--output-dir", directory,
                                          "--output-overlap", overlap, "--summary",
                                          summary_file])
        with open(summary_file) as f:
            summary = json.load(f)
        background = summary["output_background_time_s"]
        if (background > 0) != (overlap == "on"):
            sys.exit(f"FAILED: --output-overlap {overlap}: {background} s written in the "
                     "background")
        told = "snapshot downloads not overlapped" in proc.stderr
        if overlap == "on" and told != fallback_expected:
            sys.exit(f"FAILED: fallback message {'missing' if fallback_expected else 'printed'}"
                     f"\n{proc.stderr}")
        with open(os.path.join(directory, f"{series}.xmf")) as f:
            index = f.read()
        for step in range(every, steps + 1, every):
            name = f"{series}-{step:08d}.h5"
            if name not in index:
                sys.exit(f"FAILED: {series}.xmf does not list {name}")
            stored_step, values = read(os.path.join(directory, name), field)
            if stored_step != step:
                sys.exit(f"FAILED: {name} has step {stored_step}")
            written[(overlap, step)] = values
        print(f"--output-overlap {overlap}: {steps // every} snapshots, {background:.4f} s "
              "written behind the steps")
    for step in range(every, steps + 1, every):
        reference, _ = dump(ctx, ranks, args + ["--steps", str(step)], f"step-{step}.bin")
        for overlap in ("on", "off"):
            if written[(overlap, step)] != reference:
                sys.exit(f"FAILED: snapshot of step {step} (--output-overlap {overlap}) is not "
                         f"the field of a run stopped at step {step}")
    print(f"OK: snapshots of steps {list(range(every, steps + 1, every))} on {ranks} ranks, "
          "overlapped and inline, bitwise equal to the fields of runs stopped there")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["equal", "order", "bad-args", "restart", "signal", "gpu",
                                            "streamed", "trace", "snapshots", "kokkos"])
    parser.add_argument("--app", required=True)
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--np-flag", default="-np")
    parser.add_argument("--preflags", default="")
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--h5-reader", default=None,
                        help="snapshots: HDF5 dataset reader used when h5py is missing")
    parser.add_argument("rest", nargs=argparse.REMAINDER)
    ctx = parser.parse_args()
    ctx.preflags = ctx.preflags.split()
    rest = ctx.rest[1:] if ctx.rest and ctx.rest[0] == "--" else ctx.rest
    with tempfile.TemporaryDirectory(prefix="funnel-stencil-test-") as tmp:
        ctx.workdir = ctx.workdir or tmp
        commands = {"equal": cmd_equal, "order": cmd_order, "bad-args": cmd_bad_args,
                    "restart": cmd_restart, "signal": cmd_signal, "gpu": cmd_gpu,
                    "streamed": cmd_streamed, "trace": cmd_trace, "snapshots": cmd_snapshots,
                    "kokkos": cmd_kokkos}
        commands[ctx.command](ctx, rest)


if __name__ == "__main__":
    main()
