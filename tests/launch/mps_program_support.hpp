// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// What the tests' plain CUDA programs (mps_probe.cu, mps_client.cu) share: they use no funnel
// library, like the third-party codes they stand in for.
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

namespace mps_program {

/// @brief "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi -L prints it.
inline std::string format_uuid(const cudaUUID_t& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  char text[64];
  std::snprintf(text, sizeof(text),
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return text;
}

/// @brief The variable's value, or `fallback` when it is unset.
inline const char* env_or(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : fallback;
}

/**
 * @brief Reads "--name value" pairs over `defaults` (name -> value): a name not among them ends
 * the job (MPI_Abort with 2) after one line naming it.
 */
inline std::map<std::string, double> read_options(int argc, char** argv, const char* program,
                                                  std::map<std::string, double> defaults) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const auto known = defaults.find(argv[i]);
    if (known == defaults.end()) {
      std::fprintf(stderr, "%s: unknown option %s\n", program, argv[i]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    known->second = std::atof(argv[i + 1]);
  }
  return defaults;
}

}  // namespace mps_program
