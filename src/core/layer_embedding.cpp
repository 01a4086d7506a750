// Embedding (Keras' Embedding, bound to a categorical column of the packed row; config.h): the
// column's block of the layer's input is replaced by a row of the table, appended after the other
// inputs, which move unchanged. A code block (one slot) picks row `code`; a one-hot block
// (vocabulary slots) is multiplied by the table, which for a one-hot row is the same lookup by
// its hot slot, and for a row of zeros a vector of zeros. So the layer works whichever encoding
// preprocess chose for the column. The table is `vocabulary` rows of `units` floats, row after
// row (Keras' embeddings (input_dim, output_dim) in C order).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "hopper/error.h"
#include "hopper/rng.h"
#include "layers.h"

namespace hopper::layers {

namespace {

using Index = Eigen::Index;

// The code of a row's code slot, refused unless it is a whole number below the vocabulary.
int code_of(const Layer& l, float v) {
    if (!(v >= 0.0f && v < float(l.vocabulary) && v == std::floor(v))) {
        char shown[32];
        std::snprintf(shown, sizeof shown, "%g", double(v));
        fail(ErrorKind::InvalidParameter,
             "value " + std::string(shown) + " is not a code of column \"" + l.column + "\"",
             "Its embedding layer has " + std::to_string(l.vocabulary) + " rows: codes 0 to " +
                 std::to_string(l.vocabulary - 1) + ".",
             "Give the model rows packed by the table's feature recipe.");
    }
    return int(v);
}

class EmbeddingType : public LayerType {
public:
    EmbeddingType() : LayerType(LayerKind::Embedding) {}
    TensorShape output_shape(const Layer& l, const TensorShape& in) const override {
        TensorShape out;
        const int64_t n = int64_t(in.size()) - l.column_width + l.units;
        out.channels = int(std::clamp<int64_t>(n, 0, std::numeric_limits<int>::max()));
        return out;
    }
    void check_input(const Layer& l, const TensorShape& in, const std::string& label) const override {
        if (!in.flat)
            fail(ErrorKind::InvalidParameter, "embedding layer applied to a non-flat tensor (" + label + ")",
                 "Its input has shape " + in.to_string() + "; an embedding reads a column of flat rows.",
                 "Use embeddings on tables packed from their columns.");
        if (l.column_offset < 0 || uint64_t(l.column_offset) + uint64_t(l.column_width) > in.size())
            fail(ErrorKind::InvalidParameter,
                 "embedding of column \"" + l.column + "\" reads beyond its input (" + label + ")",
                 "Its column's slots " + std::to_string(l.column_offset) + " to " +
                     std::to_string(int64_t(l.column_offset) + l.column_width - 1) + " are not among the " +
                     std::to_string(in.size()) + " features of its input.");
    }
    uint64_t param_count(const Layer& l, const TensorShape&) const override {
        return mul_sat(uint64_t(std::max(l.vocabulary, 0)), uint64_t(std::max(l.units, 0)));
    }
    LayerSlice slice(const Layer& l, const TensorShape&, std::size_t offset) const override {
        LayerSlice s;
        s.weight_offset = offset;
        s.inputs = l.vocabulary;
        s.units = l.units;
        s.bias_offset = s.stats_offset = s.end_offset = offset + std::size_t(l.vocabulary) * std::size_t(l.units);
        return s;
    }
    std::string shape_token(const Layer& l) const override {
        return "emb(" + l.column + ")" + (l.vocabulary > 0 ? std::to_string(l.vocabulary) + "x" : "") +
               std::to_string(l.units);
    }
    // Keras' default embeddings_initializer: uniform in [-0.05, 0.05].
    void initialize(const LayerArgs& a, float* params, uint64_t seed) const override {
        Rng rng(seed);
        float* t = params + a.slice.weight_offset;
        const std::size_t count = std::size_t(a.layer.vocabulary) * std::size_t(a.layer.units);
        for (std::size_t i = 0; i < count; ++i) t[i] = float((2.0 * rng.uniform() - 1.0) * 0.05);
        // The last code of a recipe column is "<unknown>" (recipe.h), which no training row has: its
        // row would stay random and score unseen values arbitrarily. Zeros, as a one-hot "<unknown>"
        // sets no slot. Drawn first, so the other rows are what they always were.
        if (a.layer.vocabulary > 0) std::fill(t + count - std::size_t(a.layer.units), t + count, 0.0f);
    }
    void forward(const LayerArgs& a, const float* params, const float* x, float* z, Index n, bool,
                 LayerScratch&) const override {
        const Layer& l = a.layer;
        const Index in = Index(a.in.size()), out = Index(a.out.size()), off = l.column_offset, w = l.column_width;
        const Index d = l.units, rest = in - w;
        const float* table = params + a.slice.weight_offset;
        for (Index j = 0; j < n; ++j) {
            const float* src = x + j * in;
            float* dst = z + j * out;
            std::copy(src, src + off, dst);
            std::copy(src + off + w, src + in, dst + off);
            float* vec = dst + rest;
            if (w == 1) {
                const float* row = table + std::size_t(code_of(l, src[off])) * std::size_t(d);
                std::copy(row, row + d, vec);
            } else {
                std::fill(vec, vec + d, 0.0f);
                for (Index k = 0; k < w; ++k)
                    if (const float v = src[off + k]; v != 0.0f)
                        for (Index i = 0; i < d; ++i) vec[i] += v * table[k * d + i];
            }
        }
    }
    void backward(const LayerArgs& a, const float*, const float* x, const float* dz, float* grad, float* dx, Index n,
                  LayerScratch&) const override {
        const Layer& l = a.layer;
        const Index in = Index(a.in.size()), out = Index(a.out.size()), off = l.column_offset, w = l.column_width;
        const Index d = l.units, rest = in - w;
        float* g = grad + a.slice.weight_offset;
        std::fill(g, g + std::size_t(l.vocabulary) * std::size_t(d), 0.0f);
        for (Index j = 0; j < n; ++j) {
            const float* src = x + j * in;
            const float* dvec = dz + j * out + rest;
            if (w == 1) {
                float* row = g + std::size_t(code_of(l, src[off])) * std::size_t(d);
                for (Index i = 0; i < d; ++i) row[i] += dvec[i];
            } else {
                for (Index k = 0; k < w; ++k)
                    if (const float v = src[off + k]; v != 0.0f)
                        for (Index i = 0; i < d; ++i) g[k * d + i] += v * dvec[i];
            }
            if (dx) {
                // The column's slots are data (codes or one-hot): no gradient flows into them.
                float* dst = dx + j * in;
                const float* dsrc = dz + j * out;
                std::copy(dsrc, dsrc + off, dst);
                std::fill(dst + off, dst + off + w, 0.0f);
                std::copy(dsrc + off, dsrc + rest, dst + off + w);
            }
        }
    }
};

}  // namespace

const LayerType& embedding_layer() {
    static const EmbeddingType t;
    return t;
}

}  // namespace hopper::layers
