#include "moe/report.h"

namespace moe {

const char* toString(CollectiveKind k) {
    switch (k) {
    case CollectiveKind::moe_dispatch:
        return "moe-dispatch";
    case CollectiveKind::moe_combine:
        return "moe-combine";
    case CollectiveKind::tp_collective:
        return "tp";
    case CollectiveKind::cp_exchange:
        return "cp";
    case CollectiveKind::pp_send_recv:
        return "pp";
    case CollectiveKind::dp_sync:
        return "dp-sync";
    case CollectiveKind::edp_sync:
        return "expert-dp-sync";
    }
    return "?";
}

} // namespace moe
