// Arrays handed back by objects that are gone, for the next ones of their kind to fill.
//
// Why: the step timeline writes ~75 MB of spans at 16,384 GPUs (DeepSeek-V3), and memory fresh
// from the kernel costs a page fault every 4 KB: about a sixth of the simulation. The app
// simulates a new timeline on every edit and drops an older one; sampleStepTimes simulates one
// per routing sample. Arrays given back are kept up to a byte budget and taken last-in,
// first-out; objects may die on any thread, so the store is locked.
//
// Private to core/src/schedule (header-only, so it depends on nothing of the timeline's).

#pragma once

#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

namespace moe::timeline_detail {

template <class T> class RecycledArrays {
public:
    static constexpr size_t kMax_bytes = size_t{256} << 20;

    /// The one store of arrays of T (never destroyed: objects may outlive static destruction).
    static RecycledArrays& instance() {
        static auto* store = new RecycledArrays;
        return *store;
    }

    /// An empty array with room for `capacity` elements, of a given-back array when there is one.
    std::vector<T> take(size_t capacity) {
        std::vector<T> out;
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            if (!arrays_.empty()) {
                out = std::move(arrays_.back());
                arrays_.pop_back();
                bytes_ -= out.capacity() * sizeof(T);
            }
        }
        out.reserve(capacity);
        return out;
    }

    /// Keeps `array`'s memory for a later take() (while the budget allows; else frees it).
    void giveBack(std::vector<T>& array) {
        const size_t bytes = array.capacity() * sizeof(T);
        const std::lock_guard<std::mutex> lock(mutex_);
        if (bytes == 0 || bytes_ + bytes > kMax_bytes)
            return;
        array.clear();
        bytes_ += bytes;
        arrays_.push_back(std::move(array));
    }

private:
    RecycledArrays() = default;
    std::mutex mutex_;
    std::vector<std::vector<T>> arrays_;
    size_t bytes_ = 0;
};

} // namespace moe::timeline_detail
