// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Damaged and mismatched checkpoints must be rejected with a clear funnel::error on every rank,
// never a crash: truncated files, flipped bits in data and in metadata, files that are not
// HDF5 or not checkpoints, a `latest` naming nothing, and runs whose grid, dtype or problem
// differ from the checkpoint's. Also built with AddressSanitizer by the lead's CI.
//
// The hard cases of issues #21 and #20 have a suite each, registered as their own ctest
// entries on 1 and 3 ranks (tests/io/CMakeLists.txt): Fifo (inputs that are not regular files),
// ForeignSeries (a fresh run in another run's directory), StepRange (metadata out of range or
// changed), DamagedMetadata (corrupted, not "absent"), BlockFileNames (block files named
// outside the checkpoint), SharedDirectory (directories other users may write, planted links)
// and SeededCorruption (hundreds of random flips and truncations; FUNNEL_CORRUPT_SEED repeats
// a run, FUNNEL_CORRUPT_TRIALS sets its length).
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <random>

#include "funnel/error.hpp"
#include "funnel/io/atomic_file.hpp"
#include "funnel/io/checkpoint_reader.hpp"
#include "funnel/io/checkpoint_writer.hpp"
#include "funnel/io/regular_file.hpp"
#include "funnel/io/snapshot_writer.hpp"
// White box: StepRange writes a crafted checkpoint whose metadata checksum is right.
#include "checkpoint_format.hpp"
#include "io_mpi_support.hpp"
#include "io_test_support.hpp"

namespace fs = std::filesystem;
using namespace funnel::io;
using namespace funnel::io::test;
using funnel::box;
using funnel::index3;

namespace {

const index3 global{20, 14, 6};

class Corrupt : public ::testing::TestWithParam<file_mode> {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<shared_directory>(MPI_COMM_WORLD, "corrupt");
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    checkpoint_options opt;
    opt.directory = dir_->path();
    opt.problem = "heat";
    opt.mode = GetParam();
    checkpoint_writer writer(MPI_COMM_WORLD, opt);
    run_id_ = writer.run_id();
    const grid_block block = make_block(global, {1, size, 1}, world_rank(), 1);
    seed_ = shared_seed(MPI_COMM_WORLD);
    const auto u = make_field<double>(block, seed_, step_, -1.0);
    checkpoint_ = writer.write(step_, 0.3, block, {field_view::of("u", u.data())});
  }
  void TearDown() override { dir_.reset(); }

  [[nodiscard]] std::string main_file() const { return checkpoint_ + "/checkpoint.h5"; }
  // The file holding rank 0's data of field u: the shared file, or rank 0's block file.
  [[nodiscard]] std::string data_file() const {
    return GetParam() == file_mode::shared_file ? main_file()
                                                : checkpoint_ + "/blocks/rank-00000.h5";
  }

  // Rank 0 changes files while the others wait (with nothing open).
  template <class F>
  void on_rank0(F&& damage) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) damage();
    MPI_Barrier(MPI_COMM_WORLD);
  }

  // Opening (and verifying) must fail on every rank with a message containing all `parts`.
  void expect_rejected(const std::string& path, const std::vector<std::string>& parts) {
    try {
      checkpoint_reader reader(MPI_COMM_WORLD, path);
      ADD_FAILURE() << "rank " << world_rank() << ": damaged checkpoint " << path << " accepted";
    } catch (const funnel::error& e) {
      for (const auto& part : parts) {
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
            << "message lacks '" << part << "': " << e.what();
      }
      if (world_rank() == 0) std::printf("rejected as expected: %s\n", e.what());
    }
  }

  // Opening with every check must fail alike on every rank, with a message containing all of
  // `parts` and none of `absent`.
  void expect_rejected_without(const std::string& path, const std::vector<std::string>& parts,
                               const std::vector<std::string>& absent) {
    try {
      checkpoint_reader reader(MPI_COMM_WORLD, path);
      ADD_FAILURE() << "rank " << world_rank() << ": checkpoint " << path << " accepted";
    } catch (const funnel::error& e) {
      const std::string what = e.what();
      for (const auto& part : parts) {
        EXPECT_NE(what.find(part), std::string::npos) << "message lacks '" << part << "': " << what;
      }
      for (const auto& part : absent) {
        EXPECT_EQ(what.find(part), std::string::npos) << "message has '" << part << "': " << what;
      }
      if (world_rank() == 0) std::printf("rejected as expected: %s\n", e.what());
    }
  }

  std::unique_ptr<shared_directory> dir_;
  std::string checkpoint_;
  std::string run_id_;
  std::int64_t seed_ = 0;
  std::int64_t step_ = 3;
};

// --- helpers of the tests below ----------------------------------------------------------------

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void put_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

void make_fifo(const std::string& path) {
  fs::remove(path);
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << path;
}

hid_t edit_access();

// Replaces an attribute's value (deleted and created again: HDF5 1.10 cannot always modify an
// attribute in dense storage in place).
template <class T>
void set_attribute(const std::string& path, const char* object, const char* name, hid_t type,
                   const std::vector<T>& values) {
  const hid_t fapl = edit_access();
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl);
  H5Pclose(fapl);
  ASSERT_GE(file, 0) << path;
  const hid_t old = H5Aopen_by_name(file, object, name, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(old, 0) << name;
  const hid_t stored_type = H5Aget_type(old);
  const hid_t space = H5Aget_space(old);
  H5Aclose(old);
  ASSERT_GE(H5Adelete_by_name(file, object, name, H5P_DEFAULT), 0) << name;
  const hid_t attr = H5Acreate_by_name(file, object, name, stored_type, space, H5P_DEFAULT,
                                       H5P_DEFAULT, H5P_DEFAULT);
  EXPECT_GE(H5Awrite(attr, type, values.data()), 0) << name;
  H5Aclose(attr);
  H5Sclose(space);
  H5Tclose(stored_type);
  H5Fclose(file);
}

template <class T>
std::vector<T> get_attribute(const std::string& path, const char* object, const char* name,
                             hid_t type, std::size_t count) {
  std::vector<T> values(count);
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t attr = H5Aopen_by_name(file, object, name, H5P_DEFAULT, H5P_DEFAULT);
  EXPECT_GE(H5Aread(attr, type, values.data()), 0) << name;
  H5Aclose(attr);
  H5Fclose(file);
  return values;
}

// File access of the test's own HDF5 edits: the format funnel writes (1.8+ object headers and
// dense attribute storage, which older-format access cannot modify).
hid_t edit_access() {
  const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST);
  return fapl;
}

// Rewrites the virtual dataset `u` of `path` with its block files renamed by `rename` (what a
// crafted checkpoint could name); each writer box maps to its block file, as the writer does.
void rename_block_files(const std::string& path, const std::vector<box>& boxes,
                        const std::function<std::string(const std::string&)>& rename) {
  const hid_t fapl = edit_access();
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl);
  ASSERT_GE(file, 0);
  const char* name = "u";
  const hid_t dset = H5Dopen2(file, name, H5P_DEFAULT);
  const hid_t dcpl = H5Dget_create_plist(dset);
  ASSERT_EQ(H5Pget_layout(dcpl), H5D_VIRTUAL);
  const hid_t type = H5Dget_type(dset);
  const hid_t space = H5Dget_space(dset);
  std::vector<std::uint64_t> sums(boxes.size());
  const hid_t attr = H5Aopen(dset, "checksums", H5P_DEFAULT);
  H5Aread(attr, H5T_NATIVE_UINT64, sums.data());
  H5Aclose(attr);
  const hid_t crafted = H5Pcreate(H5P_DATASET_CREATE);
  size_t mapping = 0;
  for (const box& b : boxes) {
    if (b.empty()) continue;
    std::string source(4096, '\0');
    source.resize(static_cast<std::size_t>(
        H5Pget_virtual_filename(dcpl, mapping++, source.data(), source.size())));
    const hsize_t start[3] = {static_cast<hsize_t>(b.lo[2]), static_cast<hsize_t>(b.lo[1]),
                              static_cast<hsize_t>(b.lo[0])};
    const hsize_t count[3] = {static_cast<hsize_t>(b.extent(2)), static_cast<hsize_t>(b.extent(1)),
                              static_cast<hsize_t>(b.extent(0))};
    const hid_t vspace = H5Scopy(space);
    H5Sselect_hyperslab(vspace, H5S_SELECT_SET, start, nullptr, count, nullptr);
    const hid_t sspace = H5Screate_simple(3, count, nullptr);
    EXPECT_GE(H5Pset_virtual(crafted, vspace, rename(source).c_str(), name, sspace), 0);
    H5Sclose(vspace);
    H5Sclose(sspace);
  }
  H5Dclose(dset);
  ASSERT_GE(H5Ldelete(file, name, H5P_DEFAULT), 0);
  const hid_t made = H5Dcreate2(file, name, type, space, H5P_DEFAULT, crafted, H5P_DEFAULT);
  ASSERT_GE(made, 0);
  const hsize_t n = sums.size();
  const hid_t sums_space = H5Screate_simple(1, &n, nullptr);
  const hid_t a =
      H5Acreate2(made, "checksums", H5T_STD_U64LE, sums_space, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, H5T_NATIVE_UINT64, sums.data());
  H5Aclose(a);
  H5Sclose(sums_space);
  H5Dclose(made);
  H5Pclose(crafted);
  H5Sclose(space);
  H5Tclose(type);
  H5Pclose(dcpl);
  H5Fclose(file);
  H5Pclose(fapl);
}

// A crafted checkpoint: its byte checksum (checkpoint.sum) written again after an edit, as a
// forger would, so that the reader's later checks are the ones that must catch it. `raw` are the
// fields' raw data ranges, taken before the edit.
void reseal(const std::string& main, const detail::byte_ranges& raw) {
  fs::remove(fs::path(main).parent_path() / detail::checkpoint_sum_name);
  detail::write_file_sum(main, raw);
}

bool is_root() { return ::geteuid() == 0; }

int world_size_of() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// Another user, played with setpriv (no account needed): the attacker docs/security.md names.
constexpr int other_uid = 4242;

int as_other_user(const std::string& command) {
  return std::system(("setpriv --reuid " + std::to_string(other_uid) + " --regid " +
                      std::to_string(other_uid) + " --clear-groups " + command)
                         .c_str());
}

std::mt19937_64 random_engine() { return std::mt19937_64(std::random_device{}()); }

void flip_bit(const std::string& path, std::uint64_t offset, int bit) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char byte = 0;
  f.read(&byte, 1);
  byte = static_cast<char>(byte ^ (1 << bit));
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&byte, 1);
}

// Byte range of dataset `name`'s contiguous data in `path`.
std::pair<std::uint64_t, std::uint64_t> data_range(const std::string& path, const char* name) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t dset = H5Dopen2(file, name, H5P_DEFAULT);
  const haddr_t offset = H5Dget_offset(dset);
  const hsize_t bytes = H5Dget_storage_size(dset);
  H5Dclose(dset);
  H5Fclose(file);
  return {offset, bytes};
}

TEST_P(Corrupt, IntactCheckpointIsAccepted) {
  checkpoint_reader reader(MPI_COMM_WORLD, dir_->path());
  EXPECT_EQ(reader.step(), 3);
}

TEST_P(Corrupt, TruncatedMainFile) {
  on_rank0([&] { fs::resize_file(main_file(), fs::file_size(main_file()) / 2); });
  expect_rejected(dir_->path(), {main_file(), "truncated"});
}

TEST_P(Corrupt, TruncatedDataFile) {
  on_rank0([&] { fs::resize_file(data_file(), fs::file_size(data_file()) - 100); });
  expect_rejected(dir_->path(), {data_file(), "truncated"});
}

TEST_P(Corrupt, MissingBlockFileOrEmptyMainFile) {
  on_rank0([&] {
    if (GetParam() == file_mode::file_per_rank) {
      fs::remove(data_file());
    } else {
      fs::resize_file(main_file(), 0);
    }
  });
  expect_rejected(dir_->path(), {data_file()});
}

TEST_P(Corrupt, BitFlipInDataFailsTheChecksum) {
  on_rank0([&] {
    auto rng = random_engine();
    const auto [offset, bytes] = data_range(data_file(), "u");
    ASSERT_NE(offset, HADDR_UNDEF);
    flip_bit(data_file(), offset + rng() % bytes, static_cast<int>(rng() % 8));
  });
  expect_rejected(dir_->path(), {"corrupted", "field 'u' block", "checksum"});
}

TEST_P(Corrupt, BitFlipInSuperblockIsDetected) {
  // Bytes 8..43 of a version-2/3 superblock: versions, sizes, addresses, checksum.
  on_rank0([&] {
    auto rng = random_engine();
    flip_bit(data_file(), 9 + rng() % 35, static_cast<int>(rng() % 8));
  });
  expect_rejected(dir_->path(), {data_file()});
}

TEST_P(Corrupt, NotAnHdf5File) {
  on_rank0([&] { std::ofstream(main_file(), std::ios::trunc) << "this is not HDF5\n"; });
  expect_rejected(dir_->path(), {main_file(), "is corrupted"});
  on_rank0([&] { reseal(main_file(), {}); });
  expect_rejected(dir_->path(), {main_file(), "not an HDF5 file"});
}

TEST_P(Corrupt, Hdf5FileThatIsNotACheckpoint) {
  on_rank0([&] {
    const hid_t f = H5Fcreate(main_file().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    H5Fclose(f);
    reseal(main_file(), {});
  });
  expect_rejected(dir_->path(), {main_file(), "not a funnel checkpoint"});
}

TEST_P(Corrupt, MissingOrDamagedChecksumFile) {
  const std::string sum = checkpoint_ + "/" + detail::checkpoint_sum_name;
  const std::string pristine = world_rank() == 0 ? file_text(sum) : std::string();
  on_rank0([&] { put_file(sum, pristine.substr(0, pristine.size() / 2)); });
  expect_rejected(dir_->path(), {main_file(), "is corrupted"});
  on_rank0([&] { fs::remove(sum); });
  expect_rejected(dir_->path(), {main_file(), "has no 'checkpoint.sum'", "version 2"});
}

TEST_P(Corrupt, LatestNamingAMissingCheckpoint) {
  on_rank0([&] { write_file_atomically(dir_->path() + "/latest", "ckpt-00000099\n"); });
  expect_rejected(dir_->path(), {"ckpt-00000099", "does not exist"});
}

TEST_P(Corrupt, GarbageInLatest) {
  on_rank0([&] { write_file_atomically(dir_->path() + "/latest", "../../etc\n"); });
  expect_rejected(dir_->path(), {"latest", "should name a checkpoint"});
}

TEST_P(Corrupt, DirectoryWithoutCheckpoint) {
  on_rank0([&] { fs::remove(dir_->path() + "/latest"); });
  expect_rejected(dir_->path(), {"holds no checkpoint"});
  expect_rejected(dir_->path() + "/nothing-here", {"does not exist"});
}

TEST_P(Corrupt, MismatchedRunIsRejectedWithBothValues) {
  checkpoint_reader reader(MPI_COMM_WORLD, dir_->path());
  const auto expect_mismatch = [&](const std::string& problem, const index3& cells,
                                   const std::vector<std::string>& fields, dtype type,
                                   const std::vector<std::string>& parts) {
    try {
      reader.require(problem, cells, fields, type);
      ADD_FAILURE() << "mismatch not reported";
    } catch (const funnel::invalid_argument& e) {
      for (const auto& part : parts) {
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
      }
    }
  };
  expect_mismatch("heat", {20, 14, 7}, {"u"}, dtype::float64, {"grid 20x14x6", "20x14x7"});
  expect_mismatch("heat", global, {"u"}, dtype::float32, {"'u' is float64", "float32"});
  expect_mismatch("jacobi", global, {"u"}, dtype::float64, {"'heat'", "'jacobi'"});
  expect_mismatch("heat", global, {"w"}, dtype::float64, {"no field 'w'"});
  EXPECT_NO_THROW(reader.require("heat", global, {"u"}, dtype::float64));

  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const grid_block block = make_block(global, {size, 1, 1}, world_rank(), 1);
  std::vector<float> wrong(static_cast<std::size_t>(block.layout.allocated_cells()));
  EXPECT_THROW(reader.read("u", block, wrong.data()), funnel::invalid_argument);
  grid_block other = make_block({20, 14, 7}, {size, 1, 1}, world_rank(), 1);
  std::vector<double> data(static_cast<std::size_t>(other.layout.allocated_cells()));
  EXPECT_THROW(reader.read("u", other, data.data()), funnel::invalid_argument);
}

// --- #21 case 3: inputs that must be regular files ----------------------------------------------

class Fifo : public Corrupt {};

TEST_P(Fifo, LatestThatIsAFifoIsRefused) {
  on_rank0([&] { make_fifo(dir_->path() + "/latest"); });
  expect_rejected(dir_->path(), {"latest", "is a FIFO, not a regular file"});
}

TEST_P(Fifo, LatestLinkedToADeviceIsNotFollowed) {
  on_rank0([&] {
    fs::remove(dir_->path() + "/latest");
    fs::create_symlink("/dev/zero", dir_->path() + "/latest");
  });
  expect_rejected(dir_->path(), {"latest", "symbolic link", "not followed"});
}

TEST_P(Fifo, CheckpointFileThatIsAFifoOrDeviceIsRefused) {
  on_rank0([&] { make_fifo(main_file()); });
  expect_rejected(dir_->path(), {main_file(), "is a FIFO"});
  expect_rejected(main_file(), {main_file(), "is a FIFO"});
  on_rank0([&] {
    fs::remove(main_file());
    fs::create_symlink("/dev/zero", main_file());
  });
  expect_rejected(dir_->path(), {main_file(), "is a character device"});
}

TEST_P(Fifo, BlockFileThatIsAFifoIsRefused) {
  if (GetParam() != file_mode::file_per_rank) GTEST_SKIP() << "no block files in this mode";
  on_rank0([&] { make_fifo(data_file()); });
  expect_rejected(dir_->path(), {data_file(), "is a FIFO"});
}

TEST_P(Fifo, SnapshotSeriesNextToAFifoDoesNotBlock) {
  const std::string snap = dir_->path() + "/snap";
  on_rank0([&] {
    fs::create_directories(snap);
    make_fifo(snap + "/s-00000001.h5");
  });
  snapshot_options opt;
  opt.directory = snap;
  opt.series = "s";
  opt.mode = GetParam();
  snapshot_writer writer(MPI_COMM_WORLD, opt);  // scans the series: must not open the FIFO
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const grid_block block = make_block(global, {1, size, 1}, world_rank(), 1);
  const auto u = make_field<double>(block, 1, 2, -1.0);
  writer.write(2, 0.2, block, {field_view::of("u", u.data())});
  EXPECT_TRUE(fs::exists(snap + "/s.xmf"));
}

TEST_P(Fifo, ReadRegularFileRefusesWhatIsNotARegularFile) {
  const std::string mine = dir_->path() + "/rank" + std::to_string(world_rank());
  fs::create_directories(mine);
  const auto refused = [](const std::string& path, std::size_t max, const std::string& part) {
    try {
      (void)read_regular_file(path, max);
      ADD_FAILURE() << path << " was read";
    } catch (const funnel::error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  make_fifo(mine + "/fifo");
  refused(mine + "/fifo", 100, "is a FIFO");
  refused("/dev/zero", 100, "is a character device");
  refused(mine, 100, "is a directory");
  put_file(mine + "/big", std::string(1000, 'x'));
  refused(mine + "/big", 999, "has 1000 bytes; at most 999");
  fs::create_symlink(mine + "/big", mine + "/link");
  EXPECT_EQ(read_regular_file(mine + "/link", 1000).size(), 1000U) << "links are followed";
  EXPECT_THROW((void)read_regular_file(mine + "/missing", 10), funnel::system_error);
}

// --- #21 case 4: a fresh run in a directory holding another run's series -------------------------

class ForeignSeries : public Corrupt {
 protected:
  [[nodiscard]] checkpoint_options options() const {
    checkpoint_options opt;
    opt.directory = dir_->path();
    opt.problem = "heat";
    opt.mode = GetParam();
    return opt;
  }
  void write_step(const checkpoint_options& opt, std::int64_t step) {
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    checkpoint_writer writer(MPI_COMM_WORLD, opt);
    const grid_block block = make_block(global, {1, size, 1}, world_rank(), 1);
    const auto u = make_field<double>(block, seed_, step, -1.0);
    writer.write(step, 0.1 * static_cast<double>(step), block, {field_view::of("u", u.data())});
  }
};

TEST_P(ForeignSeries, FreshRunIsRefusedAndTheSeriesStays) {
  checkpoint_options same = options();
  same.run_id = run_id_;  // a restart continues its series in its directory
  write_step(same, 50);
  for (const std::string& other : {std::string(), std::string("someone-else")}) {
    checkpoint_options fresh = options();
    fresh.run_id = other;
    try {
      checkpoint_writer writer(MPI_COMM_WORLD, fresh);
      ADD_FAILURE() << "a run (id '" << other << "') took over another run's directory";
    } catch (const funnel::error& e) {
      const std::string what = e.what();
      for (const std::string& part :
           {dir_->path(), std::string("2 checkpoint(s) of another run"),
            std::string("ckpt-00000003 to ckpt-00000050"), std::string("latest ckpt-00000050"),
            run_id_, std::string("restart from them"), std::string("another directory"),
            std::string("start over")}) {
        EXPECT_NE(what.find(part), std::string::npos) << "lacks '" << part << "': " << what;
      }
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
  EXPECT_EQ(read_regular_file(dir_->path() + "/latest", 100), "ckpt-00000050\n");
  EXPECT_TRUE(fs::is_directory(dir_->path() + "/ckpt-00000003"));
  checkpoint_reader reader(MPI_COMM_WORLD, dir_->path());
  EXPECT_EQ(reader.step(), 50);
  EXPECT_EQ(reader.run_id(), run_id_);
}

TEST_P(ForeignSeries, StartOverRemovesTheOldSeries) {
  checkpoint_options over = options();
  over.start_over = true;
  std::string id;
  {
    checkpoint_writer writer(MPI_COMM_WORLD, over);
    id = writer.run_id();
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_FALSE(fs::exists(dir_->path() + "/latest"));
    EXPECT_FALSE(fs::exists(checkpoint_));
  }
  EXPECT_NE(id, run_id_) << "a fresh run gets a fresh id";
  checkpoint_options next = options();
  next.run_id = id;
  write_step(next, 20);
  checkpoint_reader reader(MPI_COMM_WORLD, dir_->path());
  EXPECT_EQ(reader.step(), 20);
  EXPECT_EQ(reader.run_id(), id);
}

TEST_P(ForeignSeries, MalformedRunIdIsRefused) {
  checkpoint_options opt = options();
  for (const std::string& bad : {std::string("a/b"), std::string(65, 'x'), std::string("a b")}) {
    opt.run_id = bad;
    EXPECT_THROW(checkpoint_writer(MPI_COMM_WORLD, opt), funnel::invalid_argument) << bad;
  }
}

// --- #21 case 5: every metadata value checked and covered by a checksum
// ----------------------------

class StepRange : public Corrupt {};

TEST_P(StepRange, WriterRefusesStepsAndTimesOutOfRange) {
  checkpoint_options opt;
  opt.directory = dir_->path();
  opt.problem = "heat";
  opt.mode = GetParam();
  opt.run_id = run_id_;
  checkpoint_writer writer(MPI_COMM_WORLD, opt);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const grid_block block = make_block(global, {1, size, 1}, world_rank(), 1);
  const auto u = make_field<double>(block, seed_, 4, -1.0);
  const std::vector<field_view> fields{field_view::of("u", u.data())};
  for (const std::int64_t step :
       {std::int64_t{-1}, std::int64_t{-11}, std::numeric_limits<std::int64_t>::min(),
        checkpoint_writer::max_step + 1, std::numeric_limits<std::int64_t>::max()}) {
    EXPECT_THROW(writer.write(step, 1.0, block, fields), funnel::invalid_argument) << step;
  }
  EXPECT_THROW(writer.write(4, std::nan(""), block, fields), funnel::invalid_argument);
  EXPECT_THROW(writer.write(4, HUGE_VAL, block, fields), funnel::invalid_argument);
  for (const auto& entry : fs::directory_iterator(dir_->path())) {
    EXPECT_EQ(entry.path().filename().string().rfind("ckpt--", 0), std::string::npos)
        << entry.path();
  }
  EXPECT_EQ(read_regular_file(dir_->path() + "/latest", 100), "ckpt-00000003\n");
}

TEST_P(StepRange, ChangedMetadataFailsItsChecksum) {
  const std::string pristine = world_rank() == 0 ? file_text(main_file()) : std::string();
  const auto raw =
      world_rank() == 0 ? detail::raw_data_ranges(main_file(), {"u"}) : detail::byte_ranges{};
  for (const std::int64_t step : {std::int64_t{-1}, std::int64_t{-11}, std::int64_t{1} << 62,
                                  std::numeric_limits<std::int64_t>::max(),
                                  std::numeric_limits<std::int64_t>::min(), std::int64_t{4}}) {
    on_rank0([&] {
      put_file(main_file(), pristine);
      set_attribute<std::int64_t>(main_file(), "/", "step", H5T_NATIVE_INT64, {step});
    });
    expect_rejected(dir_->path(), {"is corrupted", "does not match its checksum"});
    on_rank0([&] { reseal(main_file(), raw); });
    expect_rejected(dir_->path(), {"is corrupted", "metadata_checksum"});
  }
  on_rank0([&] {
    put_file(main_file(), pristine);
    set_attribute<double>(main_file(), "/", "time", H5T_NATIVE_DOUBLE, {0.5});
    reseal(main_file(), raw);
  });
  expect_rejected(dir_->path(), {"is corrupted", "metadata_checksum"});
  on_rank0([&] {
    put_file(main_file(), pristine);
    auto sums = get_attribute<std::uint64_t>(main_file(), "u", "checksums", H5T_NATIVE_UINT64,
                                             static_cast<std::size_t>(world_size_of()));
    sums[0] ^= 1;
    set_attribute<std::uint64_t>(main_file(), "u", "checksums", H5T_NATIVE_UINT64, sums);
    reseal(main_file(), raw);
  });
  expect_rejected(dir_->path(), {"is corrupted", "metadata_checksum"});
}

TEST_P(StepRange, StepOutOfRangeIsRefusedEvenWithARightChecksum) {
  // A crafted file whose checksum was recomputed: the range checks still hold.
  detail::checkpoint_header h;
  {
    checkpoint_reader reader(MPI_COMM_WORLD, dir_->path());
    h.run_id = reader.run_id();
    h.time = reader.time();
    h.problem = reader.problem();
    h.configuration = reader.configuration();
    h.global_cells = reader.global_cells();
    h.spacing = reader.spacing();
    h.fields = reader.field_names();
    h.dtype = "float64";
    h.funnel_version = reader.funnel_version();
    h.writer_boxes = reader.writer_boxes();
  }
  h.checksums = {get_attribute<std::uint64_t>(main_file(), "u", "checksums", H5T_NATIVE_UINT64,
                                              h.writer_boxes.size())};
  h.step = step_;
  ASSERT_EQ(
      get_attribute<std::uint64_t>(main_file(), "/", "metadata_checksum", H5T_NATIVE_UINT64, 1)[0],
      detail::metadata_checksum(h))
      << "the test rebuilds the header as the writer does";
  for (const std::int64_t step :
       {std::int64_t{-11}, std::int64_t{1} << 62, std::numeric_limits<std::int64_t>::max()}) {
    h.step = step;
    on_rank0([&] {
      const auto raw = detail::raw_data_ranges(main_file(), {"u"});
      set_attribute<std::int64_t>(main_file(), "/", "step", H5T_NATIVE_INT64, {step});
      set_attribute<std::uint64_t>(main_file(), "/", "metadata_checksum", H5T_NATIVE_UINT64,
                                   {detail::metadata_checksum(h)});
      reseal(main_file(), raw);
    });
    expect_rejected(dir_->path(), {"step " + std::to_string(step) + " is outside [0, "});
  }
}

TEST_P(StepRange, FormatVersion1IsRefusedWithAClearLine) {
  on_rank0([&] {
    const auto raw = detail::raw_data_ranges(main_file(), {"u"});
    set_attribute<std::int64_t>(main_file(), "/", "format_version", H5T_NATIVE_INT64, {1});
    reseal(main_file(), raw);
  });
  expect_rejected(dir_->path(), {"format version 1", "reads version 2"});
  // A real version-1 checkpoint has no checkpoint.sum.
  on_rank0([&] { fs::remove(checkpoint_ + "/" + detail::checkpoint_sum_name); });
  expect_rejected(dir_->path(),
                  {"has no 'checkpoint.sum'", "older than checkpoint format version 2"});
}

// --- #21 case 6: damaged metadata is reported as corrupted, not as absent ------------------------

class DamagedMetadata : public Corrupt {};

TEST_P(DamagedMetadata, DamagedRootHeaderIsCorruptedNotAbsent) {
  haddr_t root = HADDR_UNDEF;
  if (world_rank() == 0) {
    const hid_t file = H5Fopen(main_file().c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
#if H5_VERSION_GE(1, 12, 0)
    H5O_info1_t info{};
#else
    H5O_info_t info{};
#endif
    ASSERT_GE(H5Oget_info2(file, &info, H5O_INFO_BASIC), 0);
    root = info.addr;
    H5Fclose(file);
  }
  const std::string pristine = world_rank() == 0 ? file_text(main_file()) : std::string();
  const auto raw =
      world_rank() == 0 ? detail::raw_data_ranges(main_file(), {"u"}) : detail::byte_ranges{};
  for (std::uint64_t offset = 6; offset < 40; offset += 3) {
    on_rank0([&] {
      put_file(main_file(), pristine);
      flip_bit(main_file(), root + offset, static_cast<int>(offset % 8));
    });
    expect_rejected(dir_->path(), {"is corrupted", "does not match its checksum"});
    // With its byte checksum forged, HDF5 meets the damage: corrupted still, not "absent".
    on_rank0([&] { reseal(main_file(), raw); });
    expect_rejected_without(dir_->path(), {"corrupted"}, {"not a funnel checkpoint"});
  }
}

// --- #20 row 8: block files are relative names inside the checkpoint directory ------------------

class BlockFileNames : public Corrupt {
 protected:
  void SetUp() override {
    if (GetParam() != file_mode::file_per_rank) GTEST_SKIP() << "no block files in this mode";
    Corrupt::SetUp();
    elsewhere_ = dir_->path() + "/elsewhere";
    boxes_ = checkpoint_reader(MPI_COMM_WORLD, dir_->path()).writer_boxes();
    // Valid block files elsewhere: a restart that followed the crafted names would succeed.
    on_rank0([&] { fs::copy(checkpoint_ + "/blocks", elsewhere_); });
  }
  std::string elsewhere_;
  std::vector<box> boxes_;
};

TEST_P(BlockFileNames, AbsoluteNameIsRefused) {
  on_rank0([&] {
    rename_block_files(main_file(), boxes_, [&](const std::string& name) {
      return elsewhere_ + "/" + fs::path(name).filename().string();
    });
    reseal(main_file(), {});
  });
  expect_rejected(dir_->path(), {"names block file '" + elsewhere_ + "/rank-00000.h5'",
                                 "relative names inside the checkpoint directory"});
}

TEST_P(BlockFileNames, NameLeavingTheDirectoryIsRefused) {
  on_rank0([&] {
    rename_block_files(main_file(), boxes_, [&](const std::string& name) {
      return "blocks/../../elsewhere/" + fs::path(name).filename().string();
    });
    reseal(main_file(), {});
  });
  expect_rejected(dir_->path(), {"names block file 'blocks/../../elsewhere/rank-00000.h5'",
                                 "relative names inside the checkpoint directory"});
}

TEST_P(BlockFileNames, BlockFileThatIsALinkIsRefused) {
  on_rank0([&] {
    fs::remove(data_file());
    fs::create_symlink(elsewhere_ + "/rank-00000.h5", data_file());
  });
  expect_rejected(dir_->path(), {data_file(), "is a symbolic link"});
}

// --- #20 row 4: checkpoint directories other users may write ------------------------------------

class SharedDirectory : public Corrupt {
 protected:
  // A directory of `mode` under the test's directory, and a file of this user's outside it.
  std::string make(const std::string& name, fs::perms mode) {
    const std::string path = dir_->path() + "/" + name;
    if (world_rank() == 0) {
      fs::create_directories(path);
      fs::permissions(path, mode);
      put_file(victim(), "precious\n");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return path;
  }
  [[nodiscard]] std::string victim() const { return dir_->path() + "/victim"; }
  [[nodiscard]] checkpoint_options options(const std::string& dir) const {
    checkpoint_options opt;
    opt.directory = dir;
    opt.problem = "heat";
    opt.mode = GetParam();
    return opt;
  }
  // Snapshots of series "s" in `dir`, in the test's mode.
  [[nodiscard]] snapshot_options snapshots(const std::string& dir) const {
    snapshot_options opt;
    opt.directory = dir;
    opt.series = "s";
    opt.mode = GetParam();
    return opt;
  }
  // This rank's block of the global grid, split along y.
  [[nodiscard]] grid_block rank_block() const {
    return make_block(global, {1, world_size_of(), 1}, world_rank(), 1);
  }
  // The other user plants a link `name` -> the victim file.
  void plant(const std::string& name) {
    on_rank0([&] {
      ASSERT_EQ(as_other_user("ln -s " + victim() + " " + name), 0) << name;
      ASSERT_TRUE(fs::is_symlink(name));
    });
  }
  void expect_refused(const std::string& dir, const std::vector<std::string>& parts) {
    try {
      checkpoint_writer writer(MPI_COMM_WORLD, options(dir));
      ADD_FAILURE() << "checkpoint directory " << dir << " accepted";
    } catch (const funnel::error& e) {
      for (const auto& part : parts) {
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
      }
    }
  }
  void write_step(const std::string& dir, std::int64_t step, const std::string& run_id) {
    checkpoint_options opt = options(dir);
    opt.run_id = run_id;
    checkpoint_writer writer(MPI_COMM_WORLD, opt);
    const grid_block block = rank_block();
    const auto u = make_field<double>(block, seed_, step, -1.0);
    writer.write(step, 0.1, block, {field_view::of("u", u.data())});
  }
  void SetUp() override {
    if (!is_root()) GTEST_SKIP() << "needs root to play another user with setpriv";
    Corrupt::SetUp();
  }
};

TEST_P(SharedDirectory, WritableByOthersIsRefusedAndAPlantedLinkUntouched) {
  const std::string dir = make("open", fs::perms::all);
  plant(dir + "/latest.tmp");
  plant(dir + "/funnel.lock");
  expect_refused(dir, {"'" + dir + "'", "mode 0777", "may be written by other users"});
  EXPECT_EQ(file_text(victim()), "precious\n");
  EXPECT_TRUE(fs::is_symlink(dir + "/latest.tmp"));
}

TEST_P(SharedDirectory, AnotherUsersDirectoryIsRefused) {
  const std::string dir = make("theirs", fs::perms::owner_all);
  on_rank0([&] { ASSERT_EQ(::chown(dir.c_str(), other_uid, other_uid), 0); });
  expect_refused(dir, {"'" + dir + "'", "belongs to uid " + std::to_string(other_uid)});
}

TEST_P(SharedDirectory, GroupWritableDirectoryIsRefused) {
  // Group-writable is fine for the owner's private group only; gid 4242 is nobody's.
  const std::string dir = make("group", fs::perms::owner_all | fs::perms::group_all);
  on_rank0([&] { ASSERT_EQ(::chown(dir.c_str(), ::geteuid(), other_uid), 0); });
  expect_refused(dir, {"'" + dir + "'", "mode 0770", "may be written by other users"});
}

TEST_P(SharedDirectory, InsideADirectoryOthersMayWriteIsRefused) {
  const std::string parent = make("open", fs::perms::all);
  expect_refused(parent + "/ckpt", {"lies in '" + parent + "'", "not sticky"});
  const std::string sticky = make("sticky", fs::perms::all | fs::perms::sticky_bit);
  on_rank0([&] { ASSERT_EQ(as_other_user("ln -s " + dir_->path() + " " + sticky + "/ckpt"), 0); });
  expect_refused(sticky + "/ckpt", {"is a symbolic link in '" + sticky + "'"});
}

TEST_P(SharedDirectory, StickyDirectoryGetsPrivateCheckpointsAndNeverFollowsLinks) {
  const std::string dir = make("sticky", fs::perms::all | fs::perms::sticky_bit);
  write_step(dir, 1, "sticky-run");
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/ckpt-00000001").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0U) << "a checkpoint in a shared directory is private";
  plant(dir + "/latest.tmp");
  plant(dir + "/ckpt-00000002.tmp");
  write_step(dir, 2, "sticky-run");  // root may remove the planted links; it never follows them
  EXPECT_EQ(file_text(victim()), "precious\n");
  EXPECT_EQ(read_regular_file(dir + "/latest", 100), "ckpt-00000002\n");
  plant(dir + "/funnel.lock");
  expect_refused(dir, {"cannot be locked", "symbolic link"});
  EXPECT_EQ(file_text(victim()), "precious\n");
}

// A snapshot directory follows the checkpoint rules: files are made by name there.
TEST_P(SharedDirectory, SnapshotDirectoryOthersMayWriteIsRefusedAndALinkUntouched) {
  const std::string dir = make("open-snap", fs::perms::all);
  plant(dir + "/s-00000001.h5");
  try {
    snapshot_writer writer(MPI_COMM_WORLD, snapshots(dir));
    ADD_FAILURE() << "snapshot directory " << dir << " accepted";
  } catch (const funnel::error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("snapshot directory '" + dir + "'"), std::string::npos) << what;
    EXPECT_NE(what.find("may be written by other users"), std::string::npos) << what;
  }
  EXPECT_EQ(file_text(victim()), "precious\n");
}

// In a sticky shared directory, a name another user took where the next snapshot goes is refused
// in one line, never written through; their files are not this series.
TEST_P(SharedDirectory, SnapshotNameAnotherUserTookIsRefusedNotWrittenThrough) {
  const std::string dir = make("sticky-snap", fs::perms::all | fs::perms::sticky_bit);
  plant(dir + "/s-00000001.h5");
  plant(dir + "/s-00000002.blocks");
  snapshot_writer writer(MPI_COMM_WORLD, snapshots(dir));
  const grid_block block = rank_block();
  const auto u = make_field<double>(block, 1, 2, -1.0);
  for (const std::int64_t step : {1, 2}) {
    try {
      writer.write(step, 0.1, block, {field_view::of("u", u.data())});
      ADD_FAILURE() << "snapshot " << step << " written over another user's entry";
    } catch (const funnel::error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("snapshot file '" + dir + "/s-0000000" + std::to_string(step)),
                std::string::npos)
          << what;
      EXPECT_NE(what.find("of uid " + std::to_string(other_uid)), std::string::npos) << what;
    }
  }
  EXPECT_EQ(file_text(victim()), "precious\n");
  writer.write(3, 0.3, block, {field_view::of("u", u.data())});
  on_rank0([&] {
    const std::string index = file_text(dir + "/s.xmf");
    EXPECT_EQ(index.find("s-00000001.h5"), std::string::npos) << index;
    EXPECT_NE(index.find("s-00000003.h5"), std::string::npos) << index;
  });
}

// What a killed writer of this series leaves is removed when the series starts again, but in a
// sticky shared directory names another user planted under those patterns (a staging folder, a
// legacy space placeholder) are theirs: left as they are, never followed.
TEST_P(SharedDirectory, SnapshotLeftoverNamesAnotherUserPlantedAreLeftAlone) {
  const std::string dir = make("sticky-left", fs::perms::all | fs::perms::sticky_bit);
  const std::vector<std::string> planted = {dir + "/.0123456789abcdef.s-00000001.h5.writing",
                                            dir + "/s-00000002.h5.space"};
  for (const auto& name : planted) plant(name);
  {
    snapshot_writer writer(MPI_COMM_WORLD, snapshots(dir));
    const grid_block block = rank_block();
    const auto u = make_field<double>(block, 1, 3, -1.0);
    writer.write(3, 0.3, block, {field_view::of("u", u.data())});
  }
  snapshot_writer again(MPI_COMM_WORLD, snapshots(dir));  // scans the directory a second time
  on_rank0([&] {
    for (const auto& name : planted) EXPECT_TRUE(fs::is_symlink(name)) << name;
    EXPECT_TRUE(fs::exists(dir + "/s-00000003.h5"));
  });
  EXPECT_EQ(file_text(victim()), "precious\n");
}

// A checkpoint file another user put at the top of a sticky checkpoint directory is never taken
// for this user's checkpoint: `latest` goes first, and without it that file is refused.
TEST_P(SharedDirectory, RestartNeverTakesACheckpointFileAnotherUserPlanted) {
  const std::string dir = make("sticky-restart", fs::perms::all | fs::perms::sticky_bit);
  write_step(dir, 1, "mine");
  on_rank0([&] { ASSERT_EQ(as_other_user("touch " + dir + "/checkpoint.h5"), 0); });
  {
    const checkpoint_reader reader(MPI_COMM_WORLD, dir);
    EXPECT_EQ(reader.step(), 1);
    EXPECT_EQ(reader.file(), dir + "/ckpt-00000001/checkpoint.h5");
  }
  on_rank0([&] { fs::remove(dir + "/latest"); });
  try {
    const checkpoint_reader reader(MPI_COMM_WORLD, dir);
    ADD_FAILURE() << "another user's checkpoint file was read";
  } catch (const funnel::error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("checkpoint file '" + dir + "/checkpoint.h5'"), std::string::npos) << what;
    EXPECT_NE(what.find("of uid " + std::to_string(other_uid)), std::string::npos) << what;
  }
}

// Names another user took in a sticky checkpoint directory: a `<ckpt>.old` does not stop pruning
// after a checkpoint is published; a `ckpt-<step>` is refused before anything is written.
TEST_P(SharedDirectory, NamesAnotherUserTookNeitherStopPruningNorGetReplaced) {
  const std::string dir = make("sticky-names", fs::perms::all | fs::perms::sticky_bit);
  on_rank0([&] {
    for (const char* name : {"ckpt-00000001.old", "ckpt-00000001.0.old", "ckpt-00000005"}) {
      ASSERT_EQ(as_other_user("mkdir " + dir + "/" + name), 0) << name;
    }
  });
  for (const std::int64_t step : {1, 2, 3}) write_step(dir, step, "pruned");
  on_rank0([&] {
    EXPECT_FALSE(fs::exists(dir + "/ckpt-00000001")) << "pruned (keep 2)";
    EXPECT_TRUE(fs::exists(dir + "/ckpt-00000001.old")) << "another user's entry is left alone";
    EXPECT_EQ(read_regular_file(dir + "/latest", 100), "ckpt-00000003\n");
  });
  try {
    write_step(dir, 5, "pruned");
    ADD_FAILURE() << "a checkpoint written where another user's ckpt-00000005 is";
  } catch (const funnel::error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("checkpoint '" + dir + "/ckpt-00000005'"), std::string::npos) << what;
    EXPECT_NE(what.find("of uid " + std::to_string(other_uid)), std::string::npos) << what;
  }
  on_rank0([&] {
    EXPECT_EQ(read_regular_file(dir + "/latest", 100), "ckpt-00000003\n");
    EXPECT_FALSE(fs::exists(dir + "/ckpt-00000005.tmp"));
  });
}

// --- #21 seeded corruption: flips and truncations never crash, hang or restart wrong -------------

class SeededCorruption : public Corrupt {};

std::uint64_t corruption_seed() {
  unsigned long long seed = 0;
  if (world_rank() == 0) {
    const char* given = std::getenv("FUNNEL_CORRUPT_SEED");
    seed = given != nullptr ? std::strtoull(given, nullptr, 10) : std::random_device{}();
  }
  MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  return seed;
}

TEST_P(SeededCorruption, EveryOutcomeIsACleanRestartOrOneLine) {
  const std::uint64_t seed = corruption_seed();
  const char* trials_env = std::getenv("FUNNEL_CORRUPT_TRIALS");
  const int trials = trials_env != nullptr ? std::atoi(trials_env) : 300;
  std::vector<std::string> files;  // rank 0: every file of the checkpoint, `latest` last
  std::map<std::string, std::string> pristine;
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> data;  // raw data ranges
  if (world_rank() == 0) {
    std::printf("seed %llu (FUNNEL_CORRUPT_SEED=%llu repeats this run), %d trials\n",
                static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed),
                trials);
    for (const auto& e : fs::recursive_directory_iterator(checkpoint_)) {
      if (e.is_regular_file()) files.push_back(e.path().string());
    }
    std::sort(files.begin(), files.end());
    files.push_back(dir_->path() + "/latest");
    for (const auto& f : files) {
      pristine[f] = file_text(f);
      if (f != main_file() || GetParam() == file_mode::shared_file) {
        const auto range = f.size() > 3 && f.compare(f.size() - 3, 3, ".h5") == 0
                               ? data_range(f, "u")
                               : std::make_pair(std::uint64_t{HADDR_UNDEF}, std::uint64_t{0});
        if (range.first != HADDR_UNDEF) data[f] = range;
      }
    }
  }
  std::mt19937_64 rng(seed);
  const grid_block block = make_block(global, {world_size_of(), 1, 1}, world_rank(), 2);
  const auto want = make_field<double>(block, seed_, step_, -1.0);
  int restarts = 0;
  int errors = 0;
  for (int t = 0; t < trials; ++t) {
    std::string what;
    if (world_rank() == 0) {
      for (const auto& [f, bytes] : pristine) put_file(f, bytes);
      const int kind = static_cast<int>(rng() % 10);
      // Most damage goes to the main file, where the metadata is.
      const std::string& f = kind == 9        ? files.back()
                             : rng() % 2 == 0 ? main_file()
                                              : files[rng() % files.size()];
      std::string bytes = pristine[f];
      if (kind >= 6 && !bytes.empty()) {
        const std::size_t length = rng() % bytes.size();
        bytes.resize(length);
        what = "truncate " + f + " to " + std::to_string(length);
      } else if (!bytes.empty()) {
        what = "flip " + f + " at";
        const int flips = 1 + static_cast<int>(rng() % 3);
        for (int i = 0; i < flips; ++i) {
          std::uint64_t at = rng() % bytes.size();
          if (const auto r = data.find(f); r != data.end() && rng() % 4 != 0) {
            // metadata: outside the raw data, where flips are caught by the block checksums
            const auto [first, count] = r->second;
            while (at >= first && at < first + count) at = rng() % bytes.size();
          }
          bytes[at] = static_cast<char>(bytes[at] ^ static_cast<char>(1 + rng() % 255));
          what += " " + std::to_string(at);
        }
      }
      put_file(f, bytes);
      std::printf("trial %d: %s\n", t, what.c_str());
      std::fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int outcome = 0;  // 0 restart, 1 funnel::error, 2 anything else
    std::string message;
    try {
      checkpoint_reader reader(MPI_COMM_WORLD, dir_->path());
      std::vector<double> got(want.size(), -1.0);
      reader.read("u", block, got.data());
      EXPECT_EQ(reader.step(), step_);
      EXPECT_EQ(reader.time(), 0.3);
      EXPECT_EQ(reader.run_id(), run_id_);
      EXPECT_EQ(reader.problem(), "heat");
      EXPECT_EQ(reader.global_cells(), global);
      EXPECT_TRUE(std::memcmp(got.data(), want.data(), got.size() * sizeof(double)) == 0)
          << "restarted with a wrong field";
    } catch (const funnel::error& e) {
      outcome = 1;
      message = e.what();
      EXPECT_FALSE(message.empty());
      EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
    } catch (const std::exception& e) {
      outcome = 2;
      ADD_FAILURE() << "not a funnel::error: " << e.what();
    }
    int lowest = outcome;
    int highest = outcome;
    MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &highest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    EXPECT_EQ(lowest, highest) << "the ranks disagree on the outcome";
    (outcome == 0 ? restarts : errors) += 1;
    int failed = ::testing::Test::HasFailure() ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (failed != 0) {
      ADD_FAILURE() << "trial " << t << " (seed " << seed << "): " << what << ": " << message;
      break;
    }
  }
  if (world_rank() == 0) {
    std::printf("%d trials (seed %llu): %d clean restarts, %d one-line errors\n", trials,
                static_cast<unsigned long long>(seed), restarts, errors);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, Corrupt, ::testing::ValuesIn(supported_modes()),
                         [](const auto& param_info) { return mode_name(param_info.param); });

// One instantiation per suite: each suite is its own ctest entry (--gtest_filter), 1 and 3 ranks.
#define FUNNEL_IO_MODES(suite)                                                   \
  INSTANTIATE_TEST_SUITE_P(Modes, suite, ::testing::ValuesIn(supported_modes()), \
                           [](const auto& param_info) { return mode_name(param_info.param); })
FUNNEL_IO_MODES(Fifo);
FUNNEL_IO_MODES(ForeignSeries);
FUNNEL_IO_MODES(StepRange);
FUNNEL_IO_MODES(DamagedMetadata);
FUNNEL_IO_MODES(BlockFileNames);
FUNNEL_IO_MODES(SharedDirectory);
FUNNEL_IO_MODES(SeededCorruption);

}  // namespace
