#include "cli.hpp"

#include <cstdlib>
#include <sstream>

#include "funnel/error.hpp"

namespace funnel::bench {
namespace {

const option_spec* find_spec(const command_spec& command, const std::string& name) {
  for (const option_spec& o : command.options) {
    if (o.name == name) return &o;
  }
  for (const option_spec& o : common_options()) {
    if (o.name == name) return &o;
  }
  return nullptr;
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ',')) out.push_back(item);
  if (!text.empty() && text.back() == ',') out.emplace_back();
  return out;
}

bool parse_integer(const std::string& text, long long& value) {
  if (text.empty()) return false;
  char* end = nullptr;
  value = std::strtoll(text.c_str(), &end, 10);
  return *end == '\0';
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? "|" : "") + items[i];
  return out;
}

void describe(std::ostringstream& out, const option_spec& o) {
  std::string head = "  --" + o.name + (o.value_name.empty() ? "" : " " + o.value_name);
  if (head.size() < 26) head.resize(26, ' ');
  out << head << ' ' << o.help;
  if (!o.full_default.empty()) {
    out << " (default " << o.full_default;
    if (o.quick_default != o.full_default) out << "; --quick " << o.quick_default;
    out << ')';
  }
  out << '\n';
}

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
      choice_option("backend", "auto|cuda|host", "where the benchmarks run", "auto", "auto",
                    {"auto", "cuda", "host"}),
      integer_option("repeat", "N", "timed repetitions; the median counts", "5", "2"),
      integer_option("warmup", "N", "untimed repetitions first", "1", "1", 0),
      text_option("help", "", "this text", "", ""),
  };
  return options;
}

option_values::option_values(const command_spec& command, const std::vector<std::string>& args)
    : command_(command.name) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
      throw invalid_argument("funnel-bench " + command_ + ": unexpected argument '" + arg +
                             "' (options start with --; see funnel-bench " + command_ + " --help)");
    }
    std::string name = arg.substr(2);
    std::string value;
    bool has_value = false;
    if (const auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
      has_value = true;
    }
    const option_spec* spec = find_spec(command, name);
    if (spec == nullptr) {
      throw invalid_argument("funnel-bench " + command_ + ": unknown option '--" + name +
                             "' (see funnel-bench " + command_ + " --help)");
    }
    if (spec->value_name.empty()) {
      if (has_value) {
        throw invalid_argument("funnel-bench " + command_ + ": --" + name +
                               " is a flag and takes no value");
      }
      value = "1";
    } else if (!has_value) {
      if (i + 1 >= args.size()) {
        throw invalid_argument("funnel-bench " + command_ + ": --" + name + " needs a value (" +
                               spec->value_name + ")");
      }
      value = args[++i];
    }
    values_[name] = value;
    given_[name] = true;
  }
  quick_ = given("quick");
  const auto fill = [&](const option_spec& o) {
    if (given(o.name)) return;
    const std::string& d = quick_ ? o.quick_default : o.full_default;
    if (!d.empty()) values_[o.name] = d;
  };
  for (const option_spec& o : common_options()) fill(o);
  for (const option_spec& o : command.options) fill(o);
  // Check every value now, so a bad one stops the run before anything is measured.
  const auto validate = [&](const option_spec& o) {
    if (values_.count(o.name) == 0) return;
    switch (o.kind) {
      case value_kind::text:
        return;
      case value_kind::integer:
        (void)integer(o.name, o.min);
        return;
      case value_kind::positive:
        (void)positive(o.name);
        return;
      case value_kind::integers:
        (void)integers(o.name, o.min);
        return;
      case value_kind::choice:
        (void)choice(o.name, o.allowed);
        return;
      case value_kind::choices:
        (void)choices(o.name, o.allowed);
        return;
    }
  };
  for (const option_spec& o : common_options()) validate(o);
  for (const option_spec& o : command.options) validate(o);
}

bool option_values::flag(const std::string& name) const { return given(name); }

bool option_values::given(const std::string& name) const {
  const auto it = given_.find(name);
  return it != given_.end() && it->second;
}

std::string option_values::text(const std::string& name) const {
  const auto it = values_.find(name);
  return it == values_.end() ? std::string{} : it->second;
}

void option_values::bad(const std::string& name, const std::string& value,
                        const std::string& allowed) const {
  throw invalid_argument("funnel-bench " + command_ + ": --" + name + " '" + value +
                         "' is invalid: " + allowed);
}

long long option_values::integer(const std::string& name, long long min) const {
  const std::string t = text(name);
  long long v = 0;
  if (!parse_integer(t, v) || v < min) {
    bad(name, t, "an integer of at least " + std::to_string(min));
  }
  return v;
}

double option_values::positive(const std::string& name) const {
  const std::string t = text(name);
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || *end != '\0' || !(v > 0.0) || v > 1e15) bad(name, t, "a number above 0");
  return v;
}

std::vector<long long> option_values::integers(const std::string& name, long long min) const {
  const std::string t = text(name);
  std::vector<long long> out;
  for (const std::string& item : split(t)) {
    long long v = 0;
    if (!parse_integer(item, v) || v < min) {
      bad(name, t, "a comma-separated list of integers of at least " + std::to_string(min));
    }
    out.push_back(v);
  }
  if (out.empty()) bad(name, t, "a comma-separated list of integers");
  return out;
}

std::vector<std::string> option_values::choices(const std::string& name,
                                                const std::vector<std::string>& allowed) const {
  const std::string t = text(name);
  std::vector<std::string> out;
  for (const std::string& item : split(t)) {
    bool ok = false;
    for (const std::string& a : allowed) ok = ok || a == item;
    if (!ok) bad(name, t, "a comma-separated list of " + join(allowed));
    out.push_back(item);
  }
  if (out.empty()) bad(name, t, "a comma-separated list of " + join(allowed));
  return out;
}

std::string option_values::choice(const std::string& name,
                                  const std::vector<std::string>& allowed) const {
  const std::string t = text(name);
  for (const std::string& a : allowed) {
    if (a == t) return t;
  }
  bad(name, t, "one of " + join(allowed));
}

std::string command_usage(const command_spec& command) {
  std::ostringstream out;
  out << "usage: funnel-bench " << command.name << " [options]\n\n" << command.summary << "\n\n";
  if (!command.options.empty()) {
    out << command.name << " options\n";
    for (const option_spec& o : command.options) describe(out, o);
    out << '\n';
  }
  out << "common options\n";
  for (const option_spec& o : common_options()) describe(out, o);
  return out.str();
}

std::string overview_usage(const std::vector<command_spec>& commands) {
  std::ostringstream out;
  out << "usage: funnel-bench <benchmark>|all [options]\n\n"
         "Measures funnel against its baselines, each pair back to back in one process tree, and\n"
         "prints the ratios with the goals they are held to (met / not met). Not a test suite:\n"
         "nothing here fails on a timing. Benchmarks that need a GPU (or two) say 'skipped' on\n"
         "a machine without one; --quick runs tiny sizes on any backend to check the plumbing.\n\n"
         "benchmarks\n";
  for (const command_spec& c : commands) {
    if (c.hidden) continue;
    std::string head = "  " + c.name;
    if (head.size() < 12) head.resize(12, ' ');
    out << head << c.brief << '\n';
  }
  out << "\ncommon options\n";
  for (const option_spec& o : common_options()) describe(out, o);
  out << "\n'funnel-bench <benchmark> --help' lists a benchmark's own options.\n";
  return out.str();
}

}  // namespace funnel::bench
