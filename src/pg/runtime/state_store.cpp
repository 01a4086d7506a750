// Model states passed between hops by reference (see state_store.h).
#include "pg/runtime/state_store.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "hopper/error.h"
#include "pg/common/guard.h"
#include "pg/runtime/run_area.h"

namespace hopper::pg {
namespace {

constexpr char kRefMagic[8] = {'H', 'O', 'P', 'P', 'E', 'R', 'S', 'R'};

// A reference as stored in model_state (host byte order: it never leaves the server).
struct Reference {
    char magic[8];
    int32_t leader_pid;
    int32_t store;
    int32_t slot;
    int32_t reserved;
    uint64_t generation;
};
static_assert(sizeof(Reference) == 32, "a reference is 32 bytes");

// One model's state in the area. Only the process training the model writes its slot during a
// statement; the backend writes and reads slots between statements.
struct Slot {
    dsa_pointer data;
    uint64 capacity;
    uint64 size;
    uint64 generation;
};

std::string make_reference(int store, int slot, uint64_t generation, int32_t leader_pid) {
    Reference r{};
    std::memcpy(r.magic, kRefMagic, sizeof kRefMagic);
    r.leader_pid = leader_pid;
    r.store = store;
    r.slot = slot;
    r.generation = generation;
    return std::string(reinterpret_cast<const char*>(&r), sizeof r);
}

[[noreturn]] void outside_run() {
    fail(ErrorKind::ObjectNotInPrerequisiteState, "model state reference used outside its training run",
         "hopper passes model states between the statements of a training run by reference; the reference is "
         "valid only inside that run.");
}

Slot* slots_of(RunArea& area, int store) {
    return static_cast<Slot*>(dsa_get_address(area.area, area.control->state_slots[store]));
}

// Copies `state` into the slot, growing it when needed; false when the area has no room.
bool write_slot(RunArea& area, Slot& slot, std::string_view state) {
    if (state.size() > slot.capacity) {
        bool ok = true;
        call([&] {
            const dsa_pointer p = dsa_allocate_extended(area.area, state.size(), DSA_ALLOC_HUGE | DSA_ALLOC_NO_OOM);
            if (!DsaPointerIsValid(p)) {
                ok = false;
                return;
            }
            if (DsaPointerIsValid(slot.data)) dsa_free(area.area, slot.data);
            slot.data = p;
            slot.capacity = state.size();
        });
        if (!ok) return false;
    }
    std::memcpy(dsa_get_address(area.area, slot.data), state.data(), state.size());
    slot.size = state.size();
    pg_write_barrier();
    ++slot.generation;
    return true;
}

}  // namespace

bool is_state_reference(std::string_view value) {
    return value.size() == sizeof(Reference) && std::memcmp(value.data(), kRefMagic, sizeof kRefMagic) == 0;
}

ReferencedState resolve_state_reference(std::string_view reference) {
    Reference r;
    std::memcpy(&r, reference.data(), sizeof r);
    RunArea* area = active_run_area();
    if (!area || r.leader_pid != area->control->leader_pid || r.store < 0 || r.store >= kMaxStateStores ||
        !DsaPointerIsValid(area->control->state_slots[r.store]) || r.slot < 0 ||
        r.slot >= area->control->state_slot_count[r.store])
        outside_run();
    Slot& slot = slots_of(*area, r.store)[r.slot];
    pg_read_barrier();
    if (slot.generation != r.generation || !DsaPointerIsValid(slot.data))
        fail(ErrorKind::Internal, "stale model state reference",
             "Slot " + std::to_string(r.slot) + " holds generation " + std::to_string(slot.generation) +
                 ", the reference names generation " + std::to_string(r.generation) + ".");
    ReferencedState out;
    out.bytes = std::string_view(static_cast<const char*>(dsa_get_address(area->area, slot.data)), slot.size);
    out.store = r.store;
    out.slot = r.slot;
    out.generation = r.generation;
    return out;
}

std::string store_trained_state(const ReferencedState& from, std::string_view state) {
    RunArea* area = active_run_area();
    if (!area) outside_run();
    Slot& slot = slots_of(*area, from.store)[from.slot];
    if (slot.generation != from.generation)
        fail(ErrorKind::Internal,
             "model state slot " + std::to_string(from.slot) + " was written twice in one statement");
    if (!write_slot(*area, slot, state))
        fail(ErrorKind::OutOfMemory, "out of shared memory for a trained model state",
             "The run's shared area could not grow by " + std::to_string(state.size()) + " bytes.",
             "Free room in /dev/shm, or lower hopper.buffer_cache_mb.");
    return make_reference(from.store, from.slot, slot.generation, area->control->leader_pid);
}

std::string current_state_reference(int store, int slot) {
    RunArea* area = active_run_area();
    if (!area || store < 0 || store >= kMaxStateStores || !DsaPointerIsValid(area->control->state_slots[store]) ||
        slot < 0 || slot >= area->control->state_slot_count[store])
        outside_run();
    pg_read_barrier();
    return make_reference(store, slot, slots_of(*area, store)[slot].generation, area->control->leader_pid);
}

std::unique_ptr<StateStore> StateStore::open(int num_models, uint64_t state_bytes) {
    RunArea* area = own_run_area();
    if (!area || num_models <= 0) return nullptr;
    int index = -1;
    for (int i = 0; i < kMaxStateStores && index < 0; ++i)
        if (!DsaPointerIsValid(area->control->state_slots[i])) index = i;
    if (index < 0) return nullptr;
    // Room for every state and the slot array, or nothing: a run either passes all its states by
    // reference or none (half would save little and cost the same planning).
    const uint64 needed = uint64(num_models) * (state_bytes + sizeof(Slot)) + 4096;
    if (shm_room(needed) < needed) return nullptr;
    grow_run_area_limit(needed);
    dsa_pointer slots = InvalidDsaPointer;
    call([&] {
        slots = dsa_allocate_extended(area->area, sizeof(Slot) * std::size_t(num_models),
                                      DSA_ALLOC_HUGE | DSA_ALLOC_NO_OOM | DSA_ALLOC_ZERO);
    });
    if (!DsaPointerIsValid(slots)) return nullptr;
    Slot* s = static_cast<Slot*>(dsa_get_address(area->area, slots));
    for (int i = 0; i < num_models; ++i) s[i].data = InvalidDsaPointer;
    area->control->state_slots[index] = slots;
    area->control->state_slot_count[index] = num_models;
    return std::unique_ptr<StateStore>(new StateStore(index, num_models));
}

StateStore::~StateStore() {
    RunArea* area = own_run_area();
    if (!area) return;  // the area is gone, and its memory with it
    const dsa_pointer slots = area->control->state_slots[index_];
    area->control->state_slots[index_] = InvalidDsaPointer;
    area->control->state_slot_count[index_] = 0;
    Slot* s = static_cast<Slot*>(dsa_get_address(area->area, slots));
    // dsa_free raises no error for valid pointers; a destructor must not throw.
    for (int i = 0; i < slots_; ++i)
        if (DsaPointerIsValid(s[i].data)) dsa_free(area->area, s[i].data);
    dsa_free(area->area, slots);
}

std::string StateStore::put(int slot, std::string_view state) {
    RunArea* area = own_run_area();
    if (!area || slot < 0 || slot >= slots_) fail(ErrorKind::Internal, "no model state slot " + std::to_string(slot));
    Slot& s = slots_of(*area, index_)[slot];
    if (!write_slot(*area, s, state)) return std::string(state);
    return make_reference(index_, slot, s.generation, area->control->leader_pid);
}

std::string StateStore::get(std::string_view value) const {
    if (!is_state_reference(value)) return std::string(value);
    return std::string(resolve_state_reference(value).bytes);
}

}  // namespace hopper::pg
