#pragma once
// The cluster map: every GPU one quad, racks side by side, nodes stacked in a rack, a node's
// GPUs in rows of up to 8. Drawn with one instanced draw call from one instance buffer
// (position + colour per GPU), so 65,536 GPUs cost one buffer upload and one draw.

#include "moe/load_scale.h"

#include <array>
#include <cstdint>
#include <vector>

namespace moe::live {

/// Where every GPU sits, in world units (one GPU cell = 1 x 1). Pure arithmetic, no GL.
/// Racks are drawn at their capacity, so a partly filled rack shows its free slots as space.
struct MapLayout {
    int gpus = 0, gpus_per_node = 1;
    int nodes_per_rack = 1; ///< a rack's capacity; racks may hold fewer (cluster.rack_nodes)
    int node_cols = 1, node_rows = 1; ///< GPU cells per node row / rows per node
    int racks = 0, racks_per_row = 1;
    std::vector<int> rack_nodes;            ///< nodes in each rack (ClusterSpec::nodesInRacks)
    std::vector<int> rack_first_node;       ///< racks + 1 entries; rack r: [first[r], first[r+1])
    std::vector<int> node_rack;             ///< the rack of every node
    std::vector<int> partial_racks;         ///< racks holding fewer nodes than their capacity
    static constexpr float kNodeGap = 0.5f; ///< between nodes of a rack
    static constexpr float kRackGap = 1.5f; ///< between racks
    float rack_w = 1, rack_h = 1;
    float width = 1, height = 1; ///< whole map

    /// Lays out `gpus` GPUs in racks of `rack_nodes` nodes each (consecutive nodes, every
    /// count clamped to 1..nodes_per_rack; nodes beyond them fill further racks of
    /// nodes_per_rack) so that the map's aspect ratio is close to `aspect` (width/height).
    static MapLayout make(int gpus, int gpus_per_node, const std::vector<int>& rack_nodes,
                          int nodes_per_rack, float aspect);
    /// Top-left corner of GPU `gpu`'s cell.
    std::array<float, 2> cellOrigin(int gpu) const;
    /// Top-left corner of rack `rack`'s frame (rack_w x rack_h, its full capacity).
    std::array<float, 2> rackOrigin(int rack) const;
    /// The GPU whose cell contains world point (x, y), or -1 (gaps, free slots and outside).
    int gpuAt(float x, float y) const;
};

/// Pan/zoom: screen = (world - origin) * scale + view origin.
struct MapCamera {
    float scale = 1;                  ///< pixels per world unit
    float origin_x = 0, origin_y = 0; ///< world point at the view's top-left
    void fit(const MapLayout& layout, float view_w, float view_h);
    void zoomAt(float factor, float view_x, float view_y); ///< keeps the point under the cursor
};

/// Colour ramp shared with the Qt app's heatmap (viridis-like, 5 stops), t in [0, 1].
uint32_t rampRgba(float t);
/// An 8-bit colour as the instance buffer's RGBA8 (0xAABBGGRR, ImU32's byte order).
uint32_t packRgba(Rgb8 c);

class ClusterMap {
public:
    ClusterMap() = default;
    ClusterMap(const ClusterMap&) = delete;
    ClusterMap& operator=(const ClusterMap&) = delete;
    ~ClusterMap();

    /// Compiles the shader and creates the buffers; needs a current GL 3.3 context. Returns
    /// an empty string or the reason it failed.
    const char* init();
    /// Rebuilds the instance positions for a new layout.
    void setLayout(const MapLayout& layout);
    /// Packs one colour per GPU (value -> ramp over [lo, hi]) into the instance buffer on the
    /// CPU (the part the benchmark calls draw-list build); uploaded by draw().
    void setValues(const std::vector<float>& values, float lo, float hi);
    /// The same for load ratios (× layer mean) on the shared expert-load scale (load_scale.h),
    /// the colours of the Qt app's heatmap and topology; 0 (a stage without MoE layers) grey.
    void setLoadRatios(const std::vector<float>& ratios, const LoadRatioScale& scale);
    /// Draws the map into the framebuffer rectangle (pixels, origin top-left) of a framebuffer
    /// of height fb_h; one glDrawArraysInstanced.
    void draw(const MapCamera& camera, int view_x, int view_y, int view_w, int view_h, int fb_w,
              int fb_h);
    int instances() const { return static_cast<int>(colors_.size()); }

private:
    unsigned program_ = 0, vao_ = 0, quad_vbo_ = 0, pos_vbo_ = 0, color_vbo_ = 0;
    int loc_scale_ = -1, loc_offset_ = -1;
    std::vector<float> positions_; ///< x, y per GPU
    std::vector<uint32_t> colors_; ///< RGBA8 per GPU
    bool positions_dirty_ = true, colors_dirty_ = true;
};

} // namespace moe::live
