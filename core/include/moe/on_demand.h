#pragma once
// A value computed the first time someone reads it, then kept: evaluate() leaves the per-GPU
// and per-link detail (the hardware graph, link traffic) to the views that draw it, so pricing a
// layout costs the same on 64 GPUs as on 65,536. Thread-safe: a report is read from the
// evaluation thread and the UI thread at once.

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>

namespace moe {

template <class T> class OnDemand {
public:
    /// `make` runs once, on the first get(); what it captures is released afterwards.
    explicit OnDemand(std::function<T()> make)
        : make_(std::move(make)) {}

    /// A value that is already known (tests, callers that computed it themselves).
    static std::shared_ptr<const OnDemand> of(T value) {
        auto ready = std::make_shared<OnDemand>(std::function<T()>{});
        std::call_once(ready->once_, [&] {
            ready->value_ = std::move(value);
            ready->made_ = true;
        });
        return ready;
    }

    const T& get() const {
        std::call_once(once_, [this] {
            value_ = make_();
            make_ = nullptr;
            made_ = true;
        });
        return value_;
    }

    /// Whether get() has computed the value yet (what evaluate() leaves for later stays unmade).
    bool made() const { return made_; }

private:
    mutable std::once_flag once_;
    mutable std::function<T()> make_;
    mutable T value_{};
    mutable std::atomic<bool> made_{false};
};

} // namespace moe
