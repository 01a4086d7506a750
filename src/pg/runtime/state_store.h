// Model states passed between hops by reference, on plain PostgreSQL.
//
// A model state (weights, optimizer moments, counters: 1.2 MB for an Adam MLP 784-128-10) went
// through the working tables twice per hop: written by the training statement into model_output
// (TOAST: ~600 chunk inserts), read and written again by the hop into model_input, for trained and
// waiting models alike. On Fashion-MNIST with 4 models on 2 segments that was ~16 of the ~35 ms a hop
// cost besides training (bench/). So within one run the states live in the run's shared area
// (run_area.h), one slot per model, and the working tables carry a 32-byte reference instead: the
// training statement's aggregate reads the state from its slot and writes the trained state back,
// in the worker that trains it. The protocol stays the same two statements over the same two tables.
//
// A reference names its run (leader pid), store, slot and generation; every write bumps the slot's
// generation, so a stale reference (a bug) is caught instead of training an old state. Outside its
// run a reference means nothing: using one there is an error. Citus keeps states in the tables
// (its segments are other servers), and a store that finds no room in /dev/shm passes states by value.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace hopper::pg {

// Whether a model_state value is a reference (a real state is never 32 bytes and starts with
// another magic number).
bool is_state_reference(std::string_view value);

// A reference resolved in the training statement: the state's bytes in the run's area (valid until
// the slot is written), and where to write the trained state.
struct ReferencedState {
    std::string_view bytes;
    int store = -1;
    int slot = -1;
    uint64_t generation = 0;
};
// Resolves a reference in this process (the run's backend or one of its parallel workers); raises
// when there is no such run here or the reference is stale.
ReferencedState resolve_state_reference(std::string_view reference);
// Writes a trained state into the slot `from` was read from; returns the new reference.
std::string store_trained_state(const ReferencedState& from, std::string_view state);
// The reference to what slot `slot` of store `store` holds now (the run's backend or one of its
// parallel workers: the segment workers of hop_workers.h hand models on by slot, not by reference).
std::string current_state_reference(int store, int slot);

// The backend's side: slots for one run's models.
class StateStore {
public:
    // A store for `num_models` states of up to `state_bytes` each, or nullptr when there is no run
    // area in this backend, no free store, or no room for them in shared memory.
    static std::unique_ptr<StateStore> open(int num_models, uint64_t state_bytes);
    ~StateStore();
    StateStore(const StateStore&) = delete;
    StateStore& operator=(const StateStore&) = delete;

    // Puts a model's state into its slot and returns the reference to it (the state itself when it
    // is larger than the slot was planned for and the area has no room).
    std::string put(int slot, std::string_view state);
    // The state a value names: a reference's state (copied out), or the value itself.
    std::string get(std::string_view value) const;
    // Which of the run's stores this is (for current_state_reference).
    int index() const { return index_; }

private:
    StateStore(int index, int slots) : index_(index), slots_(slots) {}
    int index_;
    int slots_;
};

}  // namespace hopper::pg
