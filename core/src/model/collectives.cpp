// Alpha-beta costs of the collectives MoE training runs, and how their bytes load the links of
// the hardware graph.
//
// Conventions: S = bytes per GPU, n = group size, B = achievable bandwidth per GPU per direction
// (LinkParams already includes efficiency), alpha = latency per algorithm step. A collective's
// time is (steps x alpha) + (bytes each GPU pushes through its busiest link / B). Bandwidths are
// per direction, and in every collective here each GPU sends as many bytes as it receives, so
// the bytes a GPU sends through its own link are what that link carries in its busier direction.
//
// Degenerate inputs: one GPU or no bytes cost nothing (no latency either: nothing is launched).
// A missing link (bandwidth <= 0) that must carry bytes takes infinitely long rather than NaN;
// validation reports such scenarios before they get here.
#include "moe/collectives.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace moe {

namespace {

constexpr double kBytesPerGB = 1e9;
constexpr double kSecondsPerUs = 1e-6;

// Seconds to push `bytes` through `gbps`. Written so that 0 bytes is 0 s even on a missing link.
double transfer_s(double bytes, double gbps) {
    if (!(bytes > 0))
        return 0;
    if (!(gbps > 0))
        return std::numeric_limits<double>::infinity();
    return bytes / (gbps * kBytesPerGB);
}

double alpha_s(const LinkParams& link) {
    return link.latency_us > 0 ? link.latency_us * kSecondsPerUs : 0;
}

// The shape with its invariants restored: 1 <= n_l <= n, and a group whose members all fit one
// domain (n_l == n) is a single-domain group whatever `domains` says.
struct Shape {
    int n = 1;       // group size
    int n_l = 1;     // members per domain
    int domains = 1; // g
    bool crossesDomains() const { return domains > 1 && n_l < n; }
};

Shape normalize(const GroupShape& g) {
    Shape s;
    s.n = std::max(1, g.size);
    s.n_l = std::clamp(g.gpus_per_domain, 1, s.n);
    s.domains = std::max(1, g.domains);
    if (s.n_l == s.n)
        s.domains = 1;
    return s;
}

} // namespace

GroupShape shapeOf(const GroupSpan& span) {
    GroupShape g;
    g.size = std::max(1, span.gpus);
    g.gpus_per_domain = std::clamp(span.max_gpus_per_domain, 1, g.size);
    g.domains = std::max(1, span.domains);
    g.nodes = std::max(1, span.nodes);
    return g;
}

// All-reduce.
//
// Inside one domain: ring all-reduce = reduce-scatter then all-gather, each n-1 steps in which
// every GPU sends one chunk of S/n to its ring neighbour. Bytes sent per GPU 2(n-1)/n * S, so
//     T = 2(n-1) * alpha_up + 2(n-1)/n * S / B_up.
//
// Across g domains of n_l GPUs (hierarchical, what NCCL does with NVLink + one NIC per GPU):
//   1. reduce-scatter inside each domain: every GPU ends with the domain's sum of its S/n_l
//      slice; (n_l-1) steps, (n_l-1)/n_l * S sent over NVLink.
//   2. ring all-reduce of that S/n_l slice among the g GPUs that hold the same slice, one per
//      domain, each on its own NIC (n_l rings run in parallel on n_l NICs):
//      2(g-1) steps, 2(g-1)/g * S/n_l sent through the NIC.
//   3. all-gather inside the domain, the mirror of step 1.
//     T = 2[(n_l-1) alpha_up + (n_l-1)/n_l S/B_up] + 2(g-1) alpha_out + 2(g-1)/g (S/n_l)/B_out.
// With n_l == 1 the NVLink phases vanish and this is the flat ring over the NICs. The phases
// run one after another (each needs the previous one's result for its slice), so they add.
// If domains hold unequal member counts, n_l is the largest (from the span), which makes the
// NIC phase slightly optimistic for the smaller domains' GPUs (they own bigger slices).
CollectiveCost allReduce(const GroupShape& shape, double bytes, const LinkParams& up,
                         const LinkParams& out) {
    CollectiveCost c;
    const Shape s = normalize(shape);
    if (s.n <= 1 || !(bytes > 0))
        return c;
    if (!s.crossesDomains()) {
        const double n = s.n;
        c.scale_up_bytes_per_gpu = 2.0 * (n - 1) / n * bytes;
        c.time_s =
            2.0 * (n - 1) * alpha_s(up) + transfer_s(c.scale_up_bytes_per_gpu, up.bandwidth_gbps);
        return c;
    }
    const double nl = s.n_l;
    const double g = s.domains;
    const double inner_bytes = (nl - 1) / nl * bytes; // one of reduce-scatter / all-gather
    const double inner_s = (nl - 1) * alpha_s(up) + transfer_s(inner_bytes, up.bandwidth_gbps);
    const double slice = bytes / nl;
    c.scale_out_bytes_per_gpu = 2.0 * (g - 1) / g * slice;
    const double cross_s =
        2.0 * (g - 1) * alpha_s(out) + transfer_s(c.scale_out_bytes_per_gpu, out.bandwidth_gbps);
    c.scale_up_bytes_per_gpu = 2.0 * inner_bytes;
    c.time_s = 2.0 * inner_s + cross_s;
    return c;
}

// Reduce-scatter of an S-byte buffer per GPU (all-gather to an S-byte result costs the same:
// the same chunks move the other way).
//
// Inside one domain (ring): n-1 steps, each GPU sends (n-1)/n * S:
//     T = (n-1) alpha_up + (n-1)/n * S / B_up.
// Across g domains of n_l: reduce-scatter inside ((n_l-1)/n_l * S over NVLink, n_l-1 steps),
// then reduce-scatter of the S/n_l slice among the g GPUs holding it, one per domain, on their
// NICs ((g-1)/g * S/n_l, g-1 steps). Both phases together send
// S[(n_l-1)/n_l + (g-1)/(g n_l)] = (n-1)/n * S per GPU, the same as the flat ring, but only the
// 1/n_l part crosses the NIC. For all-gather the order of the phases flips; the sum is equal.
CollectiveCost reduceScatter(const GroupShape& shape, double bytes, const LinkParams& up,
                             const LinkParams& out) {
    CollectiveCost c;
    const Shape s = normalize(shape);
    if (s.n <= 1 || !(bytes > 0))
        return c;
    if (!s.crossesDomains()) {
        const double n = s.n;
        c.scale_up_bytes_per_gpu = (n - 1) / n * bytes;
        c.time_s = (n - 1) * alpha_s(up) + transfer_s(c.scale_up_bytes_per_gpu, up.bandwidth_gbps);
        return c;
    }
    const double nl = s.n_l;
    const double g = s.domains;
    c.scale_up_bytes_per_gpu = (nl - 1) / nl * bytes;
    c.scale_out_bytes_per_gpu = (g - 1) / g * (bytes / nl);
    c.time_s = (nl - 1) * alpha_s(up) + transfer_s(c.scale_up_bytes_per_gpu, up.bandwidth_gbps) +
               (g - 1) * alpha_s(out) + transfer_s(c.scale_out_bytes_per_gpu, out.bandwidth_gbps);
    return c;
}

// All-to-all (MoE dispatch / combine).
//
// Each GPU sends S bytes in total, S/n to every member including itself (uniform routing on
// average). Of its n-1 peers, n_l-1 share its domain and n-n_l do not, so it sends
//     up_bytes  = S (n_l-1)/n   over NVLink,
//     out_bytes = S (n-n_l)/n   through its NIC (or the override: with node-limited routing the
//                               caller passes h*dtype x expected remote nodes x tokens).
// NVLink and the NIC are separate engines, so the two shares move concurrently and the slower
// one sets the time. Routing skew makes some GPU receive f = max/mean times the average; every
// byte must arrive, so the busiest receiver's links set the pace: the bandwidth terms scale by f.
// Latency: NCCL (grouped send/recv) and DeepEP post the sends to all peers at once rather than
// in n-1 sequential steps, so one step is charged per link class in use:
//     T = max(f up_bytes / B_up, f out_bytes / B_out) + alpha_up [if n_l > 1] + alpha_out [if
//         n > n_l].
// Single domain, f = 1: T = (n-1)/n S / B_up + alpha, matching nccl-tests' all-to-all busBW =
// algBW (n-1)/n. With node-limited routing (DeepEP internode) the caller passes both shares:
// one copy per target node through the NIC, and the NVLink forwarding inside each target node
// (allToAllBytes); the two legs are pipelined in chunks, so again the slower one sets the time.
// Reported bytes are the mean per GPU (not times f), so that summed over a group they are the
// bytes actually moved.
CollectiveCost allToAll(const GroupShape& shape, double bytes_sent, double max_recv_factor,
                        const LinkParams& up, const LinkParams& out,
                        double cross_domain_bytes_override, double scale_up_bytes_override) {
    CollectiveCost c;
    const Shape s = normalize(shape);
    if (s.n <= 1 || !(bytes_sent > 0))
        return c;
    const double f = max_recv_factor >= 1 ? max_recv_factor : 1.0; // also maps NaN to 1
    const double n = s.n;
    const double nl = s.n_l;
    const bool remote = s.crossesDomains();
    c.scale_up_bytes_per_gpu = remote && scale_up_bytes_override >= 0 ? scale_up_bytes_override
                                                                      : bytes_sent * (nl - 1) / n;
    if (remote)
        c.scale_out_bytes_per_gpu = cross_domain_bytes_override >= 0 ? cross_domain_bytes_override
                                                                     : bytes_sent * (n - nl) / n;
    const double up_s = transfer_s(f * c.scale_up_bytes_per_gpu, up.bandwidth_gbps);
    const double out_s = transfer_s(f * c.scale_out_bytes_per_gpu, out.bandwidth_gbps);
    c.time_s =
        std::max(up_s, out_s) + (s.n_l > 1 ? alpha_s(up) : 0.0) + (remote ? alpha_s(out) : 0.0);
    return c;
}

// Expected distinct remote nodes per token.
//
// Experts are spread evenly over N nodes and a token's k picks are taken as independent and
// uniform over nodes (with replacement; real picks are distinct experts, which spreads them
// slightly more, so this errs a little low for k close to the experts per node). A given node
// receives none of the k picks with probability (1-1/N)^k, so the expected number of distinct
// nodes hit is N(1-(1-1/N)^k); excluding the token's own node (hit with the same probability),
// the expected distinct remote nodes are
//     R = (N-1) (1-(1-1/N)^k).
// Node-limited routing (DeepSeek-V3, M = 4) first chooses at most M target nodes, which may
// include the token's own node, then picks the k experts among them. The router chooses those
// nodes because they hold the highest-scoring experts, so each chosen node is taken as hit; by
// symmetry the own node is among the M chosen with probability M/N, leaving M(N-1)/N remote:
//     R_M = min(R, M (N-1)/N).
// The min keeps R for small k, where a token reaches fewer than M nodes anyway. For M >= N the
// cap is >= N-1 >= R and does nothing, as it should.
double expectedRemoteNodesPerToken(int nodes, int top_k, int max_nodes) {
    if (nodes <= 1 || top_k <= 0)
        return 0;
    const double N = nodes;
    const double r = expectedDistinctTargets(N, top_k) * (N - 1) / N;
    if (max_nodes <= 0)
        return r;
    return std::min(r, max_nodes * (N - 1) / N);
}

// k independent uniform picks over T targets miss a given target with probability (1-1/T)^k, so
// they reach T (1 - (1-1/T)^k) distinct targets on average (k = 8 over T = 8: 5.25).
double expectedDistinctTargets(double targets, int top_k) {
    if (!(targets > 0) || top_k <= 0)
        return 0;
    return targets * (1 - std::pow(1 - 1 / targets, top_k));
}

// One message: T = alpha + bytes / B. No bytes, no message.
double sendRecvTime_s(double bytes, const LinkParams& link) {
    if (!(bytes > 0))
        return 0;
    return alpha_s(link) + transfer_s(bytes, link.bandwidth_gbps);
}

// Link loads.
//
// link_bytes[l] counts the bytes link l carries in its busier direction. Each member sends
// `scale_up_bytes_per_gpu` up its own NVSwitch link and `scale_out_bytes_per_gpu` through its
// GPU-NIC and NIC-leaf links. In these symmetric collectives a GPU receives as much as it sends,
// so the bytes sent on a GPU's own link equal the bytes arriving on it: charging the sender's
// direction only loads each link with its true per-direction traffic, without counting any byte
// twice (a link's bandwidth is per direction).
//
// Leaf uplinks: a member's NIC bytes go to its peers in other domains, spread evenly over them
// (exact for all-to-all). The share whose peer NIC hangs under another leaf climbs to the spine
// layer; it is spread evenly over the sender's leaf uplinks (ECMP / adaptive routing). Traffic is
// symmetric, so what a leaf sends up equals what comes down to it from the other leaves, and the
// uplinks again carry it once per direction.
// Limitation: the peers are all remote members. For hierarchical all-reduce and reduce-scatter
// the NIC phase only pairs GPUs with the same position in their domain, which in a
// rail-optimized fabric share a rail leaf; for groups with several members per domain this
// overstates their spine load (as does NCCL's PXN for all-to-all, which HardwareGraph::route
// does not model either).
void addLinkBytes(const HardwareGraph& graph, const std::vector<int>& group_gpus,
                  double scale_up_bytes_per_gpu, double scale_out_bytes_per_gpu,
                  std::vector<double>& link_bytes) {
    if (link_bytes.size() < graph.links.size())
        link_bytes.resize(graph.links.size(), 0.0);
    const int link_count = static_cast<int>(link_bytes.size());
    auto add = [&](int link, double bytes) {
        if (link >= 0 && link < link_count)
            link_bytes[static_cast<size_t>(link)] += bytes;
    };
    const int gpus = graph.gpuCount();
    // The NIC index a GPU sends through, and that NIC's leaf (-1 without a fabric).
    auto nicOf = [&](int gpu) { return graph.vertices[graph.gpu_nic_vertex[gpu]].index; };
    auto leafOf = [&](int gpu) {
        const int nic = nicOf(gpu);
        return nic >= 0 && nic < static_cast<int>(graph.nic_leaf.size()) ? graph.nic_leaf[nic] : -1;
    };

    const bool up = scale_up_bytes_per_gpu > 0;
    const bool out = scale_out_bytes_per_gpu > 0;
    if (!up && !out)
        return;

    // Members per domain, per leaf and per (domain, leaf), so each member's remote peers and the
    // share of them under another leaf come from counts, not a pass over all pairs (DP groups
    // of a 100K-GPU cluster have thousands of members). Members sorted by domain make a domain's
    // members one run; the counts live in flat per-leaf arrays reused across calls (index
    // leaf + 1, so "no leaf" is slot 0) and are cleared after use.
    struct Member {
        int gpu, domain, leaf;
    };
    thread_local std::vector<Member> members;
    thread_local std::vector<int> per_leaf, per_leaf_in_domain;
    members.clear();
    for (int gpu : group_gpus)
        if (gpu >= 0 && gpu < gpus)
            members.push_back({gpu, graph.domainOf(gpu), out ? leafOf(gpu) : -1});
    const auto by_domain = [](const Member& a, const Member& b) { return a.domain < b.domain; };
    if (!std::is_sorted(members.begin(), members.end(), by_domain))
        std::stable_sort(members.begin(), members.end(), by_domain);
    const size_t leaf_slots = static_cast<size_t>(std::max(0, graph.leaves)) + 1;
    if (per_leaf.size() < leaf_slots) {
        per_leaf.assign(leaf_slots, 0);
        per_leaf_in_domain.assign(leaf_slots, 0);
    }
    auto slot = [&](int leaf) {
        return leaf >= 0 && static_cast<size_t>(leaf) + 1 < leaf_slots
                   ? static_cast<size_t>(leaf) + 1
                   : 0;
    };
    if (out)
        for (const Member& m : members)
            ++per_leaf[slot(m.leaf)];
    const int member_count = static_cast<int>(members.size());

    for (size_t run = 0; run < members.size();) {
        size_t run_end = run;
        while (run_end < members.size() && members[run_end].domain == members[run].domain)
            ++run_end;
        if (out)
            for (size_t i = run; i < run_end; ++i)
                ++per_leaf_in_domain[slot(members[i].leaf)];
        const int in_domain = static_cast<int>(run_end - run);
        for (size_t i = run; i < run_end; ++i) {
            const Member& m = members[i];
            if (up)
                add(graph.gpu_scale_up_link[m.gpu], scale_up_bytes_per_gpu);
            if (!out)
                continue;
            add(graph.gpu_nic_link[m.gpu], scale_out_bytes_per_gpu);
            const int nic = nicOf(m.gpu);
            if (nic < 0 || nic >= static_cast<int>(graph.nic_leaf_link.size()))
                continue;
            add(graph.nic_leaf_link[nic], scale_out_bytes_per_gpu);
            if (m.leaf < 0 || m.leaf >= static_cast<int>(graph.leaf_spine_links_count.size()))
                continue;
            const int uplinks = graph.leaf_spine_links_count[m.leaf];
            if (uplinks <= 0)
                continue;
            // Remote peers = members outside my domain; of those, the ones under my leaf are
            // the leaf's members minus the ones in my domain.
            const int remote = member_count - in_domain;
            const int same_leaf_remote = per_leaf[slot(m.leaf)] - per_leaf_in_domain[slot(m.leaf)];
            const int other_leaf = remote - same_leaf_remote;
            if (remote <= 0 || other_leaf <= 0)
                continue;
            const double per_uplink =
                scale_out_bytes_per_gpu * other_leaf / remote / static_cast<double>(uplinks);
            const int begin = graph.leaf_spine_links_begin[m.leaf];
            for (int j = 0; j < uplinks; ++j)
                add(begin + j, per_uplink);
        }
        if (out)
            for (size_t i = run; i < run_end; ++i)
                per_leaf_in_domain[slot(members[i].leaf)] = 0;
        run = run_end;
    }
    if (out)
        for (const Member& m : members)
            per_leaf[slot(m.leaf)] = 0;
}

void addLinkBytes(const HardwareGraph& graph, const ParallelGroup& group,
                  double scale_up_bytes_per_gpu, double scale_out_bytes_per_gpu,
                  std::vector<double>& link_bytes) {
    addLinkBytes(graph, group.gpus, scale_up_bytes_per_gpu, scale_out_bytes_per_gpu, link_bytes);
}

} // namespace moe
