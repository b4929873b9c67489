#include "moe/evaluation_worker.h"

#include <exception>

namespace moe {

bool EvaluationJob::superseded() const {
    std::lock_guard lock(worker_.mutex_);
    return worker_.newest_generation_ > generation;
}

bool EvaluationJob::stopping() const {
    std::lock_guard lock(worker_.mutex_);
    return worker_.stop_;
}

EvaluationWorker::EvaluationWorker(EvaluationCache cache)
    : cache_(std::move(cache))
    , thread_([this] { run(); }) {}

EvaluationWorker::~EvaluationWorker() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
        if (pending_) {
            pending_.reset();
            ++dropped_;
        }
    }
    wake_.notify_all();
    thread_.join();
}

uint64_t EvaluationWorker::submit(Job job) {
    uint64_t generation = 0;
    {
        std::lock_guard lock(mutex_);
        generation = ++newest_generation_;
        if (pending_)
            ++dropped_;
        pending_.emplace(generation, std::move(job));
    }
    wake_.notify_one();
    return generation;
}

void EvaluationWorker::waitIdle() {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [this] { return stop_ || (!pending_ && !running_); });
}

uint64_t EvaluationWorker::droppedCount() const {
    std::lock_guard lock(mutex_);
    return dropped_;
}

uint64_t EvaluationWorker::finishedCount() const {
    std::lock_guard lock(mutex_);
    return finished_;
}

std::string EvaluationWorker::lastError() const {
    std::lock_guard lock(mutex_);
    return last_error_;
}

void EvaluationWorker::run() {
    for (;;) {
        std::pair<uint64_t, Job> request;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [this] { return stop_ || pending_.has_value(); });
            if (stop_)
                break;
            request = std::move(*pending_);
            pending_.reset();
            running_ = true;
        }
        // The cache is touched only here, outside the lock: submit() never waits for a job.
        EvaluationJob job(cache_, request.first, *this);
        std::string error;
        try {
            request.second(job);
        } catch (const std::exception& e) {
            error = e.what();
        } catch (...) {
            error = "unknown exception";
        }
        {
            std::lock_guard lock(mutex_);
            running_ = false;
            ++finished_;
            if (!error.empty())
                last_error_ = std::move(error);
        }
        idle_.notify_all();
    }
    idle_.notify_all();
}

} // namespace moe
