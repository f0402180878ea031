// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// An HDF5 reader that shares no code with funnel::io, for machines without h5py (the GPU
// machine): reads one float or double dataset of a file through the HDF5 C library (following
// virtual datasets) and writes its values as raw native-endian bytes, C order; prints the
// file's `step` attribute.
//
// usage: h5_read_dataset FILE DATASET OUTPUT
#include <hdf5.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <vector>

namespace {

int fail(const char* what, const char* file) {
  std::fprintf(stderr, "h5_read_dataset: %s (%s)\n", what, file);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: h5_read_dataset FILE DATASET OUTPUT\n");
    return 2;
  }
  const char* path = argv[1];
  const hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return fail("cannot open", path);
  std::int64_t step = -1;
  const hid_t attr = H5Aopen(file, "step", H5P_DEFAULT);
  if (attr < 0 || H5Aread(attr, H5T_NATIVE_INT64, &step) < 0) return fail("no step", path);
  H5Aclose(attr);
  const hid_t dset = H5Dopen2(file, argv[2], H5P_DEFAULT);
  if (dset < 0) return fail("no such dataset", argv[2]);
  const hid_t type = H5Dget_type(dset);
  const std::size_t size = H5Tget_size(type);
  if (H5Tget_class(type) != H5T_FLOAT || (size != 4 && size != 8)) {
    return fail("not a float or double dataset", argv[2]);
  }
  const hid_t space = H5Dget_space(dset);
  const hssize_t count = H5Sget_simple_extent_npoints(space);
  if (count <= 0) return fail("empty dataset", argv[2]);
  std::vector<char> data(static_cast<std::size_t>(count) * size);
  const hid_t memory = size == 4 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
  if (H5Dread(dset, memory, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) < 0) {
    return fail("cannot read", argv[2]);
  }
  std::ofstream(argv[3], std::ios::binary)
      .write(data.data(), static_cast<std::streamsize>(data.size()));
  std::printf("step %lld\n", static_cast<long long>(step));
  H5Sclose(space);
  H5Tclose(type);
  H5Dclose(dset);
  H5Fclose(file);
  return 0;
}
