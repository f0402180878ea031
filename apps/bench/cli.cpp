// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "cli.hpp"

#include <CLI/CLI.hpp>
#include <memory>

#include "cli_support.hpp"
#include "funnel/error.hpp"

namespace funnel::bench {
namespace {

option_spec make_option(std::string name, std::string value_name, std::string help,
                        std::string full_default, std::string quick_default, value_kind kind,
                        long long min, std::vector<std::string> allowed) {
  option_spec o;
  o.name = std::move(name);
  o.value_name = std::move(value_name);
  o.help = std::move(help);
  o.full_default = std::move(full_default);
  o.quick_default = std::move(quick_default);
  o.kind = kind;
  o.min = min;
  o.allowed = std::move(allowed);
  return o;
}

/// The help line of an option: its text and its defaults.
std::string describe(const option_spec& o) {
  std::string text = o.help;
  if (!o.full_default.empty()) {
    text += " (default " + o.full_default;
    if (o.quick_default != o.full_default) text += "; --quick " + o.quick_default;
    text += ')';
  }
  return text;
}

/// The CLI11 check of an option's kind (none for text).
CLI::Validator validator_of(const option_spec& o) {
  switch (o.kind) {
    case value_kind::integer:
      return app::integer_in(o.min);
    case value_kind::positive:
      return app::positive_number();
    case value_kind::integers:
      return app::integer_list(o.min);
    case value_kind::choice:
      return app::one_of(o.allowed);
    case value_kind::choices:
      return app::word_list(o.allowed);
    case value_kind::text:
      break;
  }
  return CLI::Validator(std::string{});
}

/// Adds one option to a subcommand, its value stored in `values[name]`.
void add(CLI::App& sub, const option_spec& o, std::map<std::string, std::string>& values,
         const std::string& group) {
  if (o.name == "help") return;  // CLI11's own help flag (set_help_flag)
  if (o.value_name.empty()) {
    sub.add_flag_function(
           "--" + o.name, [&values, name = o.name](std::int64_t) { values[name] = "1"; },
           describe(o))
        ->disable_flag_override()
        ->group(group);
    return;
  }
  // A choice shows its words (a|b), a list of choices its words and that it is a list.
  std::string shown = o.value_name;
  if (o.kind == value_kind::choice) shown = app::join_choices(o.allowed);
  if (o.kind == value_kind::choices) shown = app::join_choices(o.allowed) + "[,...]";
  CLI::Option* option =
      sub.add_option("--" + o.name, values[o.name], describe(o))->type_name(shown)->group(group);
  if (o.kind != value_kind::text) option->check(validator_of(o));
  if (o.check) option->check(CLI::Validator(o.check, std::string{}));
}

/// One CLI11 subcommand with its own and the common options; described by its brief (the
/// overview's line) or its summary (its own --help).
CLI::App* add_command(CLI::App& app, const command_spec& c,
                      std::map<std::string, std::string>& values, bool summary = false) {
  CLI::App* sub = app.add_subcommand(c.name, summary ? c.summary : c.brief);
  app::apply_common_style(*sub);
  for (const option_spec& o : c.options) add(*sub, o, values, c.name + " options");
  for (const option_spec& o : common_options()) add(*sub, o, values, "common options");
  sub->set_help_flag("--help", "this text")->group("common options");
  sub->group(c.hidden ? "" : "benchmarks");
  return sub;
}

std::string names_of(const std::vector<command_spec>& commands) {
  std::string out;
  for (const command_spec& c : commands) {
    if (!c.hidden) out += (out.empty() ? "" : ", ") + c.name;
  }
  return out;
}

}  // namespace

option_spec text_option(std::string name, std::string value_name, std::string help,
                        std::string full_default, std::string quick_default) {
  return make_option(std::move(name), std::move(value_name), std::move(help),
                     std::move(full_default), std::move(quick_default), value_kind::text, 1, {});
}

option_spec integer_option(std::string name, std::string value_name, std::string help,
                           std::string full_default, std::string quick_default, long long min) {
  return make_option(std::move(name), std::move(value_name), std::move(help),
                     std::move(full_default), std::move(quick_default), value_kind::integer, min,
                     {});
}

option_spec positive_option(std::string name, std::string value_name, std::string help,
                            std::string full_default, std::string quick_default) {
  return make_option(std::move(name), std::move(value_name), std::move(help),
                     std::move(full_default), std::move(quick_default), value_kind::positive, 1,
                     {});
}

option_spec integers_option(std::string name, std::string value_name, std::string help,
                            std::string full_default, std::string quick_default, long long min) {
  return make_option(std::move(name), std::move(value_name), std::move(help),
                     std::move(full_default), std::move(quick_default), value_kind::integers, min,
                     {});
}

option_spec choice_option(std::string name, std::string value_name, std::string help,
                          std::string full_default, std::string quick_default,
                          std::vector<std::string> allowed) {
  return make_option(std::move(name), std::move(value_name), std::move(help),
                     std::move(full_default), std::move(quick_default), value_kind::choice, 1,
                     std::move(allowed));
}

option_spec choices_option(std::string name, std::string value_name, std::string help,
                           std::string full_default, std::string quick_default,
                           std::vector<std::string> allowed) {
  return make_option(std::move(name), std::move(value_name), std::move(help),
                     std::move(full_default), std::move(quick_default), value_kind::choices, 1,
                     std::move(allowed));
}

const std::vector<option_spec>& common_options() {
  static const std::vector<option_spec> options = {
      text_option("json", "FILE", "write every raw timing, the machine and the date as JSON", "",
                  ""),
      text_option("plot", "DIR", "draw PNG plots into DIR (scripts/bench/plot.py, matplotlib)", "",
                  ""),
      text_option("quick", "", "tiny sizes: checks that everything runs, measures nothing useful",
                  "", ""),
      choice_option("backend", app::join_choices(app::backend_choices()),
                    "where the benchmarks run", "auto", "auto", app::backend_choices()),
      integer_option("repeat", "N", "timed repetitions; the median counts", "5", "2"),
      integer_option("warmup", "N", "untimed repetitions first", "1", "1", 0),
      text_option("help", "", "this text", "", ""),
  };
  return options;
}

option_values::option_values(const command_spec& command, std::map<std::string, std::string> given)
    : command_(command.name), given_(std::move(given)) {
  quick_ = flag("quick");
  const auto fill = [&](const option_spec& o) {
    const auto it = given_.find(o.name);
    const std::string& fallback = quick_ ? o.quick_default : o.full_default;
    if (it != given_.end()) {
      values_[o.name] = it->second;
    } else if (!fallback.empty()) {
      values_[o.name] = fallback;
    }
  };
  for (const option_spec& o : common_options()) fill(o);
  for (const option_spec& o : command.options) fill(o);
}

std::string option_values::text(const std::string& name) const {
  const auto it = values_.find(name);
  return it == values_.end() ? std::string{} : it->second;
}

long long option_values::integer(const std::string& name) const {
  return app::to_integer(text(name));
}

double option_values::positive(const std::string& name) const { return std::stod(text(name)); }

std::vector<long long> option_values::integers(const std::string& name) const {
  const auto values = app::to_integers(text(name));
  return {values.begin(), values.end()};
}

std::vector<std::string> option_values::choices(const std::string& name) const {
  return app::split_list(text(name));
}

command_line parse_command_line(const std::vector<command_spec>& commands,
                                const std::vector<std::string>& args) {
  const std::string& first = args.front();
  command_line line;
  if (first == "--help" || first == "-h" || first == "help") {
    line.help = true;
    return line;
  }
  for (const command_spec& c : commands) {
    if (c.name == first) line.command = &c;
  }
  if (line.command == nullptr) {
    throw invalid_argument("funnel-bench: unknown benchmark '" + app::echo(first) +
                           "' (allowed: " + names_of(commands) + ")");
  }
  const std::string prefix = "funnel-bench " + first + ": ";
  CLI::App app("funnel-bench", "funnel-bench");
  std::map<std::string, std::string> values;
  CLI::App* sub = add_command(app, *line.command, values);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    line.help = true;
    return line;
  } catch (const CLI::ParseError& e) {
    throw invalid_argument(prefix + app::describe(e));
  }
  try {
    app::reject_extras(*sub, "funnel-bench " + first + " --help");
  } catch (const invalid_argument& e) {
    throw invalid_argument(prefix + e.what());
  }
  for (const auto& [name, value] : values) {
    if (sub->count("--" + name) > 0) line.given[name] = value;
  }
  return line;
}

std::string command_usage(const command_spec& command) {
  CLI::App app("funnel-bench", "funnel-bench");
  std::map<std::string, std::string> values;
  return add_command(app, command, values, true)->help("funnel-bench");
}

std::string overview_usage(const std::vector<command_spec>& commands) {
  CLI::App app(
      "Measures funnel against its baselines, each pair back to back in one process tree, and "
      "prints the ratios with the goals they are held to (met / not met). Not a test suite: "
      "nothing here fails on a timing. Benchmarks that need a GPU (or two) say 'skipped' on a "
      "machine without one; --quick runs tiny sizes on any backend to check the plumbing.",
      "funnel-bench");
  app::apply_common_style(app);
  app.set_help_flag("--help", "this text");
  std::map<std::string, std::string> values;
  for (const command_spec& c : commands) add_command(app, c, values);
  app.footer("'funnel-bench <benchmark> --help' lists its options.");
  return app.help();
}

}  // namespace funnel::bench
