#include "options.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <utility>

#include "funnel/error.hpp"

namespace funnel::stencil {
namespace {

/// One line naming the option, the bad value and what is allowed (the app prints it verbatim).
[[noreturn]] void bad_value(const std::string& name, const std::string& value,
                            const std::string& allowed) {
  throw invalid_argument(name + " '" + value + "' is not valid: expected " + allowed);
}

std::int64_t parse_integer(const std::string& name, const std::string& text, std::int64_t min,
                           std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
  const std::string allowed =
      max >= std::numeric_limits<int>::max()
          ? "an integer >= " + std::to_string(min)
          : "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  if (text.empty()) bad_value(name, text, allowed);
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end != text.c_str() + text.size() || value < min || value > max) {
    bad_value(name, text, allowed);
  }
  return value;
}

/// A byte count: an integer >= 1 with an optional K, M or G suffix (powers of 1024).
std::size_t parse_bytes(const std::string& name, const std::string& text) {
  const std::string allowed = "a byte count >= 1, optionally with a K, M or G suffix (e.g. 64M)";
  if (text.empty()) bad_value(name, text, allowed);
  std::string digits = text;
  std::size_t scale = 1;
  const char suffix = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
  if (suffix == 'K' || suffix == 'M' || suffix == 'G') {
    digits.pop_back();
    scale = std::size_t{1} << (suffix == 'K' ? 10 : suffix == 'M' ? 20 : 30);
  }
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(digits.c_str(), &end, 10);
  if (digits.empty() || errno != 0 || end != digits.c_str() + digits.size() || value < 1 ||
      static_cast<unsigned long long>(value) > std::numeric_limits<std::size_t>::max() / scale) {
    bad_value(name, text, allowed);
  }
  return static_cast<std::size_t>(value) * scale;
}

int parse_int(const std::string& name, const std::string& text, int min) {
  return static_cast<int>(parse_integer(name, text, min, std::numeric_limits<int>::max()));
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, separator)) parts.push_back(part);
  if (!text.empty() && text.back() == separator) parts.emplace_back();
  return parts;
}

/// "A,B[,C]" with each value >= min; a missing third value is 1 (a 2D grid or split).
index3 parse_triple(const std::string& name, const std::string& text, std::int64_t min,
                    const std::string& allowed) {
  const auto parts = split(text, ',');
  if (parts.size() < 2 || parts.size() > 3) bad_value(name, text, allowed);
  index3 value{1, 1, 1};
  for (std::size_t a = 0; a < parts.size(); ++a) {
    try {
      value[a] = parse_integer(name, parts[a], min);
    } catch (const invalid_argument&) {
      bad_value(name, text, allowed);
    }
  }
  return value;
}

template <class Enum>
Enum parse_choice(const std::string& name, const std::string& text,
                  const std::vector<std::pair<std::string, Enum>>& choices) {
  std::string allowed;
  for (const auto& [word, value] : choices) {
    if (word == text) return value;
    allowed += (allowed.empty() ? "" : "|") + word;
  }
  bad_value(name, text, allowed);
}

std::string parse_word(const std::string& name, const std::string& text,
                       const std::vector<std::string>& words) {
  std::string allowed;
  for (const auto& word : words) {
    if (word == text) return text;
    allowed += (allowed.empty() ? "" : "|") + word;
  }
  bad_value(name, text, allowed);
}

bool parse_bool(const std::string& name, const std::string& text) {
  if (text == "true" || text == "yes" || text == "1" || text == "on") return true;
  if (text == "false" || text == "no" || text == "0" || text == "off") return false;
  bad_value(name, text, "true|false");
}

std::string parse_path(const std::string& name, const std::string& text) {
  if (text.empty()) bad_value(name, text, "a non-empty path");
  return text;
}

/// How an option takes its value.
enum class arity { none, required, optional };

struct option_spec {
  arity takes;
  std::function<void(options&, const std::string& name, const std::string& value)> apply;
};

/// The option table: long name (without "--") -> how to apply it. One place for CLI and config.
const std::map<std::string, option_spec>& option_table() {
  static const std::map<std::string, option_spec> table = {
      {"problem",
       {arity::required,
        [](options& o, const std::string& k, const std::string& v) {
          o.problem = parse_choice<problem_kind>(
              k, v, {{"heat3d", problem_kind::heat3d}, {"jacobi2d", problem_kind::jacobi2d}});
        }}},
      {"n",
       {arity::required,
        [](options& o, const std::string& k, const std::string& v) {
          o.n = parse_triple(k, v, 1, "NX,NY[,NZ] with positive integers");
        }}},
      {"steps",
       {arity::required, [](options& o, const std::string& k,
                            const std::string& v) { o.steps = parse_integer(k, v, 0); }}},
      {"dtype",
       {arity::required,
        [](options& o, const std::string& k, const std::string& v) {
          o.dtype = parse_choice<scalar_type>(
              k, v, {{"float", scalar_type::float32}, {"double", scalar_type::float64}});
        }}},
      {"backend",
       {arity::required,
        [](options& o, const std::string& k, const std::string& v) {
          o.backend = parse_word(k, v, {"auto", "cuda", "host"});
        }}},
      {"kernel",
       {arity::required,
        [](options& o, const std::string& k, const std::string& v) {
          o.kernel = parse_word(k, v, {"cuda", "host", "kokkos"});
        }}},
      {"mode",
       {arity::required,
        [](options& o, const std::string& k, const std::string& v) {
          o.mode = parse_choice<run_mode>(
              k, v, {{"resident", run_mode::resident}, {"streamed", run_mode::streamed}});
        }}},
      {"halo",
       {arity::required,
        [](options& o, const std::string& k, const std::string& v) {
          o.halo = parse_word(k, v, {"auto", "ipc", "mpi"});
        }}},
      {"dims",
       {arity::required,
        [](options& o, const std::string& k, const std::string& v) {
          const index3 d = parse_triple(k, v, 0, "PX,PY[,PZ] with integers >= 0 (0: MPI chooses)");
          for (int a = 0; a < 3; ++a) {
            if (d[a] > std::numeric_limits<int>::max()) {
              bad_value(k, v, "PX,PY[,PZ] with integers >= 0 (0: MPI chooses)");
            }
            o.dims[a] = static_cast<int>(d[a]);
          }
        }}},
      {"check-every",
       {arity::required, [](options& o, const std::string& k,
                            const std::string& v) { o.check_every = parse_integer(k, v, 0); }}},
      {"summary",
       {arity::required, [](options& o, const std::string& k,
                            const std::string& v) { o.summary = parse_path(k, v); }}},
      {"output-every",
       {arity::required, [](options& o, const std::string& k,
                            const std::string& v) { o.output_every = parse_integer(k, v, 0); }}},
      {"output-dir",
       {arity::required, [](options& o, const std::string& k,
                            const std::string& v) { o.output_dir = parse_path(k, v); }}},
      {"output-overlap",
       {arity::required,
        [](options& o, const std::string& k, const std::string& v) {
          o.output_overlap = parse_word(k, v, {"auto", "on", "off"});
        }}},
      {"checkpoint-every",
       {arity::required,
        [](options& o, const std::string& k, const std::string& v) {
          o.checkpoint_every = parse_integer(k, v, 0);
        }}},
      {"checkpoint-dir",
       {arity::required, [](options& o, const std::string& k,
                            const std::string& v) { o.checkpoint_dir = parse_path(k, v); }}},
      {"keep",
       {arity::required, [](options& o, const std::string& k,
                            const std::string& v) { o.keep = parse_int(k, v, 1); }}},
      {"restart",
       {arity::optional,
        [](options& o, const std::string&, const std::string& v) { o.restart = v; }}},
      {"streams",
       {arity::required, [](options& o, const std::string& k,
                            const std::string& v) { o.streams = parse_int(k, v, 1); }}},
      {"chunks",
       {arity::required, [](options& o, const std::string& k,
                            const std::string& v) { o.chunks = parse_int(k, v, 1); }}},
      {"steps-per-pass",
       {arity::required, [](options& o, const std::string& k,
                            const std::string& v) { o.steps_per_pass = parse_int(k, v, 1); }}},
      {"pool-limit",
       {arity::required, [](options& o, const std::string& k,
                            const std::string& v) { o.pool_limit = parse_bytes(k, v); }}},
      {"trace",
       {arity::required, [](options& o, const std::string& k,
                            const std::string& v) { o.trace = parse_path(k, v); }}},
      {"field-dump",
       {arity::required, [](options& o, const std::string& k,
                            const std::string& v) { o.field_dump = parse_path(k, v); }}},
      {"quiet",
       {arity::none, [](options& o, const std::string& k,
                        const std::string& v) { o.quiet = v.empty() || parse_bool(k, v); }}},
      {"help",
       {arity::none, [](options& o, const std::string&, const std::string&) { o.help = true; }}},
      {"version",
       {arity::none, [](options& o, const std::string&, const std::string&) { o.version = true; }}},
  };
  return table;
}

/// multi-gpu-programming-models' Jacobi spellings -> our long names.
const std::map<std::string, std::string>& jacobi_aliases() {
  static const std::map<std::string, std::string> aliases = {
      {"-nx", "nx"}, {"-ny", "ny"}, {"-niter", "steps"}, {"-nccheck", "check-every"}};
  return aliases;
}

/// Parsed but not yet applied: the Jacobi -nx/-ny pair is combined into --n at the end.
struct pending {
  std::optional<std::int64_t> nx, ny;
  bool problem_given = false;
  bool jacobi_spelling = false;
};

void apply(options& o, pending& p, const std::string& key, const std::string& value,
           const std::string& shown_name) {
  if (key == "nx" || key == "ny") {
    (key == "nx" ? p.nx : p.ny) = parse_integer(shown_name, value, 3);
    p.jacobi_spelling = true;
    return;
  }
  const auto& table = option_table();
  const auto it = table.find(key);
  if (it == table.end()) {
    throw invalid_argument("unknown option '" + shown_name + "' (see --help)");
  }
  it->second.apply(o, shown_name, value);
  if (key == "problem") p.problem_given = true;
  if (std::find(o.given.begin(), o.given.end(), key) == o.given.end()) o.given.push_back(key);
}

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

/// Reads `key = value` lines ('#' starts a comment) and applies them.
void apply_config_file(options& o, pending& p, const std::string& path) {
  std::ifstream in(path);
  if (!in) bad_value("--config", path, "a readable file of 'key = value' lines");
  std::string line;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    line = trim(line);
    if (line.empty()) continue;
    const auto where = path + ":" + std::to_string(line_number);
    const auto equals = line.find('=');
    if (equals == std::string::npos) {
      throw invalid_argument(where + ": '" + line + "' is not valid: expected 'key = value'");
    }
    const std::string key = trim(line.substr(0, equals));
    const std::string value = trim(line.substr(equals + 1));
    if (key == "config") {
      throw invalid_argument(where + ": 'config' is not valid in a config file (no nesting)");
    }
    if (key != "nx" && key != "ny" && option_table().count(key) == 0) {
      throw invalid_argument(where + ": unknown key '" + key +
                             "' (keys are the long option names, see --help)");
    }
    apply(o, p, key, value, where + ": " + key);
  }
}

struct token {
  std::string key;    // long name or alias target
  std::string shown;  // as the user wrote it, for messages
  std::optional<std::string> value;
  bool jacobi_alias = false;  // one of -nx -ny -niter -nccheck
};

/// Splits argv into (key, value) tokens without applying them.
std::vector<token> tokenize(const std::vector<std::string>& args) {
  std::vector<token> tokens;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const auto alias = jacobi_aliases().find(arg);
    if (alias != jacobi_aliases().end()) {
      if (i + 1 >= args.size()) bad_value(arg, "", "a value after " + arg);
      tokens.push_back({alias->second, arg, args[++i], true});
      continue;
    }
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
      throw invalid_argument("unexpected argument '" + arg +
                             "' (options start with --, see --help)");
    }
    std::string key = arg.substr(2);
    std::optional<std::string> value;
    if (const auto eq = key.find('='); eq != std::string::npos) {
      value = key.substr(eq + 1);
      key.erase(eq);
    }
    const std::string shown = "--" + key;
    if (key == "config") {
      if (!value) {
        if (i + 1 >= args.size()) bad_value(shown, "", "a file after --config");
        value = args[++i];
      }
      tokens.push_back({key, shown, value});
      continue;
    }
    const auto it = option_table().find(key);
    if (it == option_table().end()) {
      throw invalid_argument("unknown option '" + arg + "' (see --help)");
    }
    switch (it->second.takes) {
      case arity::none:
        if (value) bad_value(shown, *value, "no value (" + shown + " is a flag)");
        break;
      case arity::required:
        if (!value) {
          if (i + 1 >= args.size()) bad_value(shown, "", "a value after " + shown);
          value = args[++i];
        }
        break;
      case arity::optional:
        if (!value && i + 1 < args.size() && args[i + 1].rfind('-', 0) != 0) value = args[++i];
        break;
    }
    tokens.push_back({key, shown, value});
  }
  return tokens;
}

}  // namespace

std::string to_string(problem_kind problem) {
  return problem == problem_kind::heat3d ? "heat3d" : "jacobi2d";
}

std::string to_string(scalar_type type) {
  return type == scalar_type::float32 ? "float" : "double";
}

std::string to_string(run_mode mode) {
  return mode == run_mode::resident ? "resident" : "streamed";
}

options parse_options(const std::vector<std::string>& args) {
  const auto tokens = tokenize(args);
  options o;
  pending p;
  // The config file first, so that the command line overrides it wherever --config appears.
  for (const auto& t : tokens) {
    if (t.key == "config") apply_config_file(o, p, *t.value);
  }
  for (const auto& t : tokens) {
    if (t.key == "config") continue;
    apply(o, p, t.key, t.value.value_or(""), t.shown);
    if (t.jacobi_alias && !p.problem_given) o.problem = problem_kind::jacobi2d;
  }
  if (p.jacobi_spelling) {
    if (o.problem != problem_kind::jacobi2d) {
      throw invalid_argument("-nx/-ny are the jacobi2d spelling; --problem '" +
                             to_string(o.problem) + "' takes --n NX,NY,NZ");
    }
    if (o.n && (p.nx || p.ny)) {
      throw invalid_argument("--n and -nx/-ny both given: use one spelling of the grid size");
    }
  }
  if (p.jacobi_spelling) {
    // As in the reference code, a missing -nx or -ny takes the other's value.
    o.n = index3{p.nx.value_or(*p.ny), p.ny.value_or(*p.nx), 1};
  }
  return o;
}

void resolve_defaults(options& o, bool on_gpu) {
  if (o.problem == problem_kind::jacobi2d) {
    if (o.dtype && *o.dtype != scalar_type::float32) {
      bad_value("--dtype", to_string(*o.dtype), "float for jacobi2d (the reference is float only)");
    }
    o.dtype = scalar_type::float32;
    if (!o.n) o.n = on_gpu ? index3{16384, 16384, 1} : index3{1024, 1024, 1};
    const index3 n = *o.n;
    if (n[0] < 3 || n[1] < 3 || n[2] != 1) {
      bad_value("--n",
                std::to_string(n[0]) + "," + std::to_string(n[1]) + "," + std::to_string(n[2]),
                "NX,NY with NX, NY >= 3 for jacobi2d (the grid including its boundary)");
    }
    if (!o.steps) o.steps = 1000;
    if (!o.check_every) o.check_every = 1;
    if (*o.check_every < 1) {
      bad_value("--check-every", std::to_string(*o.check_every),
                "an integer >= 1 for jacobi2d (the norm cadence, -nccheck)");
    }
  } else {
    if (!o.dtype) o.dtype = scalar_type::float64;
    if (!o.n) o.n = on_gpu ? index3{256, 256, 256} : index3{128, 128, 128};
    if (!o.steps) o.steps = 100;
    if (!o.check_every) o.check_every = 0;
  }
  if (o.mode == run_mode::resident) {
    for (const char* key : {"streams", "chunks", "steps-per-pass", "trace"}) {
      if (std::find(o.given.begin(), o.given.end(), key) != o.given.end()) {
        throw invalid_argument(std::string("--") + key +
                               " is not valid with --mode resident: it needs --mode streamed");
      }
    }
  }
  if (o.mode == run_mode::streamed && o.problem != problem_kind::heat3d) {
    bad_value("--mode", "streamed", "resident for jacobi2d (streamed mode runs heat3d)");
  }
}

std::string to_config_text(const options& o) {
  std::ostringstream out;
  const auto triple = [](const auto& v) {
    return std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]);
  };
  out << "problem = " << to_string(o.problem) << "\n";
  if (o.n) out << "n = " << triple(*o.n) << "\n";
  if (o.steps) out << "steps = " << *o.steps << "\n";
  if (o.dtype) out << "dtype = " << to_string(*o.dtype) << "\n";
  out << "backend = " << o.backend << "\n";
  if (o.kernel) out << "kernel = " << *o.kernel << "\n";
  out << "mode = " << to_string(o.mode) << "\n";
  out << "halo = " << o.halo << "\n";
  out << "dims = " << triple(o.dims) << "\n";
  if (o.check_every) out << "check-every = " << *o.check_every << "\n";
  out << "output-every = " << o.output_every << "\n";
  out << "output-dir = " << o.output_dir << "\n";
  out << "output-overlap = " << o.output_overlap << "\n";
  out << "checkpoint-every = " << o.checkpoint_every << "\n";
  out << "checkpoint-dir = " << o.checkpoint_dir << "\n";
  out << "keep = " << o.keep << "\n";
  if (o.mode == run_mode::streamed) {
    out << "streams = " << o.streams << "\n";
    out << "chunks = " << o.chunks << "\n";
    out << "steps-per-pass = " << o.steps_per_pass << "\n";
  }
  return out.str();
}

std::string usage() {
  return R"(usage: funnel-stencil [options]

The sample simulation of funnel: a 3D heat equation (verified against its exact solution) or
NVIDIA multi-gpu-programming-models' 2D Jacobi relaxation, split across MPI ranks that share
GPUs. Start it directly or through funnel-run (mpirun -np N funnel-run -- funnel-stencil ...).

problem
  --problem heat3d|jacobi2d  problem to solve (default heat3d)
  --n NX,NY[,NZ]             heat3d: interior cells of the unit cube (default 128,128,128 on
                             the host, 256,256,256 on a GPU); jacobi2d: the grid including its
                             boundary, as -nx/-ny (default 1024,1024 host, 16384,16384 GPU)
  --steps N                  the step the run ends at (heat3d 100, jacobi2d 1000); with
                             --restart the same value finishes the interrupted run
  --dtype float|double       heat3d element type (default double); jacobi2d is float
  --check-every K            heat3d: report the error every K steps (0: at the end only);
                             jacobi2d: compute the norm every K iterations (default 1)
  -nx NX -ny NY -niter N -nccheck K
                             jacobi2d in multi-gpu-programming-models' spelling

execution
  --backend auto|cuda|host   where the field lives (auto: cuda when a GPU is visible)
  --kernel cuda|host|kokkos  kernel implementation (default: the backend's own)
  --mode resident|streamed   field in device memory, or in host memory streamed through the
                             GPU in chunks each pass (heat3d only)
  --halo auto|ipc|mpi        halo path (auto: IPC to ranks on this GPU, MPI otherwise)
  --dims PX,PY[,PZ]          ranks along each axis (0: funnel chooses, z first)
  --streams S --chunks C --steps-per-pass k
                             streamed mode: chunks in flight (default 3), chunks per pass
                             (default: chosen from a probe), steps per pass (default 1)
  --trace FILE               streamed mode: write a Chrome trace (open in Perfetto)
  --pool-limit BYTES         byte limit of the device pool (K/M/G suffixes); streamed mode
                             picks enough chunks to stay under it

output and restart
  --summary FILE             write the JSON summary to FILE
  --output-every N           HDF5 snapshot (+ XDMF for ParaView) every N steps
  --output-dir D             snapshot directory (default output)
  --output-overlap auto|on|off
                             write snapshots on a thread while the next steps run (one file
                             per rank + a main file); off: the loop waits for each (one shared
                             file with parallel HDF5); auto (default): on when every rank
                             may use 2 or more CPUs
  --checkpoint-every N       checkpoint every N steps (0: only when signalled)
  --checkpoint-dir D         checkpoint directory (default checkpoints)
  --keep K                   checkpoints kept (default 2)
  --restart [DIR|FILE]       continue from a checkpoint (default: --checkpoint-dir's latest)
  --field-dump FILE          testing aid: rank 0 writes the final global interior as raw
                             binary (x fastest, native endianness); small grids only

other
  --config FILE              read options from FILE: 'key = value' lines, keys are the long
                             option names ('#' comments); the command line wins
  --quiet                    no progress lines
  --help, --version

SIGTERM or SIGUSR1 (forwarded by funnel-run): finish the step, write a checkpoint, exit 75.
)";
}

}  // namespace funnel::stencil
