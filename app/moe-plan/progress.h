#pragma once
// Long commands (search, sweep, the timeline's routing samples) draw a progress line on
// standard error when it is a terminal (or when MOE_PLAN_PROGRESS=always), and stop cleanly on
// Ctrl+C: the unit in hand finishes, nothing partial is written, and the exit status is 130.

#include "moe/progress.h"

#include <chrono>
#include <iosfwd>
#include <mutex>
#include <string>

namespace moe::cli {

/// The first SIGINT sets the flag long operations poll; the handler then resets itself, so a
/// second Ctrl+C ends the process at once.
void installInterruptHandler();
bool interrupted();

class ProgressLine {
public:
    /// "search: 1,234 of 5,678 structures (22%), 3.1 s". `unit` names what is counted.
    ProgressLine(std::ostream& err, std::string what, std::string unit);
    ~ProgressLine(); ///< erases the line
    ProgressLine(const ProgressLine&) = delete;
    ProgressLine& operator=(const ProgressLine&) = delete;

    /// Redraws at most ten times a second; returns false once the user pressed Ctrl+C.
    bool update(int64_t done, int64_t total);
    /// update() as a ProgressFn for the core.
    ProgressFn callback();

private:
    std::ostream& err_;
    std::string what_, unit_;
    bool enabled_;
    bool drawn_ = false;
    std::mutex mutex_;
    std::chrono::steady_clock::time_point start_, last_;
};

} // namespace moe::cli
