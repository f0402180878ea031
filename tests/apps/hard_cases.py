#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
"""funnel-stencil on a bad day: each case ends with one clear line (or the right status), never a
hang, a crash, MPI's abort banner or a line per rank (driver for ctest, host backend).

  trace RANKS         --mode streamed --trace to a path that cannot be opened (exit 2, before the
                      run) or written (/dev/full: exit 1 at the end, every rank agreeing)
  config-files RANKS  --config naming a FIFO, a directory, a device, an empty device or a file
                      over the size cap: exit 2 naming what it is; a good file runs
  tiny-grid RANKS     grids no kernel can update (--n 1,1,1, 1,64,64, -ny 3) refused before the
                      run, and -nx 4 -ny 4 on more ranks than cells: exit 2, one line (was
                      MPI_ERR_DIMS from MPI's fatal handler, then a kernel's line per box)
  early-signal RANKS  SIGUSR1 to every rank as soon as its handler is installed (before MPI_Init
                      returns): exit 75 ("before the first step"), never killed by the signal
  exit-codes RANKS    every status of the table in --help and docs/stencil.md is produced: 0 (a
                      run), 1 (a runtime error), 2 (a usage error), 75 (a signal)
  messages RANKS      echoed input is escaped and cut (control bytes, NUL, a 500 KB config line,
                      a 100 KB argument); sizes that overflow 64 bits are refused with the values
                      as given, never a wrapped product
  mutations SEED N    N seeded mutations of a valid --config (1 rank, every 10th on 3): each run
                      ends 0 with exactly the fields the file says (read independently), or with
                      one clean line (exit 1 or 2); the seed is printed
Options: --app PATH --mpiexec PATH [--docs docs/stencil.md] [--backend host|cuda] (cuda: the
GPU machine's run of the trace case; exit 77 without a GPU)
"""
import argparse
import concurrent.futures
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

from driver_support import check, exit_status, failures, ranks_of
from mpi_dirs import own_mpi_dirs  # noqa: E402 (driver_support puts tests/support on the path)
from proctree import end_tree, run_job  # noqa: E402

TIMEOUT = 90


def run(ctx, ranks, args, timeout=TIMEOUT, env=None, cwd=None):
    """The app on `ranks` ranks (1: without mpirun, an MPI singleton); (status, stdout, stderr),
    status None for a run that did not end in time."""
    cmd = ([ctx.mpiexec, "-np", str(ranks)] if ranks > 1 else []) + [ctx.app] + args
    # Open MPI's directories of its own: the mutation cases start runs side by side, and one
    # ending removed the top directory another was starting in ("orte_ess_init failed").
    env = own_mpi_dirs(tempfile.mkdtemp(prefix="tmp-", dir=ctx.workdir), env)
    try:
        proc = run_job(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout, cwd=cwd or ctx.workdir, env=env)
    except subprocess.TimeoutExpired:
        return None, "", ""
    return (proc.returncode, proc.stdout.decode(errors="replace"),
            proc.stderr.decode(errors="replace"))


def error_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("funnel-stencil:")]


def expect_one_line(what, result, status, fragments=()):
    """Exit `status` with exactly one 'funnel-stencil:' line holding every fragment, at most 400
    characters and no control character, and no MPI abort banner."""
    code, _, err = result
    if not check(code is not None, f"{what}: no exit within {TIMEOUT} s"):
        return None
    lines = error_lines(err)
    print(f"{what}: exit {code}: {lines[:1]}")
    check(code == status, f"{what}: exit {code}, expected {status}\n{err[-2000:]}")
    if not check(len(lines) == 1, f"{what}: {len(lines)} error lines, expected 1:\n{err[-2000:]}"):
        return None
    line = lines[0]
    check(len(line) <= 400, f"{what}: a line of {len(line)} characters")
    check(not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", line), f"{what}: control bytes in {line!r}")
    check("MPI_ABORT" not in err and "MPI_ERRORS_ARE_FATAL" not in err,
          f"{what}: MPI's abort banner:\n{err[-2000:]}")
    for fragment in fragments:
        check(fragment in line, f"{what}: '{fragment}' not in {line!r}")
    return line


TINY = ["--backend", "host", "--n", "12,10,8", "--steps", "3", "--quiet"]


def case_trace(ctx, ranks):
    streamed = TINY + ["--mode", "streamed", "--backend", ctx.backend]
    expect_one_line("--trace in a missing directory", run(
        ctx, ranks, streamed + ["--trace", os.path.join(ctx.workdir, "no", "trace.json")]), 2,
        ["--trace", "No such file or directory"])
    expect_one_line("--trace /dev/full", run(ctx, ranks, streamed + ["--trace", "/dev/full"]), 1,
                    ["/dev/full", "No space left on device"])


def case_config_files(ctx, ranks):
    fifo = os.path.join(ctx.workdir, "fifo.conf")
    os.mkfifo(fifo)
    big = os.path.join(ctx.workdir, "big.conf")
    with open(big, "w") as f:
        f.write("# padding\n" * 150000)  # 1.5 MB of comments: over the 1 MiB cap
    for path, kind in ((fifo, "a FIFO"), (ctx.workdir, "a directory"),
                       ("/dev/zero", "a character device"), ("/dev/null", "a character device"),
                       (big, "bytes")):
        expect_one_line(f"--config {path}", run(ctx, ranks, TINY + ["--config", path]), 2,
                        ["--config", kind])
    good = os.path.join(ctx.workdir, "good.conf")
    with open(good, "w") as f:
        f.write("steps = 2  # a comment\nn = 9,8,7\n")
    summary = os.path.join(ctx.workdir, "good.json")
    code, _, err = run(ctx, ranks, ["--backend", "host", "--steps", "3", "--quiet", "--config",
                                    good, "--summary", summary])
    if check(code == 0, f"a good --config: exit {code}\n{err}"):
        with open(summary) as f:
            # The command line wins (--steps 3), the file gives the rest.
            shown = json.load(f)
        check(shown["last_step"] == 3 and shown["global_cells"] == [9, 8, 7],
              f"a good --config: summary {shown['last_step']}, {shown['global_cells']}")


def case_tiny_grid(ctx, ranks):
    # Grids the kernels cannot update are refused before the run, on any number of ranks.
    for args, fragments in ((["--n", "1,1,1"], ["--n '1,1,1'", "more than one cell"]),
                            (["--n", "1,64,64"], ["--n '1,64,64'", "axes of one cell last"]),
                            (["-nx", "64", "-ny", "3"], ["-ny '3'", ">= 4"])):
        expect_one_line(" ".join(args), run(ctx, ranks, ["--backend", "host", "--steps", "2"] +
                                            args), 2, fragments)
    if ranks > 1:
        # A valid grid with fewer cells than ranks along the split.
        expect_one_line("-nx 4 -ny 4", run(ctx, ranks, ["--backend", "host", "--steps", "2",
                                                        "-nx", "4", "-ny", "4"]),
                        2, ["more ranks than cells", f"{ranks} ranks"])


def catches_usr1(pid):
    """True once the process has a handler for SIGUSR1 (bit 10 of SigCgt in /proc/PID/status)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            caught = next(l for l in f if l.startswith("SigCgt:")).split()[1]
        return (int(caught, 16) >> (signal.SIGUSR1 - 1)) & 1 == 1
    except (OSError, StopIteration):
        return False


def case_early_signal(ctx, ranks):
    cmd = ([ctx.mpiexec, "-np", str(ranks)] if ranks > 1 else []) + [ctx.app] + [
        "--backend", "host", "--n", "24,20,16", "--steps", "100000000", "--quiet",
        "--checkpoint-dir", os.path.join(ctx.workdir, "ckpt")]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ctx.workdir)
    signalled = set()
    deadline = time.time() + 30
    while len(signalled) < ranks and time.time() < deadline and proc.poll() is None:
        for pid in ranks_of(proc.pid, ctx.app) if ranks > 1 else [proc.pid]:
            if pid not in signalled and catches_usr1(pid):
                os.kill(pid, signal.SIGUSR1)
                signalled.add(pid)
        time.sleep(0.001)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        end_tree(proc)
        check(False, "no exit after the early SIGUSR1")
        return
    print(out, err)
    check(len(signalled) == ranks, f"signalled {len(signalled)} of {ranks} ranks")
    check(proc.returncode == 75, f"exit {proc.returncode} after an early SIGUSR1, expected 75")
    check("stopped by a signal before the first step" in out,
          "no 'stopped by a signal before the first step' line")
    check(not os.path.exists(os.path.join(ctx.workdir, "ckpt", "latest")),
          "a checkpoint was written for step 0")
    check("destroyed without close" not in err,
          "a rank stopped before its first step left its halo exchange open:\n" + err[-800:])


def exit_table(text):
    """The statuses listed under the line that starts with 'exit status' (--help) or the heading
    '## Exit status' (docs), up to the next heading: rows starting with a number."""
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if re.match(r"(## )?[Ee]xit status", l))
    codes = set()
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        match = re.match(r"\s*\|?\s*`?(\d+)`?\s", line)
        if match:
            codes.add(int(match.group(1)))
    return sorted(codes)


def case_exit_codes(ctx, ranks):
    help_text = subprocess.run([ctx.app, "--help"], stdout=subprocess.PIPE, text=True).stdout
    produced = {}
    produced[0] = run(ctx, ranks, TINY)[0]
    produced[1] = run(ctx, ranks, TINY + ["--summary", "/dev/full"])[0]
    produced[2] = run(ctx, ranks, TINY + ["--steps", "-1"])[0]
    with tempfile.TemporaryDirectory(dir=ctx.workdir) as sub:
        early = argparse.Namespace(**vars(ctx))
        early.workdir = sub
        produced[75] = None
        before = len(failures)
        case_early_signal(early, ranks)
        produced[75] = 75 if len(failures) == before else "no"
    print("produced:", produced)
    for code, got in produced.items():
        check(got == code, f"status {code} was not produced (got {got})")
    table = exit_table(help_text)
    check(table == sorted(produced), f"--help's exit status table {table} != {sorted(produced)}")
    if ctx.docs:
        with open(ctx.docs) as f:
            docs = exit_table(f.read())
        check(docs == sorted(produced), f"{ctx.docs}'s exit status table {docs}")


def case_messages(ctx, ranks):
    noisy = "".join(chr(c) for c in range(1, 32)) + "\x7f'\\" + "x" * 100000
    line = expect_one_line("a 100 KB value with control bytes",
                           run(ctx, ranks, TINY + ["--dims", noisy]), 2, ["--dims '\\x01\\x02"])
    if line:
        check(f"{len(noisy)} bytes" in line, f"the cut value does not say its length: {line!r}")
    config = os.path.join(ctx.workdir, "noisy.conf")
    with open(config, "wb") as f:
        f.write(b"steps = 2\n" + b"n = 4,4,\x00\x01\x1b[31m" + b"9" * 500000 + b"\n")
    # Checked although the command line gives --n too.
    expect_one_line("a 500 KB config line with NUL and escapes",
                    run(ctx, ranks, TINY + ["--config", config]), 2, [":2: n '4,4,\\x00\\x01"])
    # Every rank fails, each with its own message (allocations of different sizes under a
    # pool limit: boxes of 3, 2 and 2 cells along x): still one line, from the lowest rank.
    if ranks > 1:
        expect_one_line("--pool-limit 3 on unequal boxes",
                        run(ctx, ranks, ["--backend", "host", "--n", f"{2 * ranks + 1},5,4",
                                         "--dims", f"{ranks},1,1", "--steps", "2",
                                         "--pool-limit", "3"]), 1,
                        ["rank 0: out of memory", f"all {ranks} ranks failed"])
    # Sizes beyond 64 bits: refused, naming the values as given.
    for args, fragment in ((["-nx", "2000000000", "-ny", "2000000000"], "2000000000,2000000000"),
                           (["--n", "3037000500,3037000500,3037000500"], "3037000500"),
                           (["--dims", "2000000,2000000,2000000"], "8000000000000000000"),
                           (["--dims", "2147483647,2147483647,2147483647"], "more than 2^63")):
        line = expect_one_line(" ".join(args), run(ctx, ranks, ["--backend", "host"] + args), 2,
                               [fragment])
        if line:
            check(not re.search(r"\d\.\d+e\+?\d", line), f"a float-formatted size: {line!r}")
            for number in re.findall(r"\d{20,}", line):
                check(int(number) < 2**64 and number in " ".join(args),
                      f"a number not given and beyond 64 bits: {number}")


# ---- seeded config mutations ------------------------------------------------------------------
KEYS = ["problem", "n", "steps", "dtype", "backend", "kernel", "mode", "halo",
        "halo-overlap", "graphs", "dims",
        "check-every", "output-every", "output-dir", "output-overlap", "checkpoint-every",
        "checkpoint-dir", "keep", "restart", "streams", "chunks", "steps-per-pass", "trace",
        "pool-limit", "field-dump", "summary", "quiet", "nx", "ny", "niter", "nccheck"]
VALUES = ["heat3d", "jacobi2d", "float", "double", "host", "cuda", "kokkos", "resident",
          "streamed", "auto", "ipc", "mpi", "on", "off", "true", "false", "0", "1", "2", "3", "-1",
          "+2", "007", "2.5", "1e3", "4,4", "4,4,4", "4,4,4,4", "0,0,0", "1,1,2", "5,,5",
          "9223372036854775807", "9223372036854775808", "99999999999999999999", "64K", "12Q",
          "", " ", "=", "#", "x" * 3000, "\x00", "é", "\\", "'"]
BASE = ("# funnel-stencil config\nproblem = heat3d\nn = 6,5,4\nsteps = 2\ndtype = double\n"
        "backend = host\nmode = resident\nhalo = auto\ndims = 0,0,0\ncheck-every = 1\n"
        "keep = 2\nquiet = true\n")


def mutate(rng, text):
    data = bytearray(text.encode(errors="surrogateescape"))
    kind = rng.randrange(8)
    lines = text.split("\n")
    if kind == 0 and data:  # flip bytes
        for _ in range(rng.randint(1, 3)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data)
    if kind == 1 and data:  # delete a range
        at = rng.randrange(len(data))
        del data[at:at + rng.randint(1, 8)]
        return bytes(data)
    if kind == 2:  # insert bytes
        at = rng.randrange(len(data) + 1)
        data[at:at] = bytes(rng.choice(b"\x00\n#=, 9-a\x1b\xff") for _ in range(rng.randint(1, 4)))
        return bytes(data)
    if kind == 3:  # duplicate a line
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
    elif kind == 4:  # another value
        i = rng.randrange(len(lines))
        key = lines[i].split("=")[0]
        lines[i] = f"{key}= {rng.choice(VALUES)}"
    elif kind == 5:  # another key
        i = rng.randrange(len(lines))
        lines[i] = rng.choice(KEYS + ["speed", "Steps", "--steps", "config"]) + " =" + \
            lines[i].split("=", 1)[-1]
    elif kind == 6:  # truncate
        return bytes(data[:rng.randrange(len(data) + 1)])
    else:  # a new line
        lines.insert(rng.randrange(len(lines) + 1), f"{rng.choice(KEYS)} = {rng.choice(VALUES)}")
    return "\n".join(lines).encode(errors="surrogateescape")


def read_config(data):
    """The file as the documented format reads it: {key: value}, or None when a line has no '='
    or a key is repeated (errors the app must report)."""
    out = {}
    for raw in data.split(b"\n"):
        line = raw.split(b"#", 1)[0].strip(b" \t\r")
        if not line:
            continue
        if b"=" not in line:
            return None
        key, value = (part.strip(b" \t\r") for part in line.split(b"=", 1))
        if key in out:
            return None
        out[key] = value
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in out.items()}


def as_int(text):
    return int(text) if re.fullmatch(r"[+-]?\d+", text) else None


def too_big(cfg):
    """True when a valid file would ask for a long or large run (not run: the test is short)."""
    try:
        steps = as_int(cfg.get("steps", cfg.get("niter", "2")))
        sizes = [as_int(x) for x in cfg.get("n", "6,5,4").split(",")]
        cells = 1
        for s in sizes:
            cells *= max(s or 1, 1)
        return (steps or 0) > 1000 or 10**5 < cells < 10**12
    except (ValueError, AttributeError):
        return False


def expected_fields(cfg):
    """What a run that ended 0 must show in its summary, from the file alone."""
    problem = cfg.get("problem", "heat3d")
    if "nx" in cfg or "ny" in cfg:
        problem = cfg.get("problem", "jacobi2d")
    want = {"problem": problem, "backend": "host"}
    if "dtype" in cfg:
        want["dtype"] = cfg["dtype"]
    if "mode" in cfg:
        want["mode"] = cfg["mode"]
    if "kernel" in cfg:
        want["kernel"] = cfg["kernel"]
    steps = as_int(cfg.get("steps", cfg.get("niter", "")))
    if steps is not None and problem == "heat3d":
        want["last_step"] = steps
    if problem == "heat3d" and "n" in cfg:
        n = [int(x) for x in cfg["n"].split(",")]
        want["global_cells"] = n + [1] * (3 - len(n))
    dims = cfg.get("dims", "0,0,0").split(",")
    if all(as_int(d) for d in dims):
        want["decomposition"] = [int(d) for d in dims] + [1] * (3 - len(dims))
    return want


def case_mutations(ctx, seed, count):
    print(f"seed {seed}: rerun with 'mutations {seed} {count}'")
    rng = random.Random(seed)
    cases = []
    outcomes = {}
    for i in range(count):
        data = mutate(rng, BASE)
        while rng.random() < 0.3:
            data = mutate(rng, data.decode(errors="surrogateescape"))
        cfg = read_config(data)
        if cfg is not None and too_big(cfg):
            outcomes["not run (large)"] = outcomes.get("not run (large)", 0) + 1
            continue
        cases.append((i, data, cfg))

    def attempt(case):
        i, data, _ = case
        # Each run in a folder of its own: a file the config names by a relative path (a trace,
        # a field dump) is not shared with the run beside it.
        cwd = os.path.join(ctx.workdir, f"run{i}")
        os.mkdir(cwd)
        path = os.path.join(ctx.workdir, f"m{i}.conf")
        with open(path, "wb") as f:
            f.write(data)
        summary = os.path.join(ctx.workdir, f"m{i}.json")
        ranks = 3 if i % 10 == 0 else 1
        args = ["--config", path, "--summary", summary, "--checkpoint-dir",
                os.path.join(ctx.workdir, f"ck{i}"), "--output-dir",
                os.path.join(ctx.workdir, f"out{i}")]
        return ranks, summary, run(ctx, ranks, args, cwd=cwd)

    start = time.time()
    # Two at a time: the test machine has two cores, and most runs wait for MPI to start.
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(attempt, cases))
    for (i, data, cfg), (ranks, summary, (code, _, err)) in zip(cases, results):
        what = f"mutation {i} (seed {seed}, {ranks} rank(s)): {data[:200]!r}"
        outcomes[code] = outcomes.get(code, 0) + 1
        if not check(code in (0, 1, 2), f"{what}: exit {code}\n{err[-1500:]}"):
            continue
        if code != 0:
            lines = error_lines(err)
            if code == 1:
                print(f"mutation {i}: exit 1: {lines[:1]}")
            check(len(lines) == 1 and len(lines[0]) <= 400 and
                  not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", lines[0]) and "MPI_ABORT" not in err,
                  f"{what}: not one clean line:\n{err[-1500:]}")
            continue
        if not check(cfg is not None, f"{what}: exit 0 although the file is not 'key = value' lines"):
            continue
        with open(summary) as f:
            shown = json.load(f)
        for key, value in expected_fields(cfg).items():
            check(shown.get(key) == value, f"{what}: exit 0 with {key} = {shown.get(key)!r}, the "
                  f"file says {value!r}")
    print(f"{count} mutations (seed {seed}) in {time.time() - start:.1f} s: outcomes {outcomes}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("case", choices=["trace", "config-files", "tiny-grid", "early-signal",
                                         "exit-codes", "messages", "mutations"])
    parser.add_argument("args", nargs="*")
    parser.add_argument("--app", required=True)
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--docs", default="")
    parser.add_argument("--backend", default="host", choices=["host", "cuda"])
    ctx = parser.parse_args()
    if ctx.backend == "cuda" and subprocess.run(["sh", "-c", "nvidia-smi -L"],
                                                stdout=subprocess.DEVNULL,
                                                stderr=subprocess.DEVNULL).returncode != 0:
        print("skipped: --backend cuda and no GPU visible")
        return 77
    with tempfile.TemporaryDirectory(prefix="funnel-hard-") as workdir:
        ctx.workdir = workdir
        if ctx.case == "mutations":
            seed = int(ctx.args[0]) if ctx.args and ctx.args[0] != "random" else \
                random.SystemRandom().randrange(2**31)
            case_mutations(ctx, seed, int(ctx.args[1]) if len(ctx.args) > 1 else 300)
        else:
            ranks = int(ctx.args[0]) if ctx.args else 1
            {"trace": case_trace, "config-files": case_config_files, "tiny-grid": case_tiny_grid,
             "early-signal": case_early_signal, "exit-codes": case_exit_codes,
             "messages": case_messages}[ctx.case](ctx, ranks)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
