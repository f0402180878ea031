// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// funnel-report: merges the GPU activity records of one node's ranks (written by
// libfunnel-report-inject.so or record_writer) into a block of lines on stderr, report.json
// and report.png. funnel-run calls it at a job's end; it also runs by hand on a record
// directory. Usage and exit status: print_help() below and docs/report.md.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "funnel/config.hpp"
#include "funnel/error.hpp"
#include "funnel/report/merge_records.hpp"
#include "funnel/report/report_json.hpp"
#include "funnel/report/report_text.hpp"

extern char** environ;

namespace {

namespace fr = funnel::report;

// Exit statuses (docs/report.md): the caller (funnel-run) keeps the app's status whatever
// these are; they say what happened to the report.
constexpr int exit_written = 0;        // the report was written (damaged/missing records said)
constexpr int exit_not_written = 1;    // the report directory could not be written
constexpr int exit_usage = 2;          // a bad option or value
constexpr int exit_no_records = 3;     // the record directory could not be read
constexpr int plot_no_matplotlib = 3;  // funnel-report-plot.py's status without matplotlib

const char* const prog = "funnel-report";

struct settings {
  std::string record_dir;
  std::string out_dir;
  std::string mps = "auto";
  std::int64_t expect_ranks = 0;
  std::string job_start;
  std::string job_end;
  std::vector<std::string> launcher_options;
  std::string plot = "auto";
  std::string python = "python3";
  std::string plot_script;
  std::int64_t timeline_bins = 400;
};

void say(const std::string& line) { std::fprintf(stderr, "%s: %s\n", prog, line.c_str()); }

// Seconds since 1970 as funnel-run's EPOCHREALTIME prints them ("1700000000.123456").
std::int64_t epoch_ns(const std::string& option, const std::string& text) {
  if (text.empty()) return 0;
  char* end = nullptr;
  errno = 0;
  const double seconds = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(seconds) || seconds <= 0 ||
      seconds > 1e11) {
    throw funnel::invalid_argument(
        option + " " + funnel::app::not_valid(text, "seconds since 1970, e.g. 1767225600.25"));
  }
  return static_cast<std::int64_t>(std::llround(seconds * 1e9));
}

// The plot script: --plot-script, else beside this program as installed
// (<prefix>/bin/../share/funnel/) or in the build tree (<build>/bin/../share/funnel/).
std::string find_plot_script(const std::string& given) {
  if (!given.empty()) return given;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const auto script =
      self.parent_path().parent_path() / "share" / "funnel" / "funnel-report-plot.py";
  return std::filesystem::exists(script, ec) ? script.string() : std::string{};
}

// Runs the plot script; returns the line to print about report.png ("" when it was drawn).
std::string draw_plot(const settings& s, const std::string& json_path,
                      const std::string& png_path) {
  const std::string script = find_plot_script(s.plot_script);
  if (script.empty()) return "report.png skipped: funnel-report-plot.py is not installed";
  std::vector<std::string> args = {s.python, script, json_path, png_path};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, s.python.c_str(), nullptr, nullptr, argv.data(), environ);
  if (rc != 0) {
    return "report.png skipped: cannot run " + s.python + " (" + std::strerror(rc) + ")";
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  if (WIFEXITED(status) && WEXITSTATUS(status) == plot_no_matplotlib) {
    return "report.png skipped: " + s.python + " has no matplotlib (pip install matplotlib)";
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    return "report.png skipped: " + s.python + " not found";
  }
  return "report.png not drawn: funnel-report-plot.py failed (status " +
         std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)) + ")";
}

std::map<std::string, std::string> key_values(const std::vector<std::string>& items) {
  std::map<std::string, std::string> out;
  for (const std::string& item : items) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw funnel::invalid_argument("--option " + funnel::app::not_valid(item, "KEY=VALUE"));
    }
    out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

// Parses the command line; returns -1 to go on, else the status to exit with.
int parse(int argc, char** argv, settings& s) {
  CLI::App app("Merges one node's GPU activity records into a sharing report.", prog);
  funnel::app::apply_common_style(app);
  app.set_help_flag("--help", "this text");
  app.set_version_flag("--version", std::string(prog) + " " FUNNEL_VERSION, "the version");
  app.add_option("RECORD_DIR", s.record_dir, "the records' directory (one node)")
      ->required()
      ->check(funnel::app::non_empty_path());
  app.add_option("--out", s.out_dir, "where report.json and report.png go (default RECORD_DIR)")
      ->type_name("DIR")
      ->check(funnel::app::non_empty_path());
  app.add_option("--mps", s.mps,
                 "how the job ran: on, off, or auto (what funnel-run told the ranks)")
      ->type_name("auto|on|off")
      ->check(funnel::app::one_of({"auto", "on", "off"}));
  std::string expect;
  app.add_option("--expect-ranks", expect,
                 "the node's ranks: local ranks 0..N-1 without a record are named")
      ->type_name("N")
      ->check(funnel::app::integer_in(1, 1000000));
  app.add_option("--job-start", s.job_start,
                 "the job's start, seconds since 1970 (default: the first rank's start)")
      ->type_name("SECONDS");
  app.add_option("--job-end", s.job_end,
                 "the job's end, seconds since 1970 (default: the last rank's end)")
      ->type_name("SECONDS");
  app.add_option("--option", s.launcher_options,
                 "a launcher option for report.json (repeatable), e.g. policy=packed")
      ->type_name("KEY=VALUE")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--plot", s.plot, "draw report.png (auto: when python3 has matplotlib)")
      ->type_name("auto|off")
      ->check(funnel::app::one_of({"auto", "off"}));
  app.add_option("--python", s.python, "the python3 that draws report.png")->type_name("PATH");
  app.add_option("--plot-script", s.plot_script, "funnel-report-plot.py (default: installed)")
      ->type_name("PATH");
  std::string bins;
  app.add_option("--timeline-bins", bins, "bins of each GPU's timeline in report.json")
      ->type_name("N")
      ->check(funnel::app::integer_in(1, 100000));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    std::fputs(
        "\nExit status: 0 the report was written (damaged or missing records are said and "
        "passed over);\n1 the report directory could not be written; 2 a bad option; 3 the "
        "record directory\ncannot be read. See docs/report.md.\n",
        stdout);
    return 0;
  } catch (const CLI::CallForVersion&) {
    std::printf("%s %s\n", prog, FUNNEL_VERSION);
    return 0;
  } catch (const CLI::ParseError& e) {
    say("error: " + funnel::app::describe(e));
    return exit_usage;
  }
  try {
    funnel::app::reject_extras(app, "funnel-report --help");
    if (!expect.empty()) s.expect_ranks = funnel::app::to_integer(expect);
    if (!bins.empty()) s.timeline_bins = funnel::app::to_integer(bins);
  } catch (const funnel::error& e) {
    say("error: " + e.message());
    return exit_usage;
  }
  if (s.out_dir.empty()) s.out_dir = s.record_dir;
  return -1;
}

int run(const settings& s) {
  fr::merge_options options;
  fr::report_context context;
  try {
    options.mps = s.mps == "auto" ? std::string{} : s.mps;
    options.expected_ranks = static_cast<int>(s.expect_ranks);
    options.job_start_realtime_ns = epoch_ns("--job-start", s.job_start);
    options.job_end_realtime_ns = epoch_ns("--job-end", s.job_end);
    options.timeline_bins = static_cast<int>(s.timeline_bins);
    context.launcher_options = key_values(s.launcher_options);
  } catch (const funnel::error& e) {
    say("error: " + e.message());
    return exit_usage;
  }
  context.record_dir = s.record_dir;
  context.report_dir = s.out_dir;
  context.options = options;

  std::vector<fr::rank_record> records;
  try {
    records = fr::read_records(s.record_dir);
  } catch (const funnel::system_error& e) {
    say("cannot read the record directory '" + s.record_dir + "': " + std::strerror(e.errnum()) +
        " (no report)");
    return exit_no_records;
  }
  const fr::node_report report = fr::merge_records(std::move(records), options);
  for (const std::string& line : fr::report_lines(report, s.record_dir)) say(line);

  std::error_code ec;
  std::filesystem::create_directories(s.out_dir, ec);
  const std::string json_path = s.out_dir + "/report.json";
  const std::string png_path = s.out_dir + "/report.png";
  if (ec) {
    say("cannot write the report to '" + s.out_dir + "': " + ec.message());
    return exit_not_written;
  }
  try {
    fr::write_json_file(json_path, fr::to_json(report, context));
  } catch (const funnel::system_error& e) {
    say("cannot write the report to '" + s.out_dir + "': " + std::strerror(e.errnum()));
    return exit_not_written;
  }
  std::string written = json_path;
  if (s.plot != "off" && !report.gpus.empty()) {
    const std::string plot_note = draw_plot(s, json_path, png_path);
    if (plot_note.empty()) {
      written += ", " + png_path;
    } else {
      say(plot_note);
    }
  }
  say("written: " + written);
  return exit_written;
}

}  // namespace

int main(int argc, char** argv) {
  settings s;
  const int parsed = parse(argc, argv, s);
  if (parsed >= 0) return parsed;
  try {
    return run(s);
  } catch (const std::exception& e) {
    // Anything else (e.g. out of memory): one line, and a status the caller can tell apart.
    say("error: " + funnel::app::printable(funnel::user_message(e)));
    return exit_not_written;
  }
}
