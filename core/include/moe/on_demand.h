#pragma once
// A value computed the first time someone reads it, then kept: evaluate() leaves the per-GPU
// and per-link detail (the hardware graph, link traffic) to the views that draw it, so pricing a
// layout costs the same on 64 GPUs as on 65,536. Thread-safe: a report is read from the
// evaluation thread and the UI thread at once.

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <utility>

namespace moe {

template <class T> class OnDemand {
public:
    virtual ~OnDemand() = default;

    /// A value that is already known (tests, callers that computed it themselves).
    static std::shared_ptr<const OnDemand> of(T value);

    const T& get() const {
        std::call_once(once_, [this] {
            value_ = make();
            release();
            made_ = true;
        });
        return value_;
    }

    /// Whether get() has computed the value yet (what evaluate() leaves for later stays unmade).
    bool made() const { return made_; }

protected:
    OnDemand() = default;
    virtual T make() const = 0;
    virtual void release() const {} ///< drops what make() read, once it has run

private:
    mutable std::once_flag once_;
    mutable T value_{};
    mutable std::atomic<bool> made_{false};
};

/// OnDemand<T> computed by `make` (a callable returning T), held in the same allocation: one
/// per report, so evaluate() pays no allocation for the callable.
template <class T, class Make> class OnDemandBy final : public OnDemand<T> {
public:
    explicit OnDemandBy(Make make)
        : make_(std::move(make)) {}

private:
    T make() const override { return (*make_)(); }
    void release() const override { make_.reset(); }
    mutable std::optional<Make> make_;
};

template <class Make>
std::shared_ptr<const OnDemand<std::invoke_result_t<Make&>>> onDemand(Make make) {
    using T = std::invoke_result_t<Make&>;
    return std::make_shared<const OnDemandBy<T, Make>>(std::move(make));
}

template <class T> std::shared_ptr<const OnDemand<T>> OnDemand<T>::of(T value) {
    auto ready = onDemand([value = std::move(value)]() mutable { return std::move(value); });
    ready->get();
    return ready;
}

} // namespace moe
