// hopper.tensorboard_scalars: scalars (a run's learning curves) as a TensorBoard event file on the
// database server, as Keras' TensorBoard callback writes them (hopper_madlib's madlib_keras_fit
// takes MADlib's callbacks=[TensorBoard(log_dir=...)] through it). The file's bytes are the core's
// (tensorboard.h); writing a server file needs what COPY TO a file needs: superuser or
// pg_write_server_files.
#include <cstdint>
#include <string>
#include <vector>

#include "hopper/error.h"
#include "hopper/tensorboard.h"
#include "pg/common/datum.h"
#include "pg/common/guard.h"

extern "C" {
#include "miscadmin.h"
#include "catalog/pg_authid.h"
#include "common/file_perm.h"
#include "storage/fd.h"
#include "utils/acl.h"
#include "utils/timestamp.h"
}

using namespace hopper;
using namespace hopper::pg;

namespace {

int64_t files_written = 0;  // this backend's, in the file names (several per second stay apart)

}  // namespace

// tensorboard_scalars(log_dir, tags text[], steps bigint[], values float8[], wall_times float8[])
// -> text: one event file in log_dir (created if missing), a scalar event per element of the parallel
// arrays (tag, step, value; wall time in seconds since 1970, default now); returns the file's path.
HOPPER_FUNCTION(tensorboard_scalars) {
    const std::string log_dir = arg_text(fcinfo, 0, "log_dir");
    for (int i = 1; i <= 3; ++i) require_not_null(fcinfo, i, i == 1 ? "tags" : i == 2 ? "steps" : "values");
    const std::vector<std::string> tags = text_array_to_vector(PG_GETARG_DATUM(1), "tags");
    const std::vector<int64_t> steps = int_array_to_vector(PG_GETARG_DATUM(2), "steps");
    const std::vector<double> values = float_array_to_vector(PG_GETARG_DATUM(3), "values");
    const bool has_times = PG_NARGS() > 4 && !PG_ARGISNULL(4);
    const std::vector<double> times =
        has_times ? float_array_to_vector(PG_GETARG_DATUM(4), "wall_times") : std::vector<double>{};
    if (log_dir.empty() || log_dir[0] != '/')
        fail(ErrorKind::InvalidParameter, "log_dir must be an absolute path", "It is \"" + log_dir + "\".",
             "Name a directory of the database server, e.g. '/tmp/tensorboard/run1'.");
    if (steps.size() != tags.size() || values.size() != tags.size() || (has_times && times.size() != tags.size()))
        fail(ErrorKind::InvalidParameter, "tags, steps, values and wall_times must have as many elements",
             "There are " + std::to_string(tags.size()) + " tags, " + std::to_string(steps.size()) + " steps, " +
                 std::to_string(values.size()) + " values" +
                 (has_times ? " and " + std::to_string(times.size()) + " wall times." : "."));
    const bool allowed =
        call([&] { return superuser() || has_privs_of_role(GetUserId(), ROLE_PG_WRITE_SERVER_FILES); });
    if (!allowed)
        fail(
            ErrorKind::Privilege, "permission denied to write TensorBoard event files",
            "Writing files on the database server needs superuser or the pg_write_server_files role, as COPY TO a file does.",
            "Ask a superuser to grant pg_write_server_files.");

    const double now = call([] {
        return double(GetCurrentTimestamp()) / USECS_PER_SEC +
               double(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY;
    });
    std::string bytes = tensorboard::record(tensorboard::file_version_event(now));
    for (size_t i = 0; i < tags.size(); ++i)
        bytes += tensorboard::record(
            tensorboard::scalar_event(has_times ? times[i] : now, steps[i], tags[i], float(values[i])));

    char host[256] = "localhost";
    if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    host[sizeof host - 1] = '\0';
    std::string dir = log_dir;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    const std::string path = dir + "/events.out.tfevents." + std::to_string(int64_t(now)) + "." + host + "." +
                             std::to_string(MyProcPid) + "." + std::to_string(files_written++) + ".v2";
    std::vector<char> dir_buf(dir.begin(), dir.end());
    dir_buf.push_back('\0');
    call([&] {
        if (pg_mkdir_p(dir_buf.data(), pg_dir_create_mode) != 0 && errno != EEXIST)
            ereport(ERROR, (errcode_for_file_access(), errmsg("could not create directory \"%s\": %m", dir.c_str())));
        FILE* f = AllocateFile(path.c_str(), PG_BINARY_W);
        if (f == nullptr)
            ereport(ERROR,
                    (errcode_for_file_access(), errmsg("could not open file \"%s\" for writing: %m", path.c_str())));
        if (fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || FreeFile(f) != 0)
            ereport(ERROR, (errcode_for_file_access(), errmsg("could not write file \"%s\": %m", path.c_str())));
    });
    PG_RETURN_DATUM(string_to_text(path));
}
