#include "progress.h"

#include "text_table.h"

#include "moe/format.h"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ostream>

#include <unistd.h>

namespace moe::cli {

namespace {

std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

extern "C" void onInterrupt(int) {
    g_interrupted.store(true);
}

bool progressWanted() {
    const char* env = std::getenv("MOE_PLAN_PROGRESS");
    if (env != nullptr && std::strcmp(env, "always") == 0)
        return true;
    if (env != nullptr && std::strcmp(env, "never") == 0)
        return false;
    return ::isatty(STDERR_FILENO) == 1;
}

} // namespace

void installInterruptHandler() {
    struct sigaction action {};
    action.sa_handler = onInterrupt;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND; // a second Ctrl+C is the default: the process ends
    sigaction(SIGINT, &action, nullptr);
}

bool interrupted() {
    return g_interrupted.load();
}

ProgressLine::ProgressLine(std::ostream& err, std::string what, std::string unit)
    : err_(err)
    , what_(std::move(what))
    , unit_(std::move(unit))
    , enabled_(progressWanted())
    , start_(std::chrono::steady_clock::now())
    , last_(start_ - std::chrono::seconds(1)) {}

ProgressLine::~ProgressLine() {
    if (drawn_)
        err_ << "\r\033[K" << std::flush;
}

bool ProgressLine::update(int64_t done, int64_t total) {
    if (enabled_) {
        const std::lock_guard<std::mutex> lock(mutex_);
        const auto now = std::chrono::steady_clock::now();
        if (now - last_ >= std::chrono::milliseconds(100) || (done == total && drawn_)) {
            last_ = now;
            drawn_ = true;
            const double elapsed_s = std::chrono::duration<double>(now - start_).count();
            err_ << "\r\033[K" << what_ << ": " << formatCount(static_cast<double>(done)) << " of "
                 << formatCount(static_cast<double>(total)) << " " << unit_ << " ("
                 << (total > 0 ? done * 100 / total : 100) << "%), " << formatFixed(elapsed_s, 1)
                 << " s" << std::flush;
        }
    }
    return !interrupted();
}

ProgressFn ProgressLine::callback() {
    return [this](int64_t done, int64_t total) { return update(done, total); };
}

} // namespace moe::cli
