#include "version.h"

namespace moe::cmdline {

const char* version() {
    return MOE_VERSION;
}

} // namespace moe::cmdline
