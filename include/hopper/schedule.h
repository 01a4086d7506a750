// The model-hopper schedule (Cerebro's model hopper parallelism).
//
// M models and S segments sit on a ring of K = max(M, S) positions. Model m starts at position m;
// positions 0..S-1 are the segments, positions S..K-1 (only when M > S) are places where a model
// waits for a hop. Every hop moves every model one position on: the schedule is a fixed rotation,
// built once. An iteration is K hops, so each model visits every position -- every segment --
// exactly once per iteration, and no two models share a position, so no model is on two segments
// and no segment trains two models in one hop. K hops is also the minimum: each hop trains at most
// min(M, S) (model, segment) pairs and an iteration needs M*S of them.
//
// Between iterations there is no hop: the next iteration starts where the last one ended (the
// output of the last hop becomes the next input unchanged), so iteration i starts at position
// m + i*(K-1).
//
// Phased rings (for_phases) serve models that each follow a schedule of their own (adaptive
// search, hopper/adaptive_search.h): every model starts its iteration at a given segment, its
// phase, and visits the segments in order from there. A model's training then depends only on its
// state and its phases, never on which other models share the ring, so a survivor continued in a
// smaller ring, a trial packed with another bracket's, and a trial resumed after a crash all train
// bit for bit as they would have alone. phase() gives the phases fit_multiple uses for up to S
// models. The ring is built per iteration: for each segment s in turn, c_s - 1 waiting positions
// (c_s = models of phase s) and then s itself, so a model of phase s waits for its turn and enters
// at s. K = sum over s of max(c_s, 1) hops: M when every phase has a model (every segment busy in
// every hop, as in the fixed rotation with M >= S), at most M + S - 1.
#pragma once

#include <cstdint>
#include <vector>

namespace hopper {

class HopSchedule {
public:
    HopSchedule(int num_models, int num_segments);
    // A ring for one iteration of models starting at segments phases[m] (each in 0..S-1).
    static HopSchedule for_phases(const std::vector<int>& phases, int num_segments);
    // Where model index `slot` starts iteration `iteration` in fit_multiple's rotation of at most
    // num_segments models: segment (slot - iteration) mod S. (hopper.fit: slot 0.)
    static int phase(int64_t slot, uint64_t iteration, int num_segments);

    int num_models() const { return models_; }
    int num_segments() const { return segments_; }
    int ring_size() const { return ring_; }           // K
    int hops_per_iteration() const { return ring_; }  // K

    // Ring position of model m during hop h (0-based) of iteration i (0-based). A phased ring is
    // one iteration's: its positions do not depend on i.
    int position(int model, int iteration, int hop) const;
    // Segment index (0..S-1) model m trains on during hop h of iteration i, or -1 if it waits.
    int segment(int model, int iteration, int hop) const;
    // Position a model moves to from position p at a hop.
    int next_position(int p) const { return (p + 1) % ring_; }
    // Segment index of position p, or -1 if p is a waiting position.
    int segment_of_position(int p) const {
        return ring_segments_.empty() ? (p < segments_ ? p : -1) : ring_segments_[p];
    }
    // Segment indices model m visits in iteration i, in order (S entries).
    std::vector<int> visiting_order(int model, int iteration) const;

private:
    int models_;
    int segments_;
    int ring_;
    // Phased rings only: the segment of each position (-1: waiting) and each model's first position.
    std::vector<int> ring_segments_;
    std::vector<int> starts_;
};

}  // namespace hopper
