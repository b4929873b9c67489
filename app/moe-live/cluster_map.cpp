// The cluster map's layout arithmetic and its instanced OpenGL renderer.
#include "cluster_map.h"

// libGL (glvnd) exports every core entry point, so prototypes suffice: no loader needed.
#define GL_GLEXT_PROTOTYPES 1
#include <GL/gl.h>
#include <GL/glext.h>

#include <algorithm>
#include <cmath>

namespace moe::live {

MapLayout MapLayout::make(int gpus, int gpus_per_node, const std::vector<int>& rack_nodes,
                          int nodes_per_rack, float aspect) {
    MapLayout l;
    l.gpus = std::max(0, gpus);
    l.gpus_per_node = std::max(1, gpus_per_node);
    l.nodes_per_rack = std::max(1, nodes_per_rack);
    // A node is a row of up to 8 GPU cells (8-GPU HGX boards read as one row; 72 as 9 rows).
    l.node_cols = std::min(l.gpus_per_node, 8);
    l.node_rows = (l.gpus_per_node + l.node_cols - 1) / l.node_cols;
    const int nodes = (l.gpus + l.gpus_per_node - 1) / l.gpus_per_node;
    // Every node in exactly one rack, even when the counts do not match the GPU count: an
    // out-of-range cell index would draw garbage.
    l.rack_first_node.push_back(0);
    for (size_t r = 0; l.rack_first_node.back() < nodes; ++r) {
        const int listed = r < rack_nodes.size() ? rack_nodes[r] : l.nodes_per_rack;
        const int in_rack =
            std::min(std::clamp(listed, 1, l.nodes_per_rack), nodes - l.rack_first_node.back());
        l.rack_nodes.push_back(in_rack);
        l.rack_first_node.push_back(l.rack_first_node.back() + in_rack);
        if (in_rack < l.nodes_per_rack)
            l.partial_racks.push_back(static_cast<int>(r));
        l.node_rack.insert(l.node_rack.end(), static_cast<size_t>(in_rack), static_cast<int>(r));
    }
    l.racks = std::max(1, static_cast<int>(l.rack_nodes.size()));
    l.rack_w = static_cast<float>(l.node_cols);
    l.rack_h = static_cast<float>(l.nodes_per_rack * l.node_rows) +
               static_cast<float>(l.nodes_per_rack - 1) * kNodeGap;
    // Racks per row: the count whose map aspect is closest to the view's (log distance).
    const float want = aspect > 0 ? aspect : 1.0f;
    float best = 1e30f;
    for (int per_row = 1; per_row <= l.racks; ++per_row) {
        const int rows = (l.racks + per_row - 1) / per_row;
        const float w = per_row * l.rack_w + (per_row - 1) * kRackGap;
        const float h = rows * l.rack_h + (rows - 1) * kRackGap;
        const float d = std::abs(std::log(w / h / want));
        if (d < best) {
            best = d;
            l.racks_per_row = per_row;
        }
    }
    const int rows = (l.racks + l.racks_per_row - 1) / l.racks_per_row;
    l.width = l.racks_per_row * l.rack_w + (l.racks_per_row - 1) * kRackGap;
    l.height = rows * l.rack_h + (rows - 1) * kRackGap;
    return l;
}

std::array<float, 2> MapLayout::rackOrigin(int rack) const {
    const int rx = rack % racks_per_row, ry = rack / racks_per_row;
    return {rx * (rack_w + kRackGap), ry * (rack_h + kRackGap)};
}

std::array<float, 2> MapLayout::cellOrigin(int gpu) const {
    const int node = gpu / gpus_per_node, local = gpu % gpus_per_node;
    const int rack = node_rack[static_cast<size_t>(node)];
    const int slot = node - rack_first_node[static_cast<size_t>(rack)];
    const auto [rack_x, rack_y] = rackOrigin(rack);
    const float x = rack_x + static_cast<float>(local % node_cols);
    const float y = rack_y + slot * (node_rows + kNodeGap) + static_cast<float>(local / node_cols);
    return {x, y};
}

int MapLayout::gpuAt(float x, float y) const {
    if (x < 0 || y < 0 || x >= width || y >= height)
        return -1;
    const int rx = static_cast<int>(x / (rack_w + kRackGap));
    const int ry = static_cast<int>(y / (rack_h + kRackGap));
    const float in_x = x - rx * (rack_w + kRackGap);
    const float in_y = y - ry * (rack_h + kRackGap);
    if (in_x >= rack_w || in_y >= rack_h)
        return -1;
    const float node_pitch = node_rows + kNodeGap;
    const int slot = static_cast<int>(in_y / node_pitch);
    const float in_node_y = in_y - slot * node_pitch;
    if (in_node_y >= node_rows)
        return -1;
    const int local = static_cast<int>(in_node_y) * node_cols + static_cast<int>(in_x);
    if (local >= gpus_per_node)
        return -1;
    const int rack = ry * racks_per_row + rx;
    if (rack >= static_cast<int>(rack_nodes.size()) ||
        slot >= rack_nodes[static_cast<size_t>(rack)])
        return -1; // past the last rack, or a free slot of a partly filled rack
    const int gpu = (rack_first_node[static_cast<size_t>(rack)] + slot) * gpus_per_node + local;
    return gpu < gpus ? gpu : -1;
}

void MapCamera::fit(const MapLayout& layout, float view_w, float view_h) {
    const float margin = 0.98f;
    scale = std::min(view_w / layout.width, view_h / layout.height) * margin;
    // Centre the map in the view.
    origin_x = layout.width / 2 - view_w / 2 / scale;
    origin_y = layout.height / 2 - view_h / 2 / scale;
}

void MapCamera::zoomAt(float factor, float view_x, float view_y) {
    const float wx = origin_x + view_x / scale, wy = origin_y + view_y / scale;
    scale = std::clamp(scale * factor, 0.05f, 2000.0f);
    origin_x = wx - view_x / scale;
    origin_y = wy - view_y / scale;
}

uint32_t rampRgba(float t) {
    // The Qt app's utilization ramp (widgets/src/common/palette.cpp), dark purple -> yellow.
    static constexpr uint32_t kRamp[5] = {0x440154, 0x3B528B, 0x21918C, 0x5EC962, 0xFDE725};
    const float u = std::isfinite(t) ? std::clamp(t, 0.0f, 1.0f) : 1.0f;
    const float pos = u * 4.0f;
    const int lo = std::min(3, static_cast<int>(pos));
    const float f = pos - static_cast<float>(lo);
    uint32_t out = 0xff000000u; // RGBA8 little-endian: A in the top byte
    for (int c = 0; c < 3; ++c) {
        const int shift = 16 - 8 * c; // R, G, B in 0xRRGGBB
        const float a = static_cast<float>((kRamp[lo] >> shift) & 0xff);
        const float b = static_cast<float>((kRamp[lo + 1] >> shift) & 0xff);
        out |= static_cast<uint32_t>(std::lround(a + (b - a) * f)) << (8 * c);
    }
    return out;
}

namespace {

// The cell is inset by kInset on each side, so neighbouring cells are separated by a gap of
// 2 * kInset cell widths: >= 1 pixel once a cell is 4 pixels wide.
const char* kVertexShader = R"(#version 330 core
layout(location = 0) in vec2 corner;
layout(location = 1) in vec2 cell;
layout(location = 2) in vec4 color;
uniform vec2 scale;
uniform vec2 offset;
out vec4 v_color;
const float kInset = 0.125;
void main() {
    vec2 world = cell + vec2(kInset) + corner * (1.0 - 2.0 * kInset);
    gl_Position = vec4(world * scale + offset, 0.0, 1.0);
    v_color = color;
}
)";

const char* kFragmentShader = R"(#version 330 core
in vec4 v_color;
out vec4 frag;
void main() { frag = v_color; }
)";

GLuint compile(GLenum kind, const char* source) {
    const GLuint shader = glCreateShader(kind);
    glShaderSource(shader, 1, &source, nullptr);
    glCompileShader(shader);
    GLint ok = 0;
    glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        glDeleteShader(shader);
        return 0;
    }
    return shader;
}

} // namespace

ClusterMap::~ClusterMap() {
    if (program_)
        glDeleteProgram(program_);
    const GLuint buffers[3] = {quad_vbo_, pos_vbo_, color_vbo_};
    if (quad_vbo_)
        glDeleteBuffers(3, buffers);
    if (vao_)
        glDeleteVertexArrays(1, &vao_);
}

const char* ClusterMap::init() {
    const GLuint vs = compile(GL_VERTEX_SHADER, kVertexShader);
    const GLuint fs = compile(GL_FRAGMENT_SHADER, kFragmentShader);
    if (!vs || !fs)
        return "cluster map shader did not compile (needs GLSL 3.30)";
    program_ = glCreateProgram();
    glAttachShader(program_, vs);
    glAttachShader(program_, fs);
    glLinkProgram(program_);
    glDeleteShader(vs);
    glDeleteShader(fs);
    GLint ok = 0;
    glGetProgramiv(program_, GL_LINK_STATUS, &ok);
    if (!ok)
        return "cluster map shader did not link";
    loc_scale_ = glGetUniformLocation(program_, "scale");
    loc_offset_ = glGetUniformLocation(program_, "offset");

    glGenVertexArrays(1, &vao_);
    glBindVertexArray(vao_);
    GLuint buffers[3];
    glGenBuffers(3, buffers);
    quad_vbo_ = buffers[0];
    pos_vbo_ = buffers[1];
    color_vbo_ = buffers[2];
    // Two triangles of the unit quad, shared by every instance.
    const float quad[12] = {0, 0, 1, 0, 1, 1, 0, 0, 1, 1, 0, 1};
    glBindBuffer(GL_ARRAY_BUFFER, quad_vbo_);
    glBufferData(GL_ARRAY_BUFFER, sizeof(quad), quad, GL_STATIC_DRAW);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 0, nullptr);
    glBindBuffer(GL_ARRAY_BUFFER, pos_vbo_);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 2, GL_FLOAT, GL_FALSE, 0, nullptr);
    glVertexAttribDivisor(1, 1);
    glBindBuffer(GL_ARRAY_BUFFER, color_vbo_);
    glEnableVertexAttribArray(2);
    glVertexAttribPointer(2, 4, GL_UNSIGNED_BYTE, GL_TRUE, 0, nullptr);
    glVertexAttribDivisor(2, 1);
    glBindVertexArray(0);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    return "";
}

void ClusterMap::setLayout(const MapLayout& layout) {
    positions_.resize(static_cast<size_t>(layout.gpus) * 2);
    for (int gpu = 0; gpu < layout.gpus; ++gpu) {
        const auto [x, y] = layout.cellOrigin(gpu);
        positions_[static_cast<size_t>(gpu) * 2] = x;
        positions_[static_cast<size_t>(gpu) * 2 + 1] = y;
    }
    colors_.assign(static_cast<size_t>(layout.gpus), rampRgba(0));
    positions_dirty_ = colors_dirty_ = true;
}

void ClusterMap::setValues(const std::vector<float>& values, float lo, float hi) {
    const size_t n = std::min(values.size(), colors_.size());
    const float inv = hi > lo ? 1.0f / (hi - lo) : 0.0f;
    for (size_t i = 0; i < n; ++i)
        colors_[i] = rampRgba((values[i] - lo) * inv);
    colors_dirty_ = true;
}

uint32_t packRgba(Rgb8 c) {
    return 0xff000000u | static_cast<uint32_t>(c.b) << 16 | static_cast<uint32_t>(c.g) << 8 | c.r;
}

void ClusterMap::setLoadRatios(const std::vector<float>& ratios, const LoadRatioScale& scale) {
    const size_t n = std::min(ratios.size(), colors_.size());
    // A ratio of 0: the GPU's stage holds no MoE layer (no load to show), drawn dark grey.
    for (size_t i = 0; i < n; ++i)
        colors_[i] = ratios[i] > 0 ? packRgba(scale.color(ratios[i])) : packRgba({72, 72, 78});
    colors_dirty_ = true;
}

void ClusterMap::draw(const MapCamera& camera, int view_x, int view_y, int view_w, int view_h,
                      int fb_w, int fb_h) {
    (void)fb_w;
    if (!program_ || colors_.empty() || view_w <= 0 || view_h <= 0)
        return;
    glBindVertexArray(vao_);
    if (positions_dirty_) {
        glBindBuffer(GL_ARRAY_BUFFER, pos_vbo_);
        glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(positions_.size() * sizeof(float)),
                     positions_.data(), GL_STATIC_DRAW);
        positions_dirty_ = false;
    }
    if (colors_dirty_) {
        glBindBuffer(GL_ARRAY_BUFFER, color_vbo_);
        glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(colors_.size() * sizeof(uint32_t)),
                     colors_.data(), GL_STREAM_DRAW);
        colors_dirty_ = false;
    }
    // GL's viewport counts from the bottom-left; the view rectangle from the top-left.
    const int gl_y = fb_h - view_y - view_h;
    glViewport(view_x, gl_y, view_w, view_h);
    glEnable(GL_SCISSOR_TEST);
    glScissor(view_x, gl_y, view_w, view_h);
    glDisable(GL_BLEND);
    glUseProgram(program_);
    // world -> NDC: x_ndc = ((x - origin) * scale) / w * 2 - 1, y flipped.
    const float sx = 2.0f * camera.scale / static_cast<float>(view_w);
    const float sy = -2.0f * camera.scale / static_cast<float>(view_h);
    glUniform2f(loc_scale_, sx, sy);
    glUniform2f(loc_offset_, -camera.origin_x * sx - 1.0f, -camera.origin_y * sy + 1.0f);
    glDrawArraysInstanced(GL_TRIANGLES, 0, 6, static_cast<GLsizei>(colors_.size()));
    glUseProgram(0);
    glBindVertexArray(0);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    glDisable(GL_SCISSOR_TEST);
}

} // namespace moe::live
