#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
"""Runs every CTest test labelled `gpu` under compute-sanitizer (memcheck, racecheck, synccheck).

Usage: sanitize-gpu-tests.py BUILD_DIR [--tools memcheck,racecheck,synccheck] [--log DIR]
                             [--only REGEX]
MPI tests get the sanitizer inserted in front of the executable, so every rank is checked.
Tests labelled `no_sanitizer` (their CMakeLists says why) are named and not run; a test or app
run whose program is not built is named NOT BUILT and counts as a failure.
Prints one line per (test, tool) and a table; exits non-zero when any run reports errors.
"""
import argparse
import ctypes
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time


def gpu_tests(build):
    out = subprocess.run(["ctest", "--test-dir", build, "-L", "gpu", "-N", "--show-only=json-v1"],
                         check=True, capture_output=True, text=True).stdout
    for test in json.loads(out).get("tests", []):
        env, labels = {}, []
        for prop in test.get("properties", []):
            if prop["name"] == "ENVIRONMENT":
                env.update(v.split("=", 1) for v in prop["value"])
            elif prop["name"] == "LABELS":
                labels = prop["value"]
        # CTest lists a test whose program is not built without a command.
        yield test["name"], test.get("command"), env, labels


def wrap(command, tool, build):
    """Puts compute-sanitizer in front of the test executable (after mpiexec and its flags)."""
    sanitizer = ["compute-sanitizer", "--tool", tool, "--error-exitcode", "99"]
    if tool == "memcheck":
        # Tests provoke CUDA API errors on purpose (out-of-memory, timing on untimed events);
        # funnel checks every API return itself, so only device-side errors are reported here.
        sanitizer += ["--leak-check", "full", "--report-api-errors", "no"]
    build = os.path.realpath(build)
    for i, arg in enumerate(command):
        if os.path.realpath(arg).startswith(build) and os.access(arg, os.X_OK):
            return command[:i] + sanitizer + command[i:]
    return sanitizer + command


# Tests that only measure speed (large sizes, printed figures) are left out under the sanitizer:
# they check nothing the functional tests do not, and run hundreds of times slower there.
PERF_FILTER = "--gtest_filter=-*Bandwidth*:*Efficiency*:*Benchmark*:*Overlap*:*Throughput*"


def app_runs(build, scratch):
    """funnel-stencil itself under the sanitizer: resident (IPC halos) and streamed modes; what
    the runs write goes under `scratch`."""
    app = os.path.join(build, "bin", "funnel-stencil")
    mpi = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np"]
    common = ["--backend", "cuda", "--quiet"]
    # Time-sliced ranks (no MPS here): --halo-overlap auto is off, so on is asked for once.
    yield "app_heat3d_ipc_4ranks", mpi + ["4", app] + common + [
        "--n", "48,40,36", "--steps", "10", "--halo", "ipc", "--halo-overlap", "on"], {}
    # CUDA graphs with kernel signals (forced: MPS is not running): 80 steps = 10 graphs, the
    # 9th the timed one, whose exchange records its events as graph nodes.
    yield "app_heat3d_graphs_2ranks", mpi + ["2", app] + common + [
        "--n", "32,24,20", "--steps", "80", "--dims", "2,1,1"], {"FUNNEL_HALO_SIGNALS": "kernel"}
    # Two steps per launch (heat3d_two_steps after each 2-deep exchange) in graphs with kernel
    # signals, 4 ranks along x: 27 steps = 3 graphs of 4 pairs, then a pair and a step alone.
    yield "app_heat3d_pairs_4ranks", mpi + ["4", app] + common + [
        "--n", "40,24,20", "--steps", "27", "--dims", "4,1,1", "--steps-per-launch", "2"], {
        "FUNNEL_HALO_SIGNALS": "kernel"}
    # Kernel signals on three axes, one step per launch: one kernel exchanges every face
    # (halo_options::faces_only), in graphs.
    yield "app_heat3d_graphs_8ranks", mpi + ["8", app] + common + [
        "--n", "40,36,32", "--steps", "20", "--dims", "2,2,2"], {"FUNNEL_HALO_SIGNALS": "kernel"}
    # Graphs in the overlapped order (the halo stream forked inside each graph): 4 ranks along
    # x, one step per launch (27 = 3 graphs and 3 overlapped steps alone), and 8 ranks split
    # 2x2x2 in pairs (the inner pair during the exchange, the boundary pairs after it).
    yield "app_heat3d_graph_overlap_4ranks", mpi + ["4", app] + common + [
        "--n", "40,24,20", "--steps", "27", "--dims", "4,1,1", "--halo-overlap", "on"], {
        "FUNNEL_HALO_SIGNALS": "kernel"}
    yield "app_heat3d_graph_overlap_pairs_8ranks", mpi + ["8", app] + common + [
        "--n", "40,36,32", "--steps", "21", "--dims", "2,2,2", "--steps-per-launch", "2",
        "--halo-overlap", "on"], {"FUNNEL_HALO_SIGNALS": "kernel"}
    # Two steps per launch on boxes of more than 2^21 cells (the kernel's shape for large
    # regions), float.
    yield "app_heat3d_pairs_large_2ranks", mpi + ["2", app] + common + [
        "--n", "260,130,130", "--steps", "5", "--dims", "2,1,1", "--dtype", "float",
        "--steps-per-launch", "2"], {}
    # The GPU-ordered IPC path: 8 ranks on one GPU, 3D split (signals on every axis), and
    # jacobi2d's norm read one step late (with a convergence stop that drops a step).
    # Pushed exchanges (the update kernel writes its faces into the neighbours' ghosts and
    # signals): 4 ranks along x, 27 steps = 3 graphs and 3 plain steps; 8 ranks split 2x2x2.
    pushed = {"FUNNEL_HALO_SIGNALS": "kernel", "FUNNEL_HALO_PUSH": "on"}
    yield "app_heat3d_pushed_4ranks", mpi + ["4", app] + common + [
        "--n", "40,24,20", "--steps", "27", "--dims", "4,1,1"], pushed
    yield "app_heat3d_pushed_8ranks", mpi + ["8", app] + common + [
        "--n", "40,36,32", "--steps", "20", "--dims", "2,2,2"], pushed
    yield "app_heat3d_ipc_8ranks", mpi + ["8", app] + common + [
        "--n", "40,36,32", "--steps", "10", "--halo", "ipc", "--dims", "2,2,2"], {}
    # Deep halos: an exchange every 3 steps (the two buffers alternate) and every 4 (one
    # buffer): the arrival handshake, and steps that write ghost cells.
    yield "app_heat3d_ipc_deep3_4ranks", mpi + ["4", app] + common + [
        "--n", "48,20,16", "--steps", "13", "--dims", "4,1,1", "--halo-depth", "3"], {}
    yield "app_heat3d_ipc_deep4_4ranks", mpi + ["4", app] + common + [
        "--n", "40,36,16", "--steps", "13", "--dims", "2,2,1", "--halo-depth", "4"], {}
    yield "app_jacobi2d_2ranks", mpi + ["2", app] + common + [
        "--problem", "jacobi2d", "--n", "256,256", "--steps", "10"], {}
    yield "app_jacobi2d_converge_4ranks", mpi + ["4", app] + common + [
        "-nx", "14", "-ny", "20", "-niter", "400", "-nccheck", "1"], {}
    # Boxes taller than a launch's 65535 blocks along y (rows folded into z): jacobi2d in
    # padded rows of 2 cells, a 2D heat3d.
    yield "app_jacobi2d_tall_2ranks", mpi + ["2", app] + common + [
        "-nx", "6", "-ny", "2200002", "-niter", "3", "-nccheck", "1", "--dims", "2,1",
        "--row-align", "16"], {}
    yield "app_heat3d_tall_2ranks", mpi + ["2", app] + common + [
        "--n", "8,600000,1", "--steps", "3", "--dims", "2,1,1"], {}
    yield "app_heat3d_streamed", mpi + ["1", app] + common + [
        "--n", "48,40,36", "--steps", "6", "--mode", "streamed", "--steps-per-pass", "2"], {}
    # Snapshots behind the steps: device-side copy, download on the output stream, the block
    # written by a thread that waits for the download's event.
    yield "app_heat3d_snapshots", mpi + ["2", app] + common + [
        "--n", "48,40,36", "--steps", "6", "--halo", "ipc", "--output-every", "2",
        "--output-dir", scratch], {}


PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>


def become_subreaper():
    """Makes this script the parent of every process its runs leave behind outside their
    session (a program that calls setsid), so that end_run finds them too."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print(f"sanitizer sweep: not a subreaper ({os.strerror(ctypes.get_errno())}): a run "
              "stopped early may leave processes behind", flush=True)


def processes():
    """(pid, state, parent, session) of every process (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                # Fields after the command (in parentheses): state, ppid, pgrp, session, ...
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        found.append((int(entry), fields[0], int(fields[1]), int(fields[3])))
    return found


def end_run(proc, grace=10.0):
    """Ends a run and everything it started, and returns once all of it is gone.

    The command (mpirun) gets SIGTERM, on which it ends its ranks. mpirun puts each rank in a
    process group of its own, and compute-sanitizer runs its target under a subreaper of its
    own, so neither mpirun's group nor its children are all of the run: what is waited for is
    every process of the run's session (run() starts one) and every orphan adopted by this
    script (become_subreaper). After `grace` seconds whatever of it still runs gets SIGKILL;
    what is still there `grace` seconds later is named, and left. A SIGTERM or Ctrl-C during
    this cleanup is held until it is done (a second Ctrl-C must not leave the run behind).
    """
    held = []
    previous = {sig: signal.signal(sig, lambda signum, _: held.append(signum))
                for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        _end_run(proc, grace)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if held:
        sys.exit(128 + held[0])


def _end_run(proc, grace):
    """end_run's work, with the stop signals held."""
    me = os.getpid()
    proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    seen, quiet = set(), 0
    while True:
        running, exited, listed = [], [], set()
        for pid, state, parent, session in processes():
            listed.add(pid)
            if pid == proc.pid or (parent != me and session != proc.pid):
                continue  # Popen reaps the command itself
            seen.add(pid)
            if state == "Z":
                if parent == me:
                    os.waitpid(pid, os.WNOHANG)
                else:
                    exited.append(pid)
            else:
                running.append(pid)
        # A process half way through its exit can be missing from the listing and back as a
        # zombie a moment later (funnel-stencil killed under the sanitizer on an H200, while it
        # released its GPU context): the run counts as gone after 2 s of empty listings.
        running += [pid for pid in seen - listed if os.path.exists(f"/proc/{pid}")]
        now = time.monotonic()
        if now > deadline:
            exited = []  # a zombie holds no memory, file or GPU; its new parent reaps it
        if proc.poll() is not None and not running and not exited:
            quiet += 1
            if quiet >= 10:
                return
        else:
            quiet = 0
        if now > deadline:
            for pid in running + ([proc.pid] if proc.poll() is None else []):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if now > deadline + grace:  # e.g. a process stuck in the driver, or never reaped
            print(f"sanitizer sweep: processes {sorted(running + exited)} of a stopped run are "
                  f"still there {grace:.0f} s after SIGKILL", flush=True)
            if proc.poll() is None:
                proc.kill()
            return
        time.sleep(0.2)


def run(command, env, timeout):
    """Runs `command`; on a timeout, or when this script is stopped (SIGTERM), the run and all it
    started are ended before this returns or exits (end_run)."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        return subprocess.CompletedProcess(command, proc.returncode, out, err)
    except subprocess.TimeoutExpired:
        end_run(proc)
        try:
            out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:  # a process end_run gave up on still holds a pipe
            proc.stdout.close()
            proc.stderr.close()
            out, err = "", ""
        return subprocess.CompletedProcess(command, 124, out or "", (err or "") + "timed out")
    except BaseException:
        end_run(proc)
        raise


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--tools", default="memcheck,racecheck,synccheck")
    parser.add_argument("--log", default=os.environ.get("OUT", "."))
    parser.add_argument("--only", default="", help="run only the tests whose name matches")
    args = parser.parse_args()
    os.makedirs(args.log, exist_ok=True)
    # A run stopped by `timeout` still removes its scratch directory, after the sanitized run it
    # was waiting for has ended (run).
    become_subreaper()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    with tempfile.TemporaryDirectory(prefix="funnel-sanitize-") as scratch:
        return sweep(args, scratch)


def sweep(args, scratch):
    rows, bad = [], 0
    runs = []
    for name, command, env, labels in gpu_tests(args.build):
        # Tests driven by a script (python) start the app themselves: covered by app_runs.
        if command and os.path.basename(command[0]).startswith(("cmake", "python")):
            continue
        # A test whose subject cannot run under the sanitizer says so by its label (the reason
        # is beside its definition).
        if "no_sanitizer" in labels:
            if not args.only or re.search(args.only, name):
                print(f"{name:28s} {'all':10s} {'not run':12s} labelled no_sanitizer", flush=True)
            continue
        runs.append((name, command, env, True))
    app_built = os.access(os.path.join(args.build, "bin", "funnel-stencil"), os.X_OK)
    runs += [(name, command if app_built else None, env, False)
             for name, command, env in app_runs(args.build, scratch)]
    for name, command, env, gtest in runs:
        if args.only and not re.search(args.only, name):
            continue
        if command is None:  # not checked, so not clean either
            bad += 1
            rows.append((name, "all", "NOT BUILT", "", 0.0))
            print(f"{name:28s} {'all':10s} {'NOT BUILT':12s} build its target first", flush=True)
            continue
        for tool in args.tools.split(","):
            start = time.time()
            proc = run(wrap(command, tool, args.build) + ([PERF_FILTER] if gtest else []),
                        {**os.environ, **env}, timeout=150)
            text = proc.stdout + proc.stderr
            with open(os.path.join(args.log, f"sanitizer-{name}-{tool}.log"), "w") as f:
                f.write(text)
            summary = [l for l in text.splitlines() if "ERROR SUMMARY" in l]
            verdict = "skipped" if proc.returncode == 77 else ("clean" if proc.returncode == 0 else
                                                              f"FAIL rc={proc.returncode}")
            if verdict.startswith("FAIL"):
                bad += 1
            rows.append((name, tool, verdict, summary[-1].strip() if summary else "", time.time() - start))
            print(f"{name:28s} {tool:10s} {verdict:12s} {rows[-1][3]}", flush=True)
    print(f"\nsanitizer: {len(rows) - bad} clean/skipped, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
