// Damaged and mismatched checkpoints must be rejected with a clear funnel::error on every rank,
// never a crash: truncated files, flipped bits in data and in metadata, files that are not
// HDF5 or not checkpoints, a `latest` naming nothing, and runs whose grid, dtype or problem
// differ from the checkpoint's. Also built with AddressSanitizer by the lead's CI.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "funnel/error.hpp"
#include "funnel/io/atomic_file.hpp"
#include "funnel/io/checkpoint_reader.hpp"
#include "funnel/io/checkpoint_writer.hpp"
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
    const grid_block block = make_block(global, {1, size, 1}, world_rank(), 1);
    const auto u = make_field<double>(block, shared_seed(MPI_COMM_WORLD), 3, -1.0);
    checkpoint_ = writer.write(3, 0.3, block, {field_view::of("u", u.data())});
  }
  void TearDown() override { dir_.reset(); }

  [[nodiscard]] std::string main_file() const { return checkpoint_ + "/checkpoint.h5"; }
  // The file holding rank 0's data of field u: the shared file, or rank 0's block file.
  [[nodiscard]] std::string data_file() const {
    return GetParam() == file_mode::shared_file ? main_file()
                                                : checkpoint_ + "/blocks/rank-00000.h5";
  }

  // Rank 0 changes files while the others wait.
  template <class F>
  void on_rank0(F&& damage) {
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

  std::unique_ptr<shared_directory> dir_;
  std::string checkpoint_;
};

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
  expect_rejected(dir_->path(), {main_file(), "not an HDF5 file"});
}

TEST_P(Corrupt, Hdf5FileThatIsNotACheckpoint) {
  on_rank0([&] {
    const hid_t f = H5Fcreate(main_file().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    H5Fclose(f);
  });
  expect_rejected(dir_->path(), {main_file(), "not a funnel checkpoint"});
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

INSTANTIATE_TEST_SUITE_P(Modes, Corrupt, ::testing::ValuesIn(supported_modes()),
                         [](const auto& param_info) { return mode_name(param_info.param); });

}  // namespace
