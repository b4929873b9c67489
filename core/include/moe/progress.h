#pragma once
// How a long computation (the layout search, a sweep, step-time sampling) reports how far it is
// and learns that it should stop: the command-line tool draws a progress line on a terminal and
// stops cleanly on Ctrl+C.

#include <cstdint>
#include <functional>

namespace moe {

/// Called as units of work complete with (done, total); returning false asks the computation to
/// stop at the next unit boundary (it then says it was interrupted and returns no partial
/// result). May be called from several worker threads at once, so it must be thread-safe.
using ProgressFn = std::function<bool(int64_t done, int64_t total)>;

} // namespace moe
