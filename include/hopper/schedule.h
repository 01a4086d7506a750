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
#pragma once

#include <vector>

namespace hopper {

class HopSchedule {
public:
    HopSchedule(int num_models, int num_segments);

    int num_models() const { return models_; }
    int num_segments() const { return segments_; }
    int ring_size() const { return ring_; }           // K
    int hops_per_iteration() const { return ring_; }  // K

    // Ring position of model m during hop h (0-based) of iteration i (0-based).
    int position(int model, int iteration, int hop) const;
    // Segment index (0..S-1) model m trains on during hop h of iteration i, or -1 if it waits.
    int segment(int model, int iteration, int hop) const;
    // Position a model moves to from position p at a hop.
    int next_position(int p) const { return (p + 1) % ring_; }
    // Segment index of position p, or -1 if p is a waiting position.
    int segment_of_position(int p) const { return p < segments_ ? p : -1; }
    // Segment indices model m visits in iteration i, in order (S entries).
    std::vector<int> visiting_order(int model, int iteration) const;

private:
    int models_;
    int segments_;
    int ring_;
};

}  // namespace hopper
