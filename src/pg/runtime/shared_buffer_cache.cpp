// The server's cache of detoasted packed buffers (see shared_buffer_cache.h).
//
// Layout: one struct in the server's shared memory (Control) followed by the region, a dynamic
// shared memory area created in place (dsa_create_in_place) whose size limit is the region, so it
// never asks the operating system for more. In the area: a dshash table from Key to Entry, and each
// value (CachedValueHeader, then the varlena). Pins and the last-used clock are atomics in the
// value's header; a value is freed only under its table partition's exclusive lock with no pin, and
// pinned only under that partition's lock, so a pinned value is never freed. Eviction and reset run
// one at a time under Control::lock.
#include "pg/runtime/shared_buffer_cache.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <map>
#include <unordered_map>
#include <vector>

#include <sys/mman.h>

#include "hopper/buffer_check.h"
#include "pg/common/datum.h"
#include "pg/common/guard.h"
#include "pg/runtime/run_area.h"

extern "C" {
#include "access/detoast.h"
#include "access/genam.h"
#include "access/heapam.h"
#include "access/heaptoast.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/toast_internals.h"
#include "access/transam.h"
#include "catalog/pg_am_d.h"
#include "lib/dshash.h"
#include "storage/bufmgr.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
}

namespace hopper::pg {

namespace {

int setting_shared_buffer_cache_mb = 256;

constexpr const char* kTranche = "hopper_buffer_cache";
constexpr uint64 kPage = 4096;
// An entry kept longer ago than this many transactions is fetched again: a raw xmin names one
// transaction within 2^31 of the counter (see the header).
constexpr uint64 kMaxAgeXids = uint64(1) << 31;

// The TOAST value's identity: no padding, so memcmp/memhash see only these.
struct Key {
    Oid database;
    Oid tablespace;
    Oid relfile;  // the TOAST relation's file
    Oid toastrel;
    Oid value;
};

struct Entry {
    Key key;
    int32 rawsize;  // the pointer's sizes: values differ if these do
    uint32 extinfo;
    dsa_pointer value;       // CachedValueHeader, then the varlena
    ItemPointerData chunk0;  // where the value's first chunk was when it was fetched
    TransactionId chunk0_xmin;
    uint64 kept_at;  // the next full transaction id then
};

struct Control {
    LWLock* lock;  // initialisation, eviction and reset, one at a time
    bool initialized;
    int tranche;
    dshash_table_handle table;
    uint64 region_bytes;
    uint64 region_offset;  // from this struct to the page-aligned region
    pg_atomic_uint64 used_bytes, buffers, clock, runs, kept, warm_reads, evicted, stale;
};

Control* control = nullptr;
shmem_request_hook_type prev_shmem_request_hook = nullptr;
shmem_startup_hook_type prev_shmem_startup_hook = nullptr;
// This process's view (kept for its life once attached).
dsa_area* area = nullptr;
dshash_table* table = nullptr;

uint64 region_bytes() { return uint64(setting_shared_buffer_cache_mb) * 1024 * 1024; }

Size shmem_bytes() { return add_size(MAXALIGN(sizeof(Control)), add_size(kPage, Size(region_bytes()))); }

void shmem_request() {
    if (prev_shmem_request_hook) prev_shmem_request_hook();
    if (setting_shared_buffer_cache_mb <= 0) return;
    RequestAddinShmemSpace(shmem_bytes());
    RequestNamedLWLockTranche(kTranche, 1);
}

void shmem_startup() {
    if (prev_shmem_startup_hook) prev_shmem_startup_hook();
    if (setting_shared_buffer_cache_mb <= 0) return;
    LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
    bool found = false;
    control = static_cast<Control*>(ShmemInitStruct("hopper buffer cache", shmem_bytes(), &found));
    if (!found) {
        // The region itself is left untouched: its pages are mapped as buffers are kept.
        std::memset(control, 0, sizeof(Control));
        control->lock = &GetNamedLWLockTranche(kTranche)[0].lock;
        control->region_bytes = region_bytes();
        const uintptr_t start = reinterpret_cast<uintptr_t>(control) + MAXALIGN(sizeof(Control));
        control->region_offset = (start + kPage - 1) / kPage * kPage - reinterpret_cast<uintptr_t>(control);
        pg_atomic_init_u64(&control->used_bytes, 0);
        pg_atomic_init_u64(&control->buffers, 0);
        pg_atomic_init_u64(&control->clock, 0);
        pg_atomic_init_u64(&control->runs, 0);
        pg_atomic_init_u64(&control->kept, 0);
        pg_atomic_init_u64(&control->warm_reads, 0);
        pg_atomic_init_u64(&control->evicted, 0);
        pg_atomic_init_u64(&control->stale, 0);
    }
    LWLockRelease(AddinShmemInitLock);
}

dshash_parameters table_parameters(int tranche) { return bytes_keyed_table(sizeof(Key), sizeof(Entry), tranche); }

// Releases an LWLock taken through call() when its scope ends, normally or by an exception.
class HeldLock {
public:
    explicit HeldLock(LWLock* lock) : lock_(lock) {
        call([&] { LWLockAcquire(lock_, LW_EXCLUSIVE); });
    }
    ~HeldLock() { LWLockRelease(lock_); }
    HeldLock(const HeldLock&) = delete;
    HeldLock& operator=(const HeldLock&) = delete;

private:
    LWLock* lock_;
};

// Attaches this process to the area (the first process to use it creates it); false without the cache.
bool attach() {
    if (table) return true;
    if (!control) return false;
    void* region = reinterpret_cast<char*>(control) + control->region_offset;
    HeldLock held(control->lock);
    call([&] {
        // The area's and table's handles outlive every transaction of the process.
        MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
        dsa_area* a = nullptr;
        dshash_table* t = nullptr;
        if (!control->initialized) {
            const int tranche = LWLockNewTrancheId();
            LWLockRegisterTranche(tranche, kTranche);
            a = dsa_create_in_place(region, Size(control->region_bytes), tranche, nullptr);
            dsa_set_size_limit(a, Size(control->region_bytes));  // never a segment beyond the region
            dsa_pin(a);  // lives as long as the server's shared memory, whoever detaches
            const dshash_parameters params = table_parameters(tranche);
            t = dshash_create(a, &params, nullptr);
            control->table = dshash_get_hash_table_handle(t);
            control->tranche = tranche;
            control->initialized = true;
        } else {
            LWLockRegisterTranche(control->tranche, kTranche);
            a = dsa_attach_in_place(region, nullptr);
            const dshash_parameters params = table_parameters(control->tranche);
            t = dshash_attach(a, &params, control->table, nullptr);
        }
        // The area counts its processes: this one lets go when it exits.
        on_shmem_exit(dsa_on_shmem_exit_release_in_place, PointerGetDatum(region));
        MemoryContextSwitchTo(old);
        area = a;
        table = t;
    });
    return true;
}

CachedValueHeader* header_of(dsa_pointer dp) { return static_cast<CachedValueHeader*>(dsa_get_address(area, dp)); }

Key key_of(Relation toast, const varatt_external& p) {
    Key k;
    std::memset(&k, 0, sizeof k);
    k.database = MyDatabaseId;
    k.tablespace = toast->rd_node.spcNode;
    k.relfile = toast->rd_node.relNode;
    k.toastrel = p.va_toastrelid;
    k.value = p.va_valueid;
    return k;
}

uint64 next_xid() { return U64FromFullTransactionId(ReadNextFullTransactionId()); }

bool same_pointer(const Entry& e, const varatt_external& p) {
    return e.rawsize == p.va_rawsize && e.extinfo == p.va_extinfo;
}

// A copy of the entry for `key`, if there is one.
bool find_copy(const Key& key, Entry& out) {
    return call([&] {
        auto* e = static_cast<Entry*>(dshash_find(table, &key, false));
        if (!e) return false;
        out = *e;
        dshash_release_lock(table, e);
        return true;
    });
}

void pin_locked(CachedValueHeader* h) {
    pg_atomic_fetch_add_u32(&h->pins, 1);
    pg_atomic_write_u64(&h->last_used, pg_atomic_add_fetch_u64(&control->clock, 1));
}

// The entry for `key` (copied into `seen`), pinned if it was kept for the same pointer sizes.
enum class Lookup { Absent, Pinned, Differs };
Lookup find_and_pin(const Key& key, const varatt_external& p, Entry& seen) {
    return call([&] {
        auto* e = static_cast<Entry*>(dshash_find(table, &key, false));
        if (!e) return Lookup::Absent;
        seen = *e;
        const bool same = same_pointer(*e, p);
        if (same) pin_locked(header_of(e->value));
        dshash_release_lock(table, e);
        return same ? Lookup::Pinned : Lookup::Differs;
    });
}

// Values may take all of the region but a sixteenth (1 MB at least), left to the area's own
// bookkeeping and the table (an entry and its share of the buckets is ~100 bytes; the smallest value
// stored out of line ~2 kB): the table's allocations cannot fail softly.
uint64 value_limit() {
    const uint64 region = control->region_bytes;
    return region - std::min(region / 2, std::max(region / 16, uint64(1) << 20));
}

// What an allocation of `bytes` takes: beyond 8 kB whole 4 kB pages.
uint64 allocated_bytes(uint64 bytes) { return bytes > 8192 ? (bytes + 4095) / 4096 * 4096 : bytes; }

// `bytes` for a value if they fit within value_limit(), counted in used_bytes until freed.
dsa_pointer try_allocate(uint64 bytes) {
    const uint64 taken = allocated_bytes(bytes);
    if (pg_atomic_fetch_add_u64(&control->used_bytes, taken) + taken > value_limit()) {
        pg_atomic_fetch_sub_u64(&control->used_bytes, taken);
        return InvalidDsaPointer;
    }
    const dsa_pointer dp =
        call([&] { return dsa_allocate_extended(area, Size(bytes), DSA_ALLOC_HUGE | DSA_ALLOC_NO_OOM); });
    if (!DsaPointerIsValid(dp)) pg_atomic_fetch_sub_u64(&control->used_bytes, taken);
    return dp;
}

// Frees a value's allocation (header and varlena); under a table lock or not, it raises nothing.
void free_allocation(dsa_pointer dp) {
    const uint64 taken = allocated_bytes(sizeof(CachedValueHeader) + header_of(dp)->size);
    dsa_free(area, dp);
    pg_atomic_fetch_sub_u64(&control->used_bytes, taken);
}

// Frees the entry for `key` if it still holds `value` and nobody holds that; the bytes that freed
// (0: it did not).
uint64 drop_if_unpinned(const Key& key, dsa_pointer value) {
    return call([&] {
        auto* e = static_cast<Entry*>(dshash_find(table, &key, true));
        if (!e) return uint64(0);
        CachedValueHeader* h = header_of(e->value);
        if (e->value != value || pg_atomic_read_u32(&h->pins) != 0) {
            dshash_release_lock(table, e);
            return uint64(0);
        }
        const uint64 freed = allocated_bytes(sizeof(CachedValueHeader) + h->size);
        free_allocation(e->value);
        dshash_delete_entry(table, e);
        pg_atomic_fetch_sub_u64(&control->buffers, 1);
        return freed;
    });
}

// `bytes` in the area, evicting the least recently used unpinned values as needed; invalid when
// even that leaves no room. Evicting frees a thirty-second of the room at least: one value at a time,
// each eviction scanning and sorting the whole table, preprocess of Fashion-MNIST into a cache full
// of an earlier one's buffers spent 7% of its backend's time here.
dsa_pointer allocate(uint64 bytes) {
    dsa_pointer dp = try_allocate(bytes);
    if (DsaPointerIsValid(dp)) return dp;
    struct Candidate {
        uint64 last_used;
        Key key;
        dsa_pointer value;
    };
    // Room for every entry there is now and more, so that push_back never allocates under a lock.
    std::vector<Candidate> candidates;
    candidates.reserve(std::size_t(pg_atomic_read_u64(&control->buffers)) + 64);
    HeldLock held(control->lock);
    dp = try_allocate(bytes);  // another process may have made room meanwhile
    if (DsaPointerIsValid(dp)) return dp;
    call([&] {
        dshash_seq_status scan;
        dshash_seq_init(&scan, table, false);
        while (auto* e = static_cast<Entry*>(dshash_seq_next(&scan))) {
            CachedValueHeader* h = header_of(e->value);
            if (pg_atomic_read_u32(&h->pins) == 0 && candidates.size() < candidates.capacity())
                candidates.push_back({pg_atomic_read_u64(&h->last_used), e->key, e->value});
        }
        dshash_seq_term(&scan);
    });
    std::sort(candidates.begin(), candidates.end(),
              [](const Candidate& a, const Candidate& b) { return a.last_used < b.last_used; });
    const uint64 batch = std::max(allocated_bytes(bytes), value_limit() / 32);
    uint64 freed = 0;
    for (const Candidate& c : candidates) {
        const uint64 dropped = drop_if_unpinned(c.key, c.value);
        if (dropped == 0) continue;
        pg_atomic_fetch_add_u64(&control->evicted, 1);
        freed += dropped;
        if (freed < batch) continue;
        dp = try_allocate(bytes);
        if (DsaPointerIsValid(dp)) return dp;
    }
    return try_allocate(bytes);
}

// Whether the value's first chunk is still the tuple the entry was fetched from, inserted by the
// same transaction, and (stored uncompressed) holding the bytes the cache begins with.
bool first_chunk_holds(Relation toast, const Entry& e, CachedValueHeader* h, bool compressed) {
    return call([&] {
        const BlockNumber block = ItemPointerGetBlockNumber(&e.chunk0);
        if (block >= RelationGetNumberOfBlocks(toast)) return false;
        Buffer buffer = ReadBuffer(toast, block);
        LockBuffer(buffer, BUFFER_LOCK_SHARE);
        const Page page = BufferGetPage(buffer);
        const OffsetNumber offset = ItemPointerGetOffsetNumber(&e.chunk0);
        bool holds = false;
        if (offset >= FirstOffsetNumber && offset <= PageGetMaxOffsetNumber(page)) {
            const ItemId item = PageGetItemId(page, offset);
            if (ItemIdIsNormal(item)) {
                HeapTupleData tuple;
                tuple.t_data = reinterpret_cast<HeapTupleHeader>(PageGetItem(page, item));
                tuple.t_len = ItemIdGetLength(item);
                tuple.t_self = e.chunk0;
                tuple.t_tableOid = RelationGetRelid(toast);
                if (HeapTupleHeaderGetRawXmin(tuple.t_data) == e.chunk0_xmin) {
                    const TupleDesc desc = RelationGetDescr(toast);
                    bool null_id = true, null_seq = true, null_data = true;
                    const Datum id = heap_getattr(&tuple, 1, desc, &null_id);
                    const Datum seq = heap_getattr(&tuple, 2, desc, &null_seq);
                    holds = !null_id && !null_seq && DatumGetObjectId(id) == e.key.value && DatumGetInt32(seq) == 0;
                    if (holds && !compressed) {
                        const Datum data = heap_getattr(&tuple, 3, desc, &null_data);
                        const varlena* chunk = reinterpret_cast<const varlena*>(DatumGetPointer(data));
                        // Chunks are stored plain (a short header at most).
                        holds =
                            !null_data && !VARATT_IS_EXTERNAL(chunk) && !VARATT_IS_COMPRESSED(chunk) &&
                            uint64(VARSIZE_ANY_EXHDR(chunk)) <= h->size - VARHDRSZ &&
                            std::memcmp(VARDATA_ANY(chunk), VARDATA(cached_varlena(h)), VARSIZE_ANY_EXHDR(chunk)) == 0;
                    }
                }
            }
        }
        UnlockReleaseBuffer(buffer);
        return holds;
    });
}

// Where the value's first chunk is, and the transaction that inserted it (an index probe, as the
// fetch itself makes); false if there is none.
bool locate_first_chunk(Relation toast, Oid value, ItemPointerData& tid, TransactionId& xmin) {
    return call([&] {
        Relation* indexes = nullptr;
        int num_indexes = 0;
        const int valid = toast_open_indexes(toast, AccessShareLock, &indexes, &num_indexes);
        ScanKeyData keys[2];
        ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(value));
        ScanKeyInit(&keys[1], 2, BTEqualStrategyNumber, F_INT4EQ, Int32GetDatum(0));
        SnapshotData toast_snapshot;
        init_toast_snapshot(&toast_snapshot);
        SysScanDesc scan = systable_beginscan_ordered(toast, indexes[valid], &toast_snapshot, 2, keys);
        const HeapTuple t = systable_getnext_ordered(scan, ForwardScanDirection);
        const bool found = t != nullptr;
        if (found) {
            tid = t->t_self;
            xmin = HeapTupleHeaderGetRawXmin(t->t_data);
        }
        systable_endscan_ordered(scan);
        toast_close_indexes(indexes, num_indexes, AccessShareLock);
        return found;
    });
}

// Fetches the value into `into` (detoasted_bytes(p) bytes): stored uncompressed, straight from TOAST;
// compressed, detoasted and copied.
void fetch_value(Relation toast, const varatt_external& p, varlena* into) {
    call([&] {
        if (!stored_compressed(p)) {
            const int32 size = int32(VARATT_EXTERNAL_GET_EXTSIZE(p));
            SET_VARSIZE(into, size + VARHDRSZ);
            table_relation_fetch_toast_slice(toast, p.va_valueid, size, 0, size, into);
            return;
        }
        alignas(8) char datum[VARHDRSZ_EXTERNAL + sizeof(varatt_external)];
        SET_VARTAG_EXTERNAL(datum, VARTAG_ONDISK);
        std::memcpy(VARDATA_EXTERNAL(datum), &p, sizeof(varatt_external));
        varlena* plain = pg_detoast_datum(reinterpret_cast<varlena*>(datum));
        std::memcpy(into, plain, VARSIZE(plain));
        pfree(plain);
    });
}

// A value being kept: its entry-to-be and its allocation (header filled, bytes to come).
struct NewValue {
    Entry entry;
    CachedValueHeader* header = nullptr;
    uint64 bytes = 0;  // header and varlena
};

// Maps the pages of [start, start + bytes) into this process before it writes there: a process
// maps the server's shared memory page by page as it touches it, and a write fault maps one page
// where a read fault maps sixteen (fault-around). Writing Fashion-MNIST's 190 MB into pages the
// backend had not touched took 90 ms of CPU in write faults, 30 ms after MADV_POPULATE_READ (Linux
// 5.14; on older kernels the call fails and writing faults as before).
void map_for_writing(void* start, uint64 bytes) {
    constexpr int kPopulateRead = 22;  // MADV_POPULATE_READ, which older C libraries do not name
    const uintptr_t page = 4096;
    const uintptr_t from = reinterpret_cast<uintptr_t>(start) / page * page;
    const uintptr_t to = (reinterpret_cast<uintptr_t>(start) + bytes + page - 1) / page * page;
    (void)madvise(reinterpret_cast<void*>(from), to - from, kPopulateRead);
}

// Allocates room for `p`'s value (evicting as needed); false when there is none.
bool new_value(const Key& key, const varatt_external& p, uint64 run_token, NewValue& v) {
    const uint64 size = detoasted_bytes(p);
    v.bytes = sizeof(CachedValueHeader) + size;
    // A value that would take most of the region is not worth evicting everything else for.
    if (v.bytes > control->region_bytes / 2) return false;
    std::memset(&v.entry, 0, sizeof v.entry);
    v.entry.key = key;
    v.entry.rawsize = p.va_rawsize;
    v.entry.extinfo = p.va_extinfo;
    v.entry.kept_at = next_xid();
    v.entry.value = allocate(v.bytes);
    if (!DsaPointerIsValid(v.entry.value)) return false;
    CachedValueHeader* h = v.header = header_of(v.entry.value);
    pg_atomic_init_u32(&h->pins, 0);
    pg_atomic_init_u32(&h->finite_checked, 0);
    pg_atomic_init_u64(&h->last_used, 0);
    h->kept_by = run_token;
    h->size = size;
    map_for_writing(h, v.bytes);
    return true;
}

void free_value(const NewValue& v) {
    call([&] { free_allocation(v.entry.value); });
}

// check_finite_buffer, done once for the cache while the value is still this process's own, so that
// readers find it done: a pass over every value, ~20 ms of Fashion-MNIST's first iteration. A value
// that is not a float array or holds one that is not finite stays unchecked: its reader reports it.
void check_finite_quietly(CachedValueHeader* h) {
    try {
        const Float4Matrix m = float4_matrix(PointerGetDatum(cached_varlena(h)), "buffer");
        check_finite_buffer(m.data, {m.rows, m.cols}, "buffer");
        pg_atomic_write_u32(&h->finite_checked, 1);
    } catch (const std::exception&) {}
}

// Publishes a fetched value, pinned if `pin`. Another process may have kept the same value meanwhile
// (the same pointer, first chunk and transaction): then that one is the value (`fetched` false). A
// different value someone holds under the key (stale, pinned): nothing (the reader reads uncached).
SharedAcquired publish(const NewValue& v, const varatt_external& p, bool pin) {
    check_finite_quietly(v.header);
    SharedAcquired out;
    dsa_pointer unused = InvalidDsaPointer;
    call([&] {
        bool found = false;
        auto* in = static_cast<Entry*>(dshash_find_or_insert(table, &v.entry.key, &found));
        if (!found) {
            *in = v.entry;
            if (pin) pin_locked(v.header);
            else pg_atomic_write_u64(&v.header->last_used, pg_atomic_add_fetch_u64(&control->clock, 1));
            out.header = v.header;
            out.value = v.entry.value;
            out.fetched = true;
            pg_atomic_fetch_add_u64(&control->buffers, 1);
            pg_atomic_fetch_add_u64(&control->kept, 1);
        } else if (same_pointer(*in, p) &&
                   ItemPointerEquals(&in->chunk0, const_cast<ItemPointerData*>(&v.entry.chunk0)) &&
                   in->chunk0_xmin == v.entry.chunk0_xmin) {
            if (pin) pin_locked(header_of(in->value));
            out.header = header_of(in->value);
            out.value = in->value;
            unused = v.entry.value;  // kept by the other (this fetch was in vain: counted as found)
        } else {
            unused = v.entry.value;
        }
        dshash_release_lock(table, in);
        if (DsaPointerIsValid(unused)) free_allocation(unused);
    });
    return out;
}

// Whether the cache may keep values of this TOAST relation: its checks read heap tuples.
bool cacheable(Relation toast) { return toast->rd_rel->relam == HEAP_TABLE_AM_OID; }

// Keeps `p`'s value, pinned, in an allocation of the area; the relation is open.
SharedAcquired acquire_in(Relation toast, const varatt_external& p, uint64 run_token) {
    if (!cacheable(toast)) return {};
    const Key key = key_of(toast, p);
    const bool compressed = stored_compressed(p);
    Entry seen;
    const Lookup found = find_and_pin(key, p, seen);
    if (found == Lookup::Pinned) {
        // Pinned, so its bytes stay while they are checked.
        CachedValueHeader* h = header_of(seen.value);
        if (next_xid() - seen.kept_at < kMaxAgeXids && first_chunk_holds(toast, seen, h, compressed)) {
            SharedAcquired out;
            out.header = h;
            out.value = seen.value;
            return out;
        }
        shared_buffer_unpin(seen.value);
    }
    if (found != Lookup::Absent) {
        pg_atomic_fetch_add_u64(&control->stale, 1);
        drop_if_unpinned(key, seen.value);
    }
    NewValue v;
    // No first chunk: the value is not there; the caller's detoasting says so as PostgreSQL does.
    Entry probe;
    if (!locate_first_chunk(toast, p.va_valueid, probe.chunk0, probe.chunk0_xmin)) return {};
    if (!new_value(key, p, run_token, v)) return {};
    v.entry.chunk0 = probe.chunk0;
    v.entry.chunk0_xmin = probe.chunk0_xmin;
    try {
        fetch_value(toast, p, cached_varlena(v.header));
        return publish(v, p, true);
    } catch (...) {  // fetching failed, or the table found no room for the entry
        free_value(v);
        throw;
    }
}

// A value a scan is filling.
struct Filling {
    NewValue v;
    Key key;
    const varatt_external* pointer = nullptr;
    int32 size = 0;  // data bytes
    int32 chunks = 0;
    int32 got = 0;
    bool allocated = false;
    bool skipped = false;  // in the cache already, or its chunks do not add up
    bool published = false;
    std::vector<bool> seen;
};

// Keeps, by one sequential scan of `toast` (its end first if `backward`), the values stored
// uncompressed among `pointers` that the cache lacks, unpinned, marked kept_by. A value gets its room
// when the scan meets its first chunk, unless the cache has it by then (another process scanning
// from the other end, or a reader, kept it: the two meet without doing each other's work), and is
// published as soon as its last chunk has been read, so readers find it at once. Stops at the first
// value that finds no room, and early if *stop becomes nonzero. A value whose chunks do not add up is
// left to the readers' own fetch, which reports what is wrong as PostgreSQL does. Returns how many it
// kept.
std::size_t load_by_scan(Relation toast, const std::vector<varatt_external>& pointers, uint64 kept_by, bool backward,
                         pg_atomic_uint32* stop) {
    if (!cacheable(toast)) return 0;
    std::vector<Filling> filling;
    filling.reserve(pointers.size());
    std::unordered_map<Oid, std::size_t> by_value;
    by_value.reserve(pointers.size());
    for (const varatt_external& p : pointers) {
        if (stored_compressed(p) || by_value.count(p.va_valueid)) continue;
        if (sizeof(CachedValueHeader) + detoasted_bytes(p) > control->region_bytes / 2) continue;
        Filling f;
        f.key = key_of(toast, p);
        Entry e;
        if (find_copy(f.key, e) && same_pointer(e, p)) continue;
        f.pointer = &p;
        f.size = int32(VARATT_EXTERNAL_GET_EXTSIZE(p));
        f.chunks = (f.size + int32(TOAST_MAX_CHUNK_SIZE) - 1) / int32(TOAST_MAX_CHUNK_SIZE);
        by_value.emplace(p.va_valueid, filling.size());
        filling.push_back(std::move(f));
    }
    if (filling.empty()) return 0;
    std::size_t kept = 0;
    const TupleDesc desc = RelationGetDescr(toast);
    const ScanDirection direction = backward ? BackwardScanDirection : ForwardScanDirection;
    // An MVCC snapshot, which lets the scan check a page's tuples at once (page mode): a fresh one,
    // which sees the chunks of every value a row visible now points to, those this transaction wrote
    // included; during a parallel operation (a run's hops in its group of processes, a parallel
    // worker), where no new one may be taken, the statement's, which sees those the statement's rows
    // point to. The chunks of one value OID are those of one value whatever the snapshot (no two
    // values share an OID while either has a chunk left); a value not seen whole is left to its readers.
    Snapshot snapshot = call([]() -> Snapshot {
        if (!IsInParallelMode()) return RegisterSnapshot(GetLatestSnapshot());
        return ActiveSnapshotSet() ? RegisterSnapshot(GetActiveSnapshot()) : nullptr;
    });
    if (!snapshot) return 0;
    TableScanDesc scan = nullptr;
    auto end_scan = [&] {
        call([&] {
            if (scan) table_endscan(scan);
            UnregisterSnapshot(snapshot);
        });
    };
    try {
        scan = call([&] { return table_beginscan_strat(toast, snapshot, 0, nullptr, true, !backward); });
        HeapTuple pending = nullptr;  // a chunk of a value that needs room first
        std::size_t left = filling.size();
        long to_publish = -1;
        bool done = false;
        while (!done && left > 0 && !(stop && pg_atomic_read_u32(stop) != 0)) {
            // Copies chunks until a value is complete (to publish) or needs room, or a batch is done.
            // Plain C in the call: nothing in it throws.
            call([&] {
                CHECK_FOR_INTERRUPTS();
                for (int n = 0; n < 1024; ++n) {
                    const HeapTuple t = pending ? pending : heap_getnext(scan, direction);
                    pending = nullptr;
                    if (!t) {
                        done = true;
                        return;
                    }
                    bool null_id = true, null_seq = true, null_data = true;
                    const Oid id = DatumGetObjectId(fastgetattr(t, 1, desc, &null_id));
                    const auto it = null_id ? by_value.end() : by_value.find(id);
                    if (it == by_value.end()) continue;
                    Filling& f = filling[it->second];
                    if (f.skipped) continue;
                    if (!f.allocated) {
                        pending = t;
                        to_publish = -long(it->second) - 2;  // room wanted for this one
                        return;
                    }
                    const int32 seq = DatumGetInt32(fastgetattr(t, 2, desc, &null_seq));
                    const auto* chunk =
                        reinterpret_cast<const varlena*>(DatumGetPointer(fastgetattr(t, 3, desc, &null_data)));
                    const int32 expected =
                        seq == f.chunks - 1 ? f.size - seq * int32(TOAST_MAX_CHUNK_SIZE) : int32(TOAST_MAX_CHUNK_SIZE);
                    if (null_seq || null_data || seq < 0 || seq >= f.chunks || f.seen[seq] ||
                        VARATT_IS_EXTERNAL(chunk) || VARATT_IS_COMPRESSED(chunk) ||
                        int32(VARSIZE_ANY_EXHDR(chunk)) != expected) {
                        f.skipped = true;
                        --left;
                        continue;
                    }
                    std::memcpy(VARDATA(cached_varlena(f.v.header)) + std::size_t(seq) * TOAST_MAX_CHUNK_SIZE,
                                VARDATA_ANY(chunk), std::size_t(expected));
                    f.seen[seq] = true;
                    if (seq == 0) {
                        f.v.entry.chunk0 = t->t_self;
                        f.v.entry.chunk0_xmin = HeapTupleHeaderGetRawXmin(t->t_data);
                    }
                    if (++f.got == f.chunks) {
                        to_publish = long(it->second);
                        return;
                    }
                }
            });
            if (to_publish >= 0) {  // complete
                Filling& f = filling[std::size_t(to_publish)];
                --left;
                f.published = true;
                try {
                    if (publish(f.v, *f.pointer, false).fetched) ++kept;
                } catch (...) {
                    f.published = false;
                    throw;
                }
            } else if (to_publish <= -2) {  // its first chunk met: room for it, unless it is kept by now
                Filling& f = filling[std::size_t(-to_publish - 2)];
                Entry e;
                if (find_copy(f.key, e) && same_pointer(e, *f.pointer)) {
                    f.skipped = true;
                    --left;
                } else if (!new_value(f.key, *f.pointer, kept_by, f.v)) {
                    done = true;  // no room: the readers fetch the rest
                } else {
                    f.allocated = true;
                    f.seen.assign(std::size_t(f.chunks), false);
                    SET_VARSIZE(cached_varlena(f.v.header), f.size + VARHDRSZ);
                }
            }
            to_publish = -1;
        }
    } catch (...) {
        for (const Filling& f : filling)
            if (f.allocated && !f.published) free_value(f.v);
        end_scan();
        throw;
    }
    end_scan();
    for (const Filling& f : filling)
        if (f.allocated && !f.published) free_value(f.v);
    return kept;
}

// Runs f(relation) with the TOAST relation open, closing it on every path.
template <class F>
auto with_toast(Oid toastrel, F f) -> decltype(f(Relation{})) {
    Relation toast = call([&] { return table_open(toastrel, AccessShareLock); });
    try {
        auto r = f(toast);
        call([&] { table_close(toast, AccessShareLock); });
        return r;
    } catch (...) {
        call([&] { table_close(toast, AccessShareLock); });
        throw;
    }
}

}  // namespace

void shared_buffer_cache_init() {
    // PostgreSQL allows PGC_POSTMASTER settings only while preloading (it raises FATAL otherwise):
    // loaded on demand, hopper shows the setting read-only and has no cache.
    const GucContext context = process_shared_preload_libraries_in_progress ? PGC_POSTMASTER : PGC_INTERNAL;
    DefineCustomIntVariable(
        "hopper.shared_buffer_cache_mb",
        "Size of the server's cache of detoasted packed buffers kept from one training call to the next, in "
        "megabytes (0: none).",
        "Reserved in shared memory at server start; needs hopper in shared_preload_libraries. preprocess keeps the "
        "buffers it writes, and fit, fit_multiple and fit_data_parallel keep those they read, so the next call on the "
        "same packed table skips fetching them from TOAST. The least recently used buffers no running call holds make "
        "room for new ones. Without it (or not preloaded) each call keeps its buffers only until it ends.",
        &setting_shared_buffer_cache_mb, 256, 0, 1024 * 1024 - 1, context, GUC_UNIT_MB, nullptr, nullptr, nullptr);
    if (!process_shared_preload_libraries_in_progress) return;
    prev_shmem_request_hook = shmem_request_hook;
    shmem_request_hook = shmem_request;
    prev_shmem_startup_hook = shmem_startup_hook;
    shmem_startup_hook = shmem_startup;
}

bool shared_buffer_cache_enabled() { return control != nullptr; }

bool shared_buffer_attach() { return attach(); }

uint64 shared_buffer_cache_size() { return control ? control->region_bytes : 0; }

uint64 shared_buffer_cache_run_token() { return control ? pg_atomic_add_fetch_u64(&control->runs, 1) : 0; }

SharedAcquired shared_buffer_acquire(const varatt_external& pointer, uint64 run_token) {
    if (!attach()) return {};
    return with_toast(pointer.va_toastrelid, [&](Relation toast) { return acquire_in(toast, pointer, run_token); });
}

SharedPut shared_buffer_put(Relation toast, const varatt_external& pointer, const varlena* value) {
    if (!attach() || !cacheable(toast) || stored_compressed(pointer) ||
        uint64(VARSIZE_ANY(value)) != detoasted_bytes(pointer) || VARATT_IS_EXTENDED(value))
        return SharedPut::Skipped;
    const Key key = key_of(toast, pointer);
    Entry seen;
    if (find_copy(key, seen) && same_pointer(seen, pointer)) return SharedPut::Skipped;
    Entry probe;
    if (!locate_first_chunk(toast, pointer.va_valueid, probe.chunk0, probe.chunk0_xmin)) return SharedPut::Skipped;
    NewValue v;
    if (!new_value(key, pointer, 0, v)) return SharedPut::NoRoom;
    v.entry.chunk0 = probe.chunk0;
    v.entry.chunk0_xmin = probe.chunk0_xmin;
    std::memcpy(cached_varlena(v.header), value, VARSIZE(value));
    try {
        return publish(v, pointer, false).fetched ? SharedPut::Kept : SharedPut::Skipped;
    } catch (...) {  // the table found no room for the entry
        free_value(v);
        throw;
    }
}

void shared_buffer_unpin(dsa_pointer value) {
    if (area) pg_atomic_fetch_sub_u32(&header_of(value)->pins, 1);
}

CachedValueHeader* shared_buffer_header(dsa_pointer value) { return header_of(value); }

std::vector<bool> shared_buffer_holds(const std::vector<varatt_external>& pointers) {
    std::vector<bool> out(pointers.size(), false);
    if (pointers.empty() || !attach()) return out;
    std::map<Oid, std::vector<std::size_t>> by_relation;
    for (std::size_t i = 0; i < pointers.size(); ++i) by_relation[pointers[i].va_toastrelid].push_back(i);
    for (const auto& [relation, which] : by_relation)
        with_toast(relation, [&](Relation toast) {
            for (std::size_t i : which) {
                Entry e;
                out[i] = find_copy(key_of(toast, pointers[i]), e) && same_pointer(e, pointers[i]);
            }
            return true;
        });
    return out;
}

// Pointers by TOAST relation, the relations in the order they first appear.
std::vector<std::pair<Oid, std::vector<varatt_external>>> by_relation(const std::vector<varatt_external>& pointers) {
    std::vector<std::pair<Oid, std::vector<varatt_external>>> out;
    std::map<Oid, std::size_t> index;
    for (const varatt_external& p : pointers) {
        const auto [it, added] = index.emplace(p.va_toastrelid, out.size());
        if (added) out.emplace_back(p.va_toastrelid, std::vector<varatt_external>{});
        out[it->second].second.push_back(p);
    }
    return out;
}

void shared_buffer_keep(const std::vector<varatt_external>& pointers) {
    if (pointers.empty() || !attach()) return;
    // Those stored uncompressed (as preprocess stores them) by one scan of their TOAST relation;
    // others (a user changed the column's storage) one by one.
    shared_buffer_scan(pointers, 0, false, nullptr);
    for (const varatt_external& p : pointers) {
        if (!stored_compressed(p)) continue;
        check_for_interrupts();
        const SharedAcquired got = shared_buffer_acquire(p, 0);
        if (!got.header) return;
        shared_buffer_unpin(got.value);
    }
}

std::size_t shared_buffer_scan(const std::vector<varatt_external>& pointers, uint64 kept_by, bool backward,
                               pg_atomic_uint32* stop) {
    if (pointers.empty() || !attach()) return 0;
    std::size_t kept = 0;
    for (const auto& [relation, some] : by_relation(pointers))
        kept +=
            with_toast(relation, [&](Relation toast) { return load_by_scan(toast, some, kept_by, backward, stop); });
    return kept;
}

SharedBufferCacheStats shared_buffer_cache_stats() {
    SharedBufferCacheStats s;
    if (!control) return s;
    s.enabled = true;
    s.size_bytes = control->region_bytes;
    s.used_bytes = pg_atomic_read_u64(&control->used_bytes);
    s.buffers = pg_atomic_read_u64(&control->buffers);
    s.kept = pg_atomic_read_u64(&control->kept);
    s.warm_reads = pg_atomic_read_u64(&control->warm_reads);
    s.evicted = pg_atomic_read_u64(&control->evicted);
    s.stale = pg_atomic_read_u64(&control->stale);
    if (s.buffers > 0 && attach()) {
        uint64 pinned = 0;
        call([&] {
            dshash_seq_status scan;
            dshash_seq_init(&scan, table, false);
            while (auto* e = static_cast<Entry*>(dshash_seq_next(&scan)))
                if (pg_atomic_read_u32(&header_of(e->value)->pins) != 0) ++pinned;
            dshash_seq_term(&scan);
        });
        s.pinned = pinned;
    }
    return s;
}

void shared_buffer_count_warm_read() {
    if (control) pg_atomic_fetch_add_u64(&control->warm_reads, 1);
}

uint64 shared_buffer_cache_reset() {
    if (!control || !attach()) return 0;
    HeldLock held(control->lock);
    uint64 freed = 0;
    call([&] {
        dshash_seq_status scan;
        dshash_seq_init(&scan, table, true);
        while (auto* e = static_cast<Entry*>(dshash_seq_next(&scan))) {
            CachedValueHeader* h = header_of(e->value);
            if (pg_atomic_read_u32(&h->pins) != 0) continue;
            free_allocation(e->value);
            dshash_delete_current(&scan);
            ++freed;
        }
        dshash_seq_term(&scan);
    });
    pg_atomic_fetch_sub_u64(&control->buffers, freed);
    return freed;
}

}  // namespace hopper::pg
