#include "pg/common/resource_limits.h"

#include <sys/statvfs.h>
#include <unistd.h>

#include "hopper/error.h"
#include "hopper/resources.h"
#include "pg/common/guard.h"
#include "pg/common/settings.h"

extern "C" {
#include "miscadmin.h"
}

namespace hopper::pg {

uint64_t memory_budget_bytes() {
    if (setting_max_memory_mb > 0) return uint64_t(setting_max_memory_mb) << 20;
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return uint64_t(4) << 30;  // unknown: assume a small machine
    return uint64_t(pages) * uint64_t(page) / 4;
}

uint64_t packed_table_budget_bytes() {
    if (setting_max_packed_table_mb > 0) return uint64_t(setting_max_packed_table_mb) << 20;
    struct statvfs fs;
    if (statvfs(DataDir, &fs) != 0) return uint64_t(64) << 30;  // unknown: a modest default
    return uint64_t(fs.f_bavail) * uint64_t(fs.f_frsize) / 4;
}

void check_memory(uint64_t bytes, const std::string& what, const std::string& hint) {
    const uint64_t budget = memory_budget_bytes();
    if (bytes <= budget) return;
    const BytesApart shown = format_bytes_apart(bytes, budget);
    fail(ErrorKind::OutOfMemory, what + " would need about " + shown.need + " of memory",
         "hopper.max_memory_mb allows " + shown.limit +
             (setting_max_memory_mb > 0 ? "." : " (a quarter of this machine's memory)."),
         hint + (hint.empty() ? "" : " ") + "Or raise hopper.max_memory_mb, if the machine has the memory.");
}

void check_packed_table_size(uint64_t bytes, const std::string& what, const std::string& hint) {
    const uint64_t budget = packed_table_budget_bytes();
    if (bytes <= budget) return;
    const BytesApart shown = format_bytes_apart(bytes, budget);
    fail(ErrorKind::DiskFull, what + " would take about " + shown.need + " of disk",
         "hopper.max_packed_table_mb allows " + shown.limit +
             (setting_max_packed_table_mb > 0 ? "." : " (a quarter of the free space of the database's file system)."),
         hint + (hint.empty() ? "" : " ") + "Or raise hopper.max_packed_table_mb, if the disk has the room.");
}

}  // namespace hopper::pg
