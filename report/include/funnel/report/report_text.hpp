// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file report_text.hpp
 * @brief The block of lines funnel-report prints on stderr.
 */
#pragma once

#include <string>
#include <vector>

#include "funnel/report/node_report.hpp"

namespace funnel::report {

/**
 * @brief The report as lines for a terminal (without the program's prefix), per GPU: ranks,
 * MPS, wall time, busy fraction, ranks at once, the ranks' GPU times and spread, the verdict;
 * then ranks that ended early, damaged and missing records.
 * @param report the merged report
 * @param record_dir the records' directory, for the first line
 * @return the lines, each under ~100 columns
 */
[[nodiscard]] std::vector<std::string> report_lines(const node_report& report,
                                                    const std::string& record_dir);

/**
 * @brief A duration as the report prints it: "12.3 s", "950 ms", "42 us".
 * @param seconds the duration
 */
[[nodiscard]] std::string format_seconds(double seconds);

/**
 * @brief A fraction as a whole percentage: "91 %".
 * @param fraction e.g. 0.912
 */
[[nodiscard]] std::string format_percent(double fraction);

}  // namespace funnel::report
