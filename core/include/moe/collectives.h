#pragma once
// Alpha-beta cost of collectives on the two link classes (scale-up NVLink, scale-out NIC),
// and how their bytes spread over the links of the hardware graph. Formulas with derivations
// are next to the code in collectives.cpp.

#include "moe/placement.h"
#include "moe/topology.h"

#include <vector>

namespace moe {

/// One link class as a collective sees it: achievable per-direction bandwidth per GPU.
struct LinkParams {
    double bandwidth_gbps = 0; ///< GB/s per direction per GPU (already times efficiency)
    double latency_us = 0;     ///< per algorithm step
};

/// How a group sits on the hardware, reduced to what the formulas need.
struct GroupShape {
    int size = 1;            ///< n GPUs
    int gpus_per_domain = 1; ///< members that share one scale-up domain (n_l)
    int domains = 1;         ///< g = size / gpus_per_domain
    int nodes = 1;           ///< nodes the group touches (node-limited routing counts nodes)
};
GroupShape shapeOf(const GroupSpan& span);

struct CollectiveCost {
    double time_s = 0;
    double scale_up_bytes_per_gpu = 0;  ///< sent by each GPU over NVLink
    double scale_out_bytes_per_gpu = 0; ///< sent by each GPU through its NIC
};

/// All-reduce of `bytes` per GPU: ring inside one domain; hierarchical (reduce-scatter inside,
/// ring all-reduce of bytes/n_l across domains on every GPU's own NIC, all-gather inside) when
/// the group crosses domains.
CollectiveCost allReduce(const GroupShape& g, double bytes, const LinkParams& up,
                         const LinkParams& out);
/// Reduce-scatter (or all-gather, the same cost) of a `bytes` buffer per GPU.
CollectiveCost reduceScatter(const GroupShape& g, double bytes, const LinkParams& up,
                             const LinkParams& out);

/// All-to-all (MoE dispatch or combine). `bytes_sent` = bytes each GPU sends in total
/// (including to itself); `max_recv_factor` = bytes received by the busiest GPU / mean (>= 1,
/// from the routing sample). The domain-local share rides NVLink, the rest the NIC, the two
/// concurrently. `cross_domain_bytes_override` >= 0 replaces the NIC share and
/// `scale_up_bytes_override` >= 0 the NVLink share (node-limited routing: one copy per target
/// node, forwarded over NVLink inside it).
CollectiveCost allToAll(const GroupShape& g, double bytes_sent, double max_recv_factor,
                        const LinkParams& up, const LinkParams& out,
                        double cross_domain_bytes_override = -1,
                        double scale_up_bytes_override = -1);

/// Expected number of distinct targets a token's top_k picks reach when they are independent
/// and uniform over `targets` targets (fractional counts allowed): targets (1 - (1 -
/// 1/targets)^top_k).
double expectedDistinctTargets(double targets, int top_k);

/// Expected number of distinct remote nodes a token's top_k experts fall on when the group
/// spans `nodes` nodes (experts spread evenly), capped by node-limited routing `max_nodes`
/// (0 = no limit). Used for DeepSeek-style dispatch: one copy per target node.
double expectedRemoteNodesPerToken(int nodes, int top_k, int max_nodes);

/// Point-to-point send of `bytes` over one link.
double sendRecvTime_s(double bytes, const LinkParams& link);

/// Adds a collective's bytes to every link it loads. `scale_up_bytes_per_gpu` lands on each
/// member's NVSwitch link; `scale_out_bytes_per_gpu` on each member's GPU-NIC and NIC-leaf link,
/// and on leaf-spine uplinks for the share whose peers sit under another leaf.
/// `group_gpus` are the members (GPUs outside the graph are skipped).
void addLinkBytes(const HardwareGraph& graph, const std::vector<int>& group_gpus,
                  double scale_up_bytes_per_gpu, double scale_out_bytes_per_gpu,
                  std::vector<double>& link_bytes);
void addLinkBytes(const HardwareGraph& graph, const ParallelGroup& group,
                  double scale_up_bytes_per_gpu, double scale_out_bytes_per_gpu,
                  std::vector<double>& link_bytes);

} // namespace moe
