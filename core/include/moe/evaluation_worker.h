#pragma once
// One long-lived thread that evaluates for an interactive front end (the Qt app, its Compare
// view, moe-live). Why a thread of its own rather than a task per request: evaluate()'s
// EvaluationCache (the hardware graph, recent routing samples) is not thread-safe and is worth
// keeping between requests, since an edit usually changes one field; a new thread per request
// would rebuild it every time.
//
// Newest request wins: a request replaces the one still waiting (which never runs); the one
// already running finishes, and can see that it was overtaken (superseded()) or that the worker
// is shutting down (stopping()) and return early. Qt-free; a front end turns results into its
// own events (a queued signal, a poll in the frame loop).

#include "moe/evaluate.h"

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

namespace moe {

class EvaluationWorker;

/// What a job sees while it runs on the worker thread.
class EvaluationJob {
public:
    /// The worker's cache, kept from one job to the next (only this thread touches it).
    EvaluationCache& cache;
    /// This request's number, as submit() returned it.
    const uint64_t generation;

    /// A newer request was submitted: this job's result is no longer the newest.
    bool superseded() const;
    /// The worker is being destroyed: finish as soon as possible; the result will be dropped.
    bool stopping() const;

private:
    friend class EvaluationWorker;
    EvaluationJob(EvaluationCache& cache, uint64_t generation, const EvaluationWorker& worker)
        : cache(cache)
        , generation(generation)
        , worker_(worker) {}
    const EvaluationWorker& worker_;
};

class EvaluationWorker {
public:
    /// Runs on the worker thread. It should not throw; if it does, the worker keeps running and
    /// lastError() keeps the message.
    using Job = std::function<void(EvaluationJob& job)>;

    /// Starts the thread. `cache` sets the cache's options (e.g. figures_only = true).
    explicit EvaluationWorker(EvaluationCache cache = {});
    /// Drops a waiting request, lets the running one see stopping(), and joins the thread.
    ~EvaluationWorker();
    EvaluationWorker(const EvaluationWorker&) = delete;
    EvaluationWorker& operator=(const EvaluationWorker&) = delete;

    /// Queues `job` in place of any request still waiting; returns its generation (1, 2, ...).
    uint64_t submit(Job job);
    /// Blocks until no request waits or runs (headless use, tests).
    void waitIdle();
    /// Requests that were replaced before they ran (a measure of how much work was skipped).
    uint64_t droppedCount() const;
    /// Requests that ran to the end (returned or threw).
    uint64_t finishedCount() const;
    /// The message of the last exception a job threw; empty when none did.
    std::string lastError() const;

private:
    friend class EvaluationJob;
    void run();

    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable idle_;
    EvaluationCache cache_;
    std::optional<std::pair<uint64_t, Job>> pending_;
    uint64_t newest_generation_ = 0;
    bool running_ = false;
    bool stop_ = false;
    uint64_t dropped_ = 0;
    uint64_t finished_ = 0;
    std::string last_error_;
    std::thread thread_; ///< last: starts after every other member exists
};

/// The newest result handed over from the worker thread to a front end that polls (a frame
/// loop): offer() keeps a result only when it is newer than the last one kept or taken.
template <class Result> class LatestResult {
public:
    /// Called on the worker thread; false when a newer result was already offered.
    bool offer(uint64_t generation, Result result) {
        std::lock_guard lock(mutex_);
        if (generation <= generation_)
            return false;
        generation_ = generation;
        result_ = std::move(result);
        return true;
    }
    /// The newest result not yet taken and its generation, if any.
    std::optional<std::pair<uint64_t, Result>> take() {
        std::lock_guard lock(mutex_);
        if (!result_)
            return std::nullopt;
        std::optional<std::pair<uint64_t, Result>> taken{std::in_place, generation_,
                                                         std::move(*result_)};
        result_.reset();
        return taken;
    }

private:
    std::mutex mutex_;
    uint64_t generation_ = 0;
    std::optional<Result> result_;
};

} // namespace moe
