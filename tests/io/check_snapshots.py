#!/usr/bin/python3
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
"""Independent check of funnel snapshots with h5py: runs the MPI writer, then compares every
dataset with the field computed here from its global index, checks the attributes, and parses
the XDMF index (valid XML, right files, datasets and dimensions). Exits 77 (skip) without h5py.

In per_rank mode the output directory is moved and read from another working directory first,
to prove the virtual datasets point at their block files by relative paths.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import io_driver

SKIP = 77

try:
    import h5py
    import numpy as np
except ImportError as missing:  # the platform's python3-h5py is what this test uses
    print(f"skipped: {missing} (install python3-h5py)")
    sys.exit(SKIP)


def expected_field(global_cells, seed, step, dtype):
    """value_at() of io_test_support.hpp over the whole grid, shaped (nz, ny, nx) or (ny, nx)."""
    nx, ny, nz = global_cells
    k, j, i = np.meshgrid(np.arange(nz, dtype=np.int64), np.arange(ny, dtype=np.int64),
                          np.arange(nx, dtype=np.int64), indexing="ij")
    h = ((i * 73856093) ^ (j * 19349663) ^ (k * 83492791) ^ seed) % 1000003
    values = (h.astype(np.float64) / 7.0 + float(step)).astype(dtype)
    return values[0] if nz == 1 else values


class Checker:
    def __init__(self):
        self.errors = []

    def expect(self, ok, message):
        if not ok:
            self.errors.append(message)
        return ok

    def check_file(self, path, name, global_cells, seed, step):
        flat = global_cells[2] == 1
        with h5py.File(path, "r") as f:
            attrs = f.attrs
            self.expect(int(attrs["step"]) == step, f"{path}: step {attrs['step']} != {step}")
            self.expect(float(attrs["time"]) == 0.125 * step, f"{path}: time {attrs['time']}")
            self.expect(list(attrs["grid_spacing"]) == [0.5, 0.25, 2.0], f"{path}: grid_spacing")
            self.expect(list(attrs["global_cells"]) == list(global_cells), f"{path}: global_cells")
            self.expect(attrs["problem"] == f"test-{name}", f"{path}: problem {attrs['problem']}")
            self.expect(len(attrs["funnel_version"]) > 0, f"{path}: funnel_version empty")
            fields = [("u", np.float64, seed)] + ([] if flat else [("v", np.float32, seed + 1)])
            self.expect(attrs["dtype"] == ("float64" if flat else "mixed"), f"{path}: dtype")
            for field, dtype, field_seed in fields:
                data = f[field][()]
                want = expected_field(global_cells, field_seed, step, dtype)
                if not self.expect(data.shape == want.shape and data.dtype == want.dtype,
                                   f"{path}:/{field} is {data.shape} {data.dtype}, "
                                   f"want {want.shape} {want.dtype}"):
                    continue
                bad = np.count_nonzero(data.view(np.uint8) != want.view(np.uint8))
                self.expect(bad == 0, f"{path}:/{field}: {bad} bytes differ from the field")

    def check_xdmf(self, directory, name, global_cells, steps):
        path = os.path.join(directory, f"{name}.xmf")
        root = ET.parse(path).getroot()  # raises on invalid XML
        flat = global_cells[2] == 1
        collection = root.find("./Domain/Grid")
        self.expect(collection is not None and collection.get("CollectionType") == "Temporal",
                    f"{path}: no temporal collection")
        grids = collection.findall("Grid")
        times = [float(g.find("Time").get("Value")) for g in grids]
        self.expect(times == [0.125 * s for s in steps], f"{path}: times {times}")
        cells = list(reversed(global_cells[:2] if flat else global_cells))
        for grid in grids:
            topo = grid.find("Topology")
            self.expect(topo.get("TopologyType") == ("2DCoRectMesh" if flat else "3DCoRectMesh"),
                        f"{path}: topology {topo.get('TopologyType')}")
            self.expect([int(d) for d in topo.get("Dimensions").split()] == [c + 1 for c in cells],
                        f"{path}: topology dimensions {topo.get('Dimensions')}")
            for attribute in grid.findall("Attribute"):
                item = attribute.find("DataItem")
                file_name, dataset = item.text.strip().split(":")
                dims = [int(d) for d in item.get("Dimensions").split()]
                self.expect(dims == cells, f"{path}: {item.text} dimensions {dims} != {cells}")
                self.expect(dataset == "/" + attribute.get("Name"), f"{path}: dataset {dataset}")
                with h5py.File(os.path.join(directory, file_name), "r") as f:
                    self.expect(list(f[dataset].shape) == dims, f"{path}: {item.text} shape")
                    self.expect(int(item.get("Precision")) == f[dataset].dtype.itemsize,
                                f"{path}: {item.text} precision")


def main():
    parser = io_driver.parser(__doc__, "--writer")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="funnel-snapshots-") as tmp:
        out = os.path.join(tmp, "out")
        run = subprocess.run([args.mpiexec, args.np_flag, "4", args.writer, out, args.mode],
                             check=False)
        if run.returncode != 0:
            print(f"writer failed with status {run.returncode}")
            return 1
        if args.mode == "per_rank":
            moved = os.path.join(tmp, "moved")
            shutil.move(out, moved)
            out = moved
            os.chdir("/")
        expected = __import__("json").load(open(os.path.join(out, "expected.json")))
        checker = Checker()
        for series in expected["series"]:
            for step in series["steps"]:
                path = os.path.join(out, f"{series['name']}-{step:08d}.h5")
                checker.check_file(path, series["name"], series["global"], expected["seed"], step)
            checker.check_xdmf(out, series["name"], series["global"], series["steps"])
        for error in checker.errors:
            print("FAIL:", error)
        print(f"{len(checker.errors)} problems in {args.mode} snapshots")
        return 1 if checker.errors else 0


if __name__ == "__main__":
    sys.exit(main())
