// C++ objects whose lifetime follows a PostgreSQL memory context: when the context is reset or
// deleted (normally, or because the transaction aborted), the object is destroyed. Used for
// aggregate states and per-call caches that hold Eigen matrices allocated with new/malloc.
#pragma once

#include <memory>

#include "pg/common/guard.h"

namespace hopper::pg {

template <typename T>
T* own_in_context(MemoryContext context, std::unique_ptr<T> object) {
    T* raw = object.get();
    call([&] {
        auto* cb = (MemoryContextCallback*)MemoryContextAlloc(context, sizeof(MemoryContextCallback));
        cb->func = [](void* arg) { delete static_cast<T*>(arg); };
        cb->arg = raw;
        MemoryContextRegisterResetCallback(context, cb);
    });
    object.release();
    return raw;
}

}  // namespace hopper::pg
