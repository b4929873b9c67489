// Parallel degrees in validation messages: their product without overflow, and as text.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>

namespace moe::validate_detail {

// Saturates instead of overflowing: absurd degrees must give a clear message, not UB.
inline int64_t product(std::initializer_list<int64_t> factors) {
    int64_t p = 1;
    for (int64_t f : factors)
        if (__builtin_mul_overflow(p, f, &p))
            return std::numeric_limits<int64_t>::max();
    return p;
}

inline std::string joined(std::initializer_list<int64_t> factors) {
    std::string s;
    for (int64_t f : factors) {
        if (!s.empty())
            s += '*';
        s += std::to_string(f);
    }
    return s;
}

} // namespace moe::validate_detail
